package engine

import (
	"context"
	"errors"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/store"
)

// TimerStep is the step a run's step timer t announces, with its stamp:
// what a runtime starting a waiter for it hands the waiter.
func TimerStep(t store.Timer) StepResult { return current(t.Run, &t) }

// HandOff hands a run whose step is orphaned — its step timer t overdue by
// grace or more (run.Orphaned), so no waiter is behind it — to a new
// waiter: the timer moves to now (still due: the step is not taken, only
// announced anew) stamped as a handoff since now, on the condition that
// it is still the timer t. A waiter of the run that was merely slow finds
// itself superseded at its next step and ends; the step itself is taken
// once, whoever takes it, because every step commits on the timer it read.
// It returns the step the new waiter takes, and false when there is
// nothing to hand (the timer moved, went, or is not orphaned by now).
func (e *Engine) HandOff(ctx context.Context, t store.Timer, grace time.Duration) (StepResult, bool, error) {
	f, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.HandOff(t.Key) })
	if err != nil {
		return StepResult{Run: t.Run}, false, err
	}
	b := &batch{e: e, f: f}
	h, err := decideWith(ctx, b, decide.HandOff, decide.HandOffIn{Timer: t, Grace: grace}, e.clk.Now())
	switch {
	case err != nil:
		return StepResult{Run: t.Run}, false, err
	case h.Stored == nil:
		return StepResult{Run: t.Run}, false, nil
	case h.Handed == nil:
		return current(t.Run, h.Stored), false, nil
	}
	if err := b.commit(ctx); errors.Is(err, store.ErrConflict) {
		return current(t.Run, h.Stored), false, nil // taken or moved meanwhile
	} else if err != nil {
		return StepResult{Run: t.Run}, false, err
	}
	return current(t.Run, h.Handed), true, nil
}
