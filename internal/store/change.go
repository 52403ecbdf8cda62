package store

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/interlockhq/interlock/internal/run"
)

// MaxChangeRecords is the most records one Change may touch: DynamoDB's
// TransactWriteItems takes at most 100 actions, and every backend keeps
// to the narrowest one's rule so that a Change valid on SQLite is valid
// everywhere.
const MaxChangeRecords = 100

// ErrInvalidChange: a Change touches a record twice or too many records.
// It is a bug in the caller, never a conflict to retry; nothing was
// written.
var ErrInvalidChange = errors.New("store: invalid change")

// Plan readies c for a backend's Commit, the same way on each: an empty
// Change commits nothing (ok false, err nil), one that Check refuses fails
// with its error, and any other is planned by the backend's plan. ok is
// true when the plan is to be applied.
func Plan[P any](c Change, plan func(Change) (P, error)) (p P, ok bool, err error) {
	if c.Empty() {
		return p, false, nil
	}
	if err := c.Check(); err != nil {
		return p, false, err
	}
	p, err = plan(c)
	return p, err == nil, err
}

// Records is the number of records c touches (writes, deletes and
// checks), the count Check bounds by MaxChangeRecords.
func (c Change) Records() int {
	return len(c.Pipelines) + len(c.Calendars) + len(c.PipelineChecks) + len(c.CalendarChecks) + len(c.Sensors) + len(c.SensorDeletes) +
		len(c.Runs) + len(c.Ledger) + len(c.Baselines) + len(c.BaselineDelete) + len(c.Markers) + len(c.MarkerDeletes) +
		len(c.Timers) + len(c.TimerDeletes) + len(c.Events) + len(c.Backfills) + len(c.Silences)
}

// Check reports whether c can be committed as one transaction on every
// backend: each record (a pipeline, a calendar, a sensor, a run, a ledger
// entry, a baseline, a marker, a timer, an event, an alert delivery
// record) is written, deleted or
// checked at most once, and at most MaxChangeRecords records are touched.
// The counter of each event shard the events go to counts as one record
// (its increment is an action on the counter item on DynamoDB), however
// many events the shard takes.
// DynamoDB refuses two actions on one item in a transaction; the rule is
// enforced everywhere so that SQLite's tests catch what DynamoDB would
// refuse.
func (c Change) Check() error {
	seen := map[string]bool{}
	n := 0
	var dup string
	touch := func(kind string, parts ...any) {
		n++
		id := touchID(kind, parts)
		if seen[id] && dup == "" {
			dup = fmt.Sprintf("%s %v", kind, slices.Clone(parts))
		}
		seen[id] = true
	}
	for _, w := range c.Pipelines {
		touch("pipeline", w.Pipeline.ID)
	}
	for _, k := range c.PipelineChecks {
		touch("pipeline", k.ID)
	}
	for _, w := range c.Calendars {
		touch("calendar", w.Calendar.Name)
	}
	for _, k := range c.CalendarChecks {
		touch("calendar", k.Name)
	}
	for _, w := range c.Sensors {
		touch("sensor", w.Sensor.PipelineID, "/", w.Sensor.Key)
	}
	for _, d := range c.SensorDeletes {
		touch("sensor", d.PipelineID, "/", d.Key)
	}
	for _, w := range c.Runs {
		touch("run", w.Run.Key)
	}
	for _, l := range c.Ledger {
		touch("ledger entry", l.Key, " #", l.Seq)
	}
	for _, b := range c.Baselines {
		touch("baseline", b.Key)
	}
	for _, k := range c.BaselineDelete {
		touch("baseline", k)
	}
	for _, w := range c.Markers {
		touch("marker", w.Marker.Key, " ", w.Marker.Kind)
	}
	for _, d := range c.MarkerDeletes {
		touch("marker", d.Key, " ", d.Kind)
	}
	for _, w := range c.Timers {
		touch("timer", w.Timer.Key)
	}
	for _, d := range c.TimerDeletes {
		touch("timer", d.Key)
	}
	shards := [EventShards]bool{}
	for i, e := range c.Events {
		if sh := EventShard(e.PipelineID); !shards[sh] {
			shards[sh] = true
			n++
		}
		if e.ID == "" {
			touch("event", "#", i) // the store names it
			continue
		}
		touch("event", e.ID)
	}
	for _, w := range c.DeliveryCursors {
		touch("delivery cursor", w.Cursor.Sink)
	}
	for _, w := range c.Leases {
		if w.Lease.Name == "" || w.ExpectVersion < 0 {
			return fmt.Errorf("%w: a lease with no name or a negative expected version", ErrInvalidChange)
		}
		touch("lease", w.Lease.Name)
	}
	for _, w := range c.Backfills {
		if w.Backfill.PipelineID == "" || w.Backfill.ID == "" || w.ExpectVersion < 0 {
			return fmt.Errorf("%w: a backfill with no pipeline or id, or a negative expected version", ErrInvalidChange)
		}
		touch("backfill", w.Backfill.PipelineID, "/", w.Backfill.ID)
	}
	for _, w := range c.Silences {
		if w.Silence.ID == "" || w.ExpectVersion < 0 {
			return fmt.Errorf("%w: a silence with no id or a negative expected version", ErrInvalidChange)
		}
		touch("silence", w.Silence.ID)
	}
	for _, d := range c.DeadLetters {
		touch("dead letter", d.Sink, " ", d.EventID)
	}
	for _, a := range c.AlertThreads {
		touch("alert thread", a.Sink, " ", a.Key)
	}
	for _, a := range c.AlertsSent {
		touch("alert sent", a.Sink, " ", a.Key, " ", a.Type, " ", a.Hash)
	}
	for _, a := range c.AlertsAlerted {
		touch("alert alerted", a.Sink, " ", a.Key)
	}
	if dup != "" {
		return fmt.Errorf("%w: the %s is touched twice in one change", ErrInvalidChange, dup)
	}
	if n > MaxChangeRecords {
		return fmt.Errorf("%w: %d records in one change, at most %d", ErrInvalidChange, n, MaxChangeRecords)
	}
	return nil
}

// touchID is kind + fmt.Sprint(parts...), a record's identity in Check,
// without fmt for the operands every Change has (strings, ints, run
// keys): Sprint's reflection over each touched record was most of a
// Commit's Check. Like Sprint, it puts a space between two operands
// neither of which is a string.
func touchID(kind string, parts []any) string {
	var b strings.Builder
	b.WriteString(kind)
	prevString := false
	for i, p := range parts {
		isString := p != nil && reflect.TypeOf(p).Kind() == reflect.String
		if i > 0 && !isString && !prevString {
			b.WriteByte(' ')
		}
		prevString = isString
		switch x := p.(type) {
		case string:
			b.WriteString(x)
		case int:
			b.WriteString(strconv.Itoa(x))
		case run.Key:
			b.WriteString("{" + x.PipelineID + " " + x.ScheduleID + " " + x.Period + "}")
		default:
			b.WriteString(fmt.Sprint(x))
		}
	}
	return b.String()
}
