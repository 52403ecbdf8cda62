package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// TestIsStepTimerKey: a runtime that learns of a removed timer by its key
// alone (the AWS sla-monitor) tells a run's step timer by its family, not
// by what its key happens to start with.
func TestIsStepTimerKey(t *testing.T) {
	for key, want := range map[string]bool{
		"step/gold/stream/2026-03-10":       true,
		"step/gold//2026-03-10T07":          true,
		"sla-breach/gold/stream/2026-03-10": false,
		"cron/gold":                         false,
		"silence-end/step/x":                false,
		"step/gold":                         false, // not a step key: no period
		"steps/gold/stream/2026-03-10":      false,
		"":                                  false,
	} {
		if got := engine.IsStepTimerKey(key); got != want {
			t.Errorf("IsStepTimerKey(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestUnreadableEndTimersAreDropped: a silence or window end timer whose
// key is not one of its family (a store edited by hand) is removed when it
// fires, as a timer of an unknown kind is, instead of failing every pass.
func TestUnreadableEndTimersAreDropped(t *testing.T) {
	f := newFixture(t)
	now := f.clk.Now()
	bad := []store.Timer{
		{Key: "silence-end/", Kind: "silence-end", DueAt: now},
		{Key: "maintenance-end/nightly", Kind: "silence-end", DueAt: now},
		{Key: "oops", Kind: "maintenance-end", DueAt: now},
	}
	var c store.Change
	for _, tm := range bad {
		c.Timers = append(c.Timers, store.TimerWrite{Timer: tm})
	}
	if err := f.st.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	n, err := f.eng.RunDue(t.Context())
	if err != nil || n != len(bad) {
		t.Fatalf("RunDue = %d, %v; want %d processed", n, err, len(bad))
	}
	for _, tm := range bad {
		if _, err := f.st.TimerGet(t.Context(), tm.Key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("timer %q kept (%v)", tm.Key, err)
		}
	}
}

// TestSLATimerKeys pins the stored keys of a period's four SLA timers: the
// watchdog looks for the absolute breach timer by key, and on AWS each
// key names a Scheduler schedule, so a relative timer stored under an
// absolute one's key would replace it.
func TestSLATimerKeys(t *testing.T) {
	f := goldLanded(t, "expectedDuration: 1h, maxDuration: 4h")
	ts, err := f.st.TimerList(t.Context(), store.TimerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tm := range ts {
		got[tm.Key] = tm.Kind
	}
	want := map[string]string{
		"sla-warning/gold/stream/2026-03-10":          "sla-warning",
		"sla-breach/gold/stream/2026-03-10":           "sla-breach",
		"relative-sla-warning/gold/stream/2026-03-10": "sla-warning",
		"relative-sla-breach/gold/stream/2026-03-10":  "sla-breach",
	}
	for key, kind := range want {
		if got[key] != kind {
			t.Errorf("timer %s: kind %q, want %q (timers: %v)", key, got[key], kind, got)
		}
	}
	// The period succeeds: its SLA timers go, each by its key.
	if _, err := f.eng.PutSensor(t.Context(), "gold", "gold-rows", obj("date", "2026-03-10")); err != nil {
		t.Fatal(err)
	}
	for range 3 { // trigger, then poll
		if _, err := f.eng.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		f.clk.Advance(time.Minute)
	}
	if r, err := f.st.RunGet(t.Context(), run.Key{PipelineID: "gold", ScheduleID: "stream", Period: "2026-03-10"}); err != nil || r.State != run.Completed {
		t.Fatalf("run: %+v, %v", r, err)
	}
	for key := range want {
		if _, err := f.st.TimerGet(t.Context(), key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("timer %s kept after success (%v)", key, err)
		}
	}
}

// TestWatchdogTellsAbsoluteFromRelativeBreachTimers: the relative breach
// timer shares the absolute one's kind; a period that has only the
// relative one lacks its absolute SLA timers, and the watchdog arms them.
func TestWatchdogTellsAbsoluteFromRelativeBreachTimers(t *testing.T) {
	f := goldLanded(t, "maxDuration: 4h")
	const breach, relative = "sla-breach/gold/stream/2026-03-10", "relative-sla-breach/gold/stream/2026-03-10"
	for _, key := range []string{breach, relative} {
		if _, err := f.st.TimerGet(t.Context(), key); err != nil {
			t.Fatalf("timer %s: %v", key, err)
		}
	}
	if err := f.st.Commit(t.Context(), store.Change{TimerDeletes: []store.TimerDelete{{Key: breach}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.WatchdogPass(t.Context(), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.TimerGet(t.Context(), breach); err != nil {
		t.Fatalf("the watchdog did not re-arm %s: %v", breach, err)
	}
}

// goldLanded is a fixture with pipeline gold, whose SLA is deadline 23:00
// and sla, and whose trigger sensor landed for 2026-03-10 (its rules wait
// for gold-rows).
func goldLanded(t *testing.T, sla string) *fixture {
	t.Helper()
	f := newFixture(t)
	doc := "pipeline: {id: gold}\nschedule: {trigger: {key: gold-landed, check: exists}}\n" +
		"validation: {rules: [{key: gold-landed, check: exists}, {key: gold-rows, check: exists}]}\n" +
		"sla: {deadline: \"23:00\", " + sla + "}\njob: {type: glue, config: {jobName: gold}}\n"
	if _, err := f.eng.ApplyConfig(t.Context(), "gold.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.PutSensor(t.Context(), "gold", "gold-landed", obj("date", "2026-03-10")); err != nil {
		t.Fatal(err)
	}
	return f
}
