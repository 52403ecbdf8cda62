package dynamodb

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// Stream records: which table a record came from (Role) and what its item
// is (Decode), so that the AWS runtime routes records without knowing a
// key.

// Role is the table a stream record came from.
type Role int

// The tables with a stream.
const (
	RoleControl Role = iota + 1
	RoleJobLog
	RoleEvents
)

func (r Role) String() string {
	switch r {
	case RoleControl:
		return "control"
	case RoleJobLog:
		return "joblog"
	case RoleEvents:
		return "events"
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// RoleOf reads the table name out of a stream ARN
// (arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>) and
// says which of t it is; false for another table or a malformed ARN.
func RoleOf(t Tables, eventSourceARN string) (Role, bool) {
	_, rest, ok := strings.Cut(eventSourceARN, ":table/")
	if !ok {
		return 0, false
	}
	name, _, ok := strings.Cut(rest, "/stream/")
	if !ok || name == "" {
		return 0, false
	}
	switch name {
	case t.Control:
		return RoleControl, true
	case t.JobLog:
		return RoleJobLog, true
	case t.Events:
		return RoleEvents, true
	}
	return 0, false
}

// Record is what a stream record's item is: one of the types below.
type Record interface{ isRecord() }

// SensorItem is a sensor inbox item (PIPELINE#<id> / SENSOR#<key>), written
// by anyone: its fields flat (every attribute but PK, SK and ttl), or
// under `data` (a map, and the only other attribute) — the seed's
// quickstart. Removed is set for a deleted item (no image); Expired too
// when the table's TTL deleted it rather than a writer (DecodeLambda).
type SensorItem struct {
	PipelineID, Key string
	Data            sensor.Object
	Removed         bool
	Expired         bool
}

// ConfigItem is a pipeline's row (PIPELINE#<id> / CONFIG): its config
// changed.
type ConfigItem struct{ PipelineID string }

// RerunRequest is a rerun asked for by writing PIPELINE#<id> /
// RERUN_REQUEST#<schedule>#<period> (attributes reason and, optionally,
// requestId).
type RerunRequest struct {
	PipelineID, ScheduleID, Period, Reason string
	// ID names the request: the writer's requestId attribute when it
	// set one, else the item's key and content (so the same item
	// delivered twice is one request, and the item written again with
	// another reason is another).
	ID string
}

// JobReport is a job-log item (PIPELINE#<id> /
// JOB#<schedule>#<period>#<millis>): a job's own report of its outcome.
// Event is success, fail or timeout (other words pass through: the
// caller decides); At is the key's millis.
type JobReport struct {
	PipelineID, ScheduleID, Period, Event, Category, Message, RunID string
	At                                                              time.Time
	// ID names the report uniquely (its sort key): the same item
	// delivered twice is one report.
	ID string
}

// EventItem is an event of the log; External is set for one the event
// sink stored (AppendExternal), which the outbox does not publish again.
type EventItem struct {
	Event    event.Event
	External bool
}

// TimerItem is one of the engine's durable timers (the store's own item):
// armed or moved (its new state), or Removed (only Timer.Key is set). The
// AWS runtime realises timers from these records — a run's step by a Step
// Functions execution, an SLA or cron timer by a Scheduler schedule.
type TimerItem struct {
	Timer   store.Timer
	Removed bool
}

// AlertConfigItem is the project's stored alert config (PROJECT /
// ALERTS, AlertConfig): it changed. The sla-monitor arms the end timers
// of the windows it now holds.
type AlertConfigItem struct{}

// Ignored is an item the store keeps for itself (runs, timers, markers,
// sensor state, counters, …) or one no part of Interlock reads.
type Ignored struct{ PK, SK string }

func (SensorItem) isRecord()      {}
func (ConfigItem) isRecord()      {}
func (RerunRequest) isRecord()    {}
func (JobReport) isRecord()       {}
func (EventItem) isRecord()       {}
func (TimerItem) isRecord()       {}
func (Ignored) isRecord()         {}
func (AlertConfigItem) isRecord() {}

// ItemError is Decode's error: the item cannot be what its key says. It
// names the item, and its pipeline when the key has one, so the caller can
// report it (SENSOR_REJECTED and the like) and move on.
type ItemError struct {
	PK, SK     string
	PipelineID string // from PIPELINE#<id>; empty for other keys
	Reason     string
}

func (e *ItemError) Error() string {
	return fmt.Sprintf("dynamodb: item %s / %s: %s", e.PK, e.SK, e.Reason)
}

// Decode classifies one stream record by its keys and its new image (nil
// or empty on REMOVE). It returns one of the Record types, or an
// *ItemError when the item cannot be what its key says (a SENSOR# item
// whose data is not an object, a JOB# key without schedule and period).
// An unknown event type is not an error: events decode as they are.
func Decode(role Role, keys, image map[string]types.AttributeValue) (Record, error) {
	pk, okPK := keys[attrPK].(*types.AttributeValueMemberS)
	sk, okSK := keys[attrSK].(*types.AttributeValueMemberS)
	if !okPK || !okSK {
		return nil, &ItemError{PK: textOf(keys[attrPK]), SK: textOf(keys[attrSK]), Reason: "the keys PK and SK are not both strings"}
	}
	d := decoder{pk: pk.Value, sk: sk.Value, image: image}
	if id, ok := strings.CutPrefix(d.pk, pkPipelinePrefix); ok {
		d.pipeline = id
	}
	switch role {
	case RoleControl:
		return d.control()
	case RoleJobLog:
		return d.jobLog()
	case RoleEvents:
		return d.events()
	}
	return nil, d.fail("a stream record of no known table (role %d)", int(role))
}

// DecodeLambda is Decode of a Lambda stream record.
func DecodeLambda(role Role, rec events.DynamoDBEventRecord) (Record, error) {
	keys, err := lambdaImage(rec.Change.Keys)
	if err != nil {
		return nil, &ItemError{PK: lambdaText(rec.Change.Keys[attrPK]), SK: lambdaText(rec.Change.Keys[attrSK]), Reason: "keys: " + err.Error()}
	}
	// A REMOVE (a TTL deletion too) carries no new image.
	image, err := lambdaImage(rec.Change.NewImage)
	if err != nil {
		d := decoder{pk: textOf(keys[attrPK]), sk: textOf(keys[attrSK])}
		d.pipeline, _ = strings.CutPrefix(d.pk, pkPipelinePrefix)
		return nil, d.fail("new image: %v", err)
	}
	r, err := Decode(role, keys, image)
	if si, ok := r.(SensorItem); ok && si.Removed && expiredByTTL(rec) {
		si.Expired = true
		r = si
	}
	return r, err
}

// expiredByTTL reports whether a REMOVE record is the table's TTL deleting
// the item: DynamoDB names itself as the record's user identity.
func expiredByTTL(rec events.DynamoDBEventRecord) bool {
	u := rec.UserIdentity
	return u != nil && u.Type == "Service" && u.PrincipalID == "dynamodb.amazonaws.com"
}

type decoder struct {
	pk, sk, pipeline string
	image            map[string]types.AttributeValue
}

func (d decoder) fail(format string, args ...any) *ItemError {
	p := ""
	if strings.HasPrefix(d.pk, pkPipelinePrefix) {
		p = d.pipeline
	}
	return &ItemError{PK: d.pk, SK: d.sk, PipelineID: p, Reason: fmt.Sprintf(format, args...)}
}

func (d decoder) removed() bool { return len(d.image) == 0 }

func (d decoder) ignored() (Record, error) { return Ignored{PK: d.pk, SK: d.sk}, nil }

func (d decoder) control() (Record, error) {
	if key, ok := strings.CutPrefix(d.pk, pkTimerPrefix); ok && d.sk == skTimer {
		if d.removed() {
			return TimerItem{Timer: store.Timer{Key: key}, Removed: true}, nil
		}
		t, err := decodeTimer(d.image)
		if err != nil {
			return nil, d.fail("%v", err)
		}
		return TimerItem{Timer: t}, nil
	}
	if d.pk == pkProject && d.sk == skAlertConfig {
		return AlertConfigItem{}, nil
	}
	if !strings.HasPrefix(d.pk, pkPipelinePrefix) {
		return d.ignored() // calendars, silences
	}
	switch {
	case d.sk == skConfig:
		return ConfigItem{PipelineID: d.pipeline}, nil
	case strings.HasPrefix(d.sk, skSensorPrefix):
		return d.sensor(strings.TrimPrefix(d.sk, skSensorPrefix))
	case strings.HasPrefix(d.sk, skRerunReqPrefix):
		if d.removed() {
			return d.ignored()
		}
		return d.rerunRequest(strings.TrimPrefix(d.sk, skRerunReqPrefix))
	}
	return d.ignored()
}

// sensor reads an inbox item: flat, or under `data` when data is its only
// attribute besides the keys and ttl (the rule sensor.Unwrap applies to a
// JSON body). `data` alone but not a map cannot be a sensor.
func (d decoder) sensor(key string) (Record, error) {
	if key == "" {
		return nil, d.fail("the sensor key after SENSOR# is empty")
	}
	if d.removed() {
		return SensorItem{PipelineID: d.pipeline, Key: key, Removed: true}, nil
	}
	data, err := inboxData(d.image)
	if err != nil {
		return nil, d.fail("%v", err)
	}
	return SensorItem{PipelineID: d.pipeline, Key: key, Data: data}, nil
}

// inboxData is a sensor inbox item's data.
func inboxData(image map[string]types.AttributeValue) (sensor.Object, error) {
	fields := make(map[string]types.AttributeValue, len(image))
	for k, v := range image {
		if k != attrPK && k != attrSK && k != attrTTL {
			fields[k] = v
		}
	}
	if inner, ok := fields[aData]; ok && len(fields) == 1 {
		m, ok := inner.(*types.AttributeValueMemberM)
		if !ok {
			return sensor.Object{}, fmt.Errorf("its data is %s, not a map (write the fields flat, or under data as a map)", typeName(inner))
		}
		return objectFromNative(m.Value, "data", 1)
	}
	return objectFromNative(fields, "", 1)
}

func (d decoder) rerunRequest(rest string) (Record, error) {
	schedule, period, ok := splitLast(rest)
	if !ok || schedule == "" || period == "" {
		return nil, d.fail("want RERUN_REQUEST#<schedule>#<period>")
	}
	r := readItem(d.image)
	req := RerunRequest{PipelineID: d.pipeline, ScheduleID: schedule, Period: period, Reason: r.str("reason"), ID: r.str("requestId")}
	if r.err != nil {
		return nil, d.fail("%v", r.err)
	}
	if req.ID == "" {
		req.ID = d.sk + "#" + fingerprint(d.image)
	}
	return req, nil
}

func (d decoder) jobLog() (Record, error) {
	if !strings.HasPrefix(d.pk, pkPipelinePrefix) || !strings.HasPrefix(d.sk, skJobPrefix) {
		return d.ignored()
	}
	if d.removed() {
		return d.ignored() // a report expired or deleted: nothing to do
	}
	rest, millis, ok := splitLast(strings.TrimPrefix(d.sk, skJobPrefix))
	schedule, period, ok2 := splitLast(rest)
	ms, err := strconv.ParseInt(millis, 10, 64)
	if !ok || !ok2 || schedule == "" || period == "" || err != nil {
		return nil, d.fail("want JOB#<schedule>#<period>#<epoch millis>")
	}
	r := readItem(d.image)
	rep := JobReport{PipelineID: d.pipeline, ScheduleID: schedule, Period: period, At: time.UnixMilli(ms).UTC(),
		Event: r.str("event"), Category: r.str("category"), Message: r.str("message"), RunID: r.str("runId"), ID: d.sk}
	if r.err != nil {
		return nil, d.fail("%v", r.err)
	}
	return rep, nil
}

func (d decoder) events() (Record, error) {
	if !strings.HasPrefix(d.pk, pkEventShardPrefix) || d.removed() {
		return d.ignored() // counters, external ids, alert records; an expired event
	}
	e, external, err := decodeEvent(d.image)
	if err != nil {
		return nil, d.fail("%v", err)
	}
	return EventItem{Event: e, External: external}, nil
}

// fingerprint is a stable digest of an item's attributes.
func fingerprint(image map[string]types.AttributeValue) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(image)) {
		fmt.Fprintf(h, "%q=", k)
		if v, err := fromNative(image[k], k, 0); err == nil {
			b, _ := v.MarshalJSON()
			h.Write(b)
		} else {
			fmt.Fprintf(h, "%T", image[k])
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func textOf(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func typeName(v types.AttributeValue) string {
	switch v.(type) {
	case *types.AttributeValueMemberS:
		return "a string"
	case *types.AttributeValueMemberN:
		return "a number"
	case *types.AttributeValueMemberBOOL:
		return "a boolean"
	case *types.AttributeValueMemberNULL:
		return "null"
	case *types.AttributeValueMemberL:
		return "a list"
	case *types.AttributeValueMemberB:
		return "binary"
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
		return "a set"
	}
	return fmt.Sprintf("%T", v)
}
