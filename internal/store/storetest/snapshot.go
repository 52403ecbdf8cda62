package storetest

import (
	"errors"
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// snapshot is everything a store shows through its read methods, for
// checking that a commit wrote nothing (compare before and after) or that a
// reopened store kept everything.
type snapshot struct {
	Pipelines []store.Pipeline
	Calendars []store.Calendar
	Sensors   []store.Sensor
	Runs      []run.Run
	Ledger    []store.LedgerEntry
	Baselines []store.Baseline
	Markers   []store.Marker
	Timers    []store.Timer
	Events    []event.Event
}

// takeSnapshot reads the whole store. Sensors, ledgers and baselines can
// only be read per pipeline or per period, so the caller names the
// pipelines and periods it used.
func takeSnapshot(t *testing.T, s store.Store, pipelines []string, periods []run.Key) snapshot {
	t.Helper()
	ctx := t.Context()
	var sn snapshot
	sn.Pipelines = must(s.PipelineList(ctx)).get(t)
	sn.Calendars = must(s.CalendarList(ctx)).get(t)
	for _, p := range pipelines {
		sn.Sensors = append(sn.Sensors, must(s.SensorList(ctx, p)).get(t)...)
	}
	sn.Runs = must(s.RunList(ctx, store.RunListParams{})).get(t)
	for _, k := range periods {
		sn.Ledger = append(sn.Ledger, must(s.LedgerList(ctx, k)).get(t)...)
		b, err := s.BaselineGet(ctx, k)
		switch {
		case err == nil:
			sn.Baselines = append(sn.Baselines, b)
		case !errors.Is(err, store.ErrNotFound):
			t.Fatalf("BaselineGet(%v): %v", k, err)
		}
	}
	sn.Markers = must(s.MarkerList(ctx, store.MarkerListParams{})).get(t)
	// An explicit limit, so this does not depend on how a backend reads
	// limit 0 (checked on its own in the timer tests).
	sn.Timers = must(s.TimerListDue(ctx, farFuture, 1<<20)).get(t)
	sn.Events = allEvents(t, s)
	return sn
}
