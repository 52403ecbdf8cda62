package awsrt

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/textsafe"
)

// An Interlock event on the EventBridge bus has source "interlock",
// detail-type the event type and as detail the envelope detail of
// event.Event.Envelope (the seed's shape: pipelineId, scheduleId, date,
// message, timestamp, level, detail) plus eventId, the event's id in the
// event log. EventBridge gives every PutEvents entry an id of its own, so
// a republished event (the outbox delivers at least once) arrives with a
// new envelope id but the same eventId: consumers deduplicate on eventId,
// and the event sink and the alert dispatcher read it back as the event's
// ID.

// BusDetail is the detail of an Interlock event on the bus.
type BusDetail struct {
	EventID string `json:"eventId"`
	event.EnvelopeDetail
}

// MaxEntrySize is EventBridge's limit on one PutEvents request, and so on
// one entry, by its size formula (entrySize).
const MaxEntrySize = 256 * 1024

// entryOf returns the PutEvents entry of e for bus. An event whose entry
// would exceed MaxEntrySize (a detail map of hundreds of KB) is published
// without its detail map and with its message cut, marked
// "truncated": true: the bus gets its id, type, pipeline and period, and
// the event log keeps it whole.
func entryOf(e event.Event, bus string) (ebtypes.PutEventsRequestEntry, error) {
	d := BusDetail{EventID: e.ID, EnvelopeDetail: e.Envelope().Detail}
	body, err := json.Marshal(d)
	if err != nil {
		return ebtypes.PutEventsRequestEntry{}, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	entry := ebtypes.PutEventsRequestEntry{
		Source: aws.String(event.Source), DetailType: aws.String(string(e.Type)),
		Detail: aws.String(string(body)), EventBusName: aws.String(bus), Time: aws.Time(e.Time),
	}
	if entrySize(entry) <= MaxEntrySize {
		return entry, nil
	}
	cut := struct {
		BusDetail
		Truncated bool `json:"truncated"`
	}{BusDetail: d, Truncated: true}
	cut.Detail = nil
	cut.Message = textsafe.Truncate(cut.Message, 4096)
	body, err = json.Marshal(cut)
	if err != nil {
		return ebtypes.PutEventsRequestEntry{}, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	entry.Detail = aws.String(string(body))
	if entrySize(entry) > MaxEntrySize {
		// Only ids, types or pipeline names of hundreds of KB get here.
		return ebtypes.PutEventsRequestEntry{}, fmt.Errorf("event %s is %d bytes on the bus even without its detail: over EventBridge's %d", e.ID, entrySize(entry), MaxEntrySize)
	}
	return entry, nil
}

// entrySize is EventBridge's size of an entry ("Calculating Amazon
// EventBridge PutEvents event entry size"): 14 bytes for a Time, plus the
// UTF-8 bytes of Source, DetailType, Detail and each resource.
func entrySize(e ebtypes.PutEventsRequestEntry) int {
	n := len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	if e.Time != nil {
		n += 14
	}
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}

// BusEvent is an event as EventBridge delivers it to a target (a Lambda
// payload, an SQS message body): the events.CloudWatchEvent shape, read
// strictly.
type BusEvent struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// ErrBadBusEvent is wrapped by every error about a bus event that cannot
// be read.
var ErrBadBusEvent = errors.New("bad bus event")

// ParseBusEvent reads a bus event; the error says what is wrong with it.
func ParseBusEvent(b []byte) (BusEvent, error) {
	// The strict reader first: no duplicate key, no invalid UTF-8, one
	// value; then the typed decode of what it accepted.
	v, err := sensor.ReadJSON(b)
	if err != nil {
		return BusEvent{}, fmt.Errorf("%w: %w", ErrBadBusEvent, err)
	}
	if _, ok := v.Object(); !ok {
		return BusEvent{}, fmt.Errorf("%w: not a JSON object but %s", ErrBadBusEvent, v.Kind())
	}
	var be BusEvent
	if err := json.Unmarshal(b, &be); err != nil {
		return BusEvent{}, fmt.Errorf("%w: %v", ErrBadBusEvent, err)
	}
	switch {
	case be.Source == "":
		return BusEvent{}, fmt.Errorf("%w: source is missing", ErrBadBusEvent)
	case be.DetailType == "":
		return BusEvent{}, fmt.Errorf("%w: detail-type is missing", ErrBadBusEvent)
	case len(be.Detail) == 0 || string(be.Detail) == "null":
		return BusEvent{}, fmt.Errorf("%w: detail is missing", ErrBadBusEvent)
	case be.Detail[0] != '{':
		return BusEvent{}, fmt.Errorf("%w: detail is not a JSON object", ErrBadBusEvent)
	}
	if be.Time != "" {
		if _, err := time.Parse(time.RFC3339, be.Time); err != nil {
			return BusEvent{}, fmt.Errorf("%w: time %q is not an RFC 3339 time", ErrBadBusEvent, textsafe.Truncate(be.Time, 64))
		}
	}
	return be, nil
}

// Origin is where a bus event comes from.
type Origin int

// Origins.
const (
	// FromOutbox: an Interlock event the outbox published (source
	// interlock, with an eventId); it is in the event log already.
	FromOutbox Origin = iota + 1
	// External: anything else — an INFRA_ALARM an input transformer
	// reshaped, a CloudWatch alarm state change, another source's event.
	External
)

// The CloudWatch alarm state change as the default bus delivers it.
const (
	cloudWatchSource     = "aws.cloudwatch"
	alarmStateChangeType = "CloudWatch Alarm State Change"
	// InfraPipeline is the pipeline id of INFRA_ALARM events (the
	// reference's).
	InfraPipeline = "INFRASTRUCTURE"
)

// Event returns the Interlock event be carries and where it comes from.
// now is the time of an event that carries none.
//
//   - source "interlock" with an eventId: the event the outbox published,
//     with its id, time and fields (FromOutbox).
//   - source "interlock" without one (INFRA_ALARM from an input
//     transformer, §7.5): an event of the detail-type, its fields read
//     from the detail as above (External).
//   - a CloudWatch alarm state change: INFRA_ALARM for pipeline
//     INFRASTRUCTURE, "<alarm>: <state> — <reason>", detail {source:
//     cloudwatch, status: <state>, alarm} (External).
//   - any other source: an event of its detail-type, pipelineId and
//     message read from its detail when they are strings, the whole
//     detail kept as the event's detail (External).
//
// An external event's id is the bus event's id (EventBridge keeps it when
// it retries a delivery); a transformer that passes none gets an id
// hashed from the event's content, so a redelivery has the same one.
func (be BusEvent) Event(now time.Time) (event.Event, Origin, error) {
	var d struct {
		BusDetail
		Detail json.RawMessage `json:"detail"`
	}
	var whole sensor.Object
	if err := json.Unmarshal(be.Detail, &whole); err != nil {
		return event.Event{}, 0, fmt.Errorf("%w: detail: %v", ErrBadBusEvent, err)
	}
	e := event.Event{Type: event.Type(be.DetailType)}
	origin := External
	switch {
	case be.Source == event.Source:
		if err := json.Unmarshal(be.Detail, &d); err != nil {
			return event.Event{}, 0, fmt.Errorf("%w: detail of a %s event: %v", ErrBadBusEvent, event.Source, err)
		}
		e.ID, e.PipelineID, e.ScheduleID, e.Date, e.Message = d.EventID, d.PipelineID, d.ScheduleID, d.Date, d.Message
		if len(d.Detail) > 0 && string(d.Detail) != "null" {
			if err := json.Unmarshal(d.Detail, &e.Detail); err != nil {
				return event.Event{}, 0, fmt.Errorf("%w: detail.detail: %v", ErrBadBusEvent, err)
			}
		}
		if d.Timestamp != "" {
			t, err := time.Parse(time.RFC3339Nano, d.Timestamp)
			if err != nil {
				return event.Event{}, 0, fmt.Errorf("%w: detail.timestamp %q is not an RFC 3339 time", ErrBadBusEvent, textsafe.Truncate(d.Timestamp, 64))
			}
			e.Time = t
		}
		if e.ID != "" {
			origin = FromOutbox
		}
	case be.Source == cloudWatchSource && be.DetailType == alarmStateChangeType:
		e = alarmEvent(whole)
	default:
		e.PipelineID, e.Message = stringField(whole, "pipelineId"), stringField(whole, "message")
		e.Detail = whole
	}
	if e.Time.IsZero() && be.Time != "" {
		e.Time, _ = time.Parse(time.RFC3339, be.Time) // checked by ParseBusEvent
	}
	if e.Time.IsZero() {
		e.Time = now
	}
	e.Time = e.Time.UTC()
	if e.ID == "" {
		e.ID = be.ID
	}
	if e.ID == "" {
		e.ID = contentID(be, whole)
	}
	return e, origin, nil
}

// alarmEvent is the INFRA_ALARM of a CloudWatch alarm state change.
func alarmEvent(d sensor.Object) event.Event {
	name := stringField(d, "alarmName")
	var state, reason string
	if v, ok := d.Get("state"); ok {
		if s, ok := v.Object(); ok {
			state, reason = stringField(s, "value"), stringField(s, "reason")
		}
	}
	msg := name + ": " + state
	if reason != "" {
		msg += " — " + reason
	}
	return event.Event{
		Type: event.InfraAlarm, PipelineID: InfraPipeline, Message: msg,
		Detail: sensor.NewObject(map[string]sensor.Value{
			"source": sensor.StringValue("cloudwatch"), "status": sensor.StringValue(state), "alarm": sensor.StringValue(name),
		}),
	}
}

func stringField(o sensor.Object, name string) string {
	if v, ok := o.Get(name); ok {
		if s, ok := v.Str(); ok {
			return s
		}
	}
	return ""
}
