package engine_test

import (
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/schedule"
)

// TestARemovedCalendarKeepsStoredConfigsAndRefusesNewOnes: once a
// calendar's file went away, the stored pipeline naming it is refused
// with CONFIG_INVALID but keeps running with its resolution (the removed
// calendar still resolves a stored config), while a document loaded from
// then on may not name it; a removed pipeline keeps no version running
// (pipeline.CalendarResolves, Running, RunningVersion).
func TestARemovedCalendarKeepsStoredConfigsAndRefusesNewOnes(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	d, _ := schedule.ParseDate("2026-03-10")
	if _, err := f.eng.SetCalendars(ctx, map[string]schedule.Calendar{"holidays": {Name: "holidays", Dates: []schedule.Date{d}}}); err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(orders, "  trigger:", "  exclude: {calendar: holidays}\n  trigger:", 1)
	if _, err := f.eng.ApplyConfig(ctx, "orders.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	refused, err := f.eng.SetCalendars(ctx, map[string]schedule.Calendar{})
	if err != nil || refused != 1 {
		t.Fatalf("removing the calendar refused %d pipelines (%v), want 1", refused, err)
	}
	if evs := f.events(t, event.ConfigInvalid); len(evs) != 1 || !strings.Contains(evs[0].Message, "version 2 keeps running") {
		t.Fatalf("CONFIG_INVALID on removal: %+v", evs)
	}
	if _, _, err := f.eng.Pipeline(ctx, "orders"); err != nil {
		t.Fatalf("the stored config no longer resolves with its removed calendar: %v", err)
	}
	if _, err := f.eng.PutSensor(ctx, "orders", "orders-landed", obj("date", "2026-03-10")); err != nil {
		t.Fatal(err)
	}
	if evs := f.events(t, event.PipelineExcluded); len(evs) != 1 {
		t.Fatalf("PIPELINE_EXCLUDED: %d, want 1 (the removed calendar's date still excluded)", len(evs))
	}
	if _, err := f.eng.ApplyConfig(ctx, "orders.yaml", []byte(strings.Replace(doc, "jobName: orders", "jobName: orders-v2", 1))); err == nil {
		t.Fatal("a document naming a removed calendar was loaded")
	}
	if forgot, err := f.eng.Forget(ctx, "orders"); err != nil || !forgot {
		t.Fatalf("Forget = %v, %v", forgot, err)
	}
	if ids, err := f.eng.Pipelines(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("Pipelines after Forget = %v, %v", ids, err)
	}
	if _, err := f.eng.ApplyConfig(ctx, "orders.yaml", []byte(doc)); err == nil {
		t.Fatal("a document naming a removed calendar was loaded")
	}
	none := 0
	for _, e := range f.events(t, event.ConfigInvalid) {
		if strings.Contains(e.Message, "no previous version") {
			none++
		}
	}
	if none != 1 {
		t.Fatalf("CONFIG_INVALID saying no version runs after Forget: %d, want 1", none)
	}
}
