package store

import (
	"errors"
	"fmt"
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
	seen := map[touched]bool{}
	n := 0
	var dup touched // the first record touched twice; its kind is never empty
	touch := func(t touched) {
		n++
		if seen[t] && dup.kind == "" {
			dup = t
		}
		seen[t] = true
	}
	for _, w := range c.Pipelines {
		touch(touched{kind: "pipeline", a: w.Pipeline.ID})
	}
	for _, k := range c.PipelineChecks {
		touch(touched{kind: "pipeline", a: k.ID})
	}
	for _, w := range c.Calendars {
		touch(touched{kind: "calendar", a: w.Calendar.Name})
	}
	for _, k := range c.CalendarChecks {
		touch(touched{kind: "calendar", a: k.Name})
	}
	for _, w := range c.Sensors {
		touch(touched{kind: "sensor", a: w.Sensor.PipelineID, b: w.Sensor.Key})
	}
	for _, d := range c.SensorDeletes {
		touch(touched{kind: "sensor", a: d.PipelineID, b: d.Key})
	}
	for _, w := range c.Runs {
		touch(touched{kind: "run", run: w.Run.Key})
	}
	for _, l := range c.Ledger {
		touch(touched{kind: "ledger entry", run: l.Key, n: l.Seq, numbered: true})
	}
	for _, b := range c.Baselines {
		touch(touched{kind: "baseline", run: b.Key})
	}
	for _, k := range c.BaselineDelete {
		touch(touched{kind: "baseline", run: k})
	}
	for _, w := range c.Markers {
		touch(touched{kind: "marker", run: w.Marker.Key, a: w.Marker.Kind})
	}
	for _, d := range c.MarkerDeletes {
		touch(touched{kind: "marker", run: d.Key, a: d.Kind})
	}
	for _, w := range c.Timers {
		touch(touched{kind: "timer", a: w.Timer.Key})
	}
	for _, d := range c.TimerDeletes {
		touch(touched{kind: "timer", a: d.Key})
	}
	shards := [EventShards]bool{}
	for i, e := range c.Events {
		if sh := EventShard(e.PipelineID); !shards[sh] {
			shards[sh] = true
			n++
		}
		if e.ID == "" {
			touch(touched{kind: "event", n: i, numbered: true}) // the store names it
			continue
		}
		touch(touched{kind: "event", a: e.ID})
	}
	for _, w := range c.DeliveryCursors {
		touch(touched{kind: "delivery cursor", a: w.Cursor.Sink})
	}
	for _, w := range c.Leases {
		if w.Lease.Name == "" || w.ExpectVersion < 0 {
			return fmt.Errorf("%w: a lease with no name or a negative expected version", ErrInvalidChange)
		}
		touch(touched{kind: "lease", a: w.Lease.Name})
	}
	for _, w := range c.Backfills {
		if w.Backfill.PipelineID == "" || w.Backfill.ID == "" || w.ExpectVersion < 0 {
			return fmt.Errorf("%w: a backfill with no pipeline or id, or a negative expected version", ErrInvalidChange)
		}
		touch(touched{kind: "backfill", a: w.Backfill.PipelineID, b: w.Backfill.ID})
	}
	for _, w := range c.Silences {
		if w.Silence.ID == "" || w.ExpectVersion < 0 {
			return fmt.Errorf("%w: a silence with no id or a negative expected version", ErrInvalidChange)
		}
		touch(touched{kind: "silence", a: w.Silence.ID})
	}
	for _, d := range c.DeadLetters {
		touch(touched{kind: "dead letter", a: d.Sink, b: d.EventID})
	}
	for _, a := range c.AlertThreads {
		touch(touched{kind: "alert thread", a: a.Sink, run: a.Key})
	}
	for _, a := range c.AlertsSent {
		touch(touched{kind: "alert sent", a: a.Sink, run: a.Key, b: string(a.Type), c: a.Hash})
	}
	for _, a := range c.AlertsAlerted {
		touch(touched{kind: "alert alerted", a: a.Sink, run: a.Key})
	}
	if dup.kind != "" {
		return fmt.Errorf("%w: the %s is touched twice in one change", ErrInvalidChange, dup)
	}
	if n > MaxChangeRecords {
		return fmt.Errorf("%w: %d records in one change, at most %d", ErrInvalidChange, n, MaxChangeRecords)
	}
	return nil
}

// touched names one record a Change touches, for Check's seen set: its
// kind and the fields of its key, compared field by field (so "a/"+"b"
// and "a"+"/b" are two records, as they are in every backend). Fields a
// kind has no use for stay zero; numbered marks the kinds whose key
// includes n (a ledger entry's Seq, an unnamed event's index).
type touched struct {
	kind     string
	run      run.Key
	a, b, c  string
	n        int
	numbered bool
}

// String names the record in Check's error: its kind, then the key's
// fields it has.
func (t touched) String() string {
	var b strings.Builder
	b.WriteString(t.kind)
	if t.run != (run.Key{}) {
		b.WriteString(" " + t.run.PipelineID + " " + t.run.ScheduleID + " " + t.run.Period)
	}
	for _, s := range [...]string{t.a, t.b, t.c} {
		if s != "" {
			b.WriteString(" " + s)
		}
	}
	if t.numbered {
		b.WriteString(" #" + strconv.Itoa(t.n))
	}
	return b.String()
}
