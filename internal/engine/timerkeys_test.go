package engine_test

import (
	"errors"
	"testing"

	"github.com/interlockhq/interlock/internal/engine"
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
