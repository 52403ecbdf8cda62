package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// takenMeanwhile is the real store, except that the first read of a timer
// is followed by a commit that moves it, as a step taken by a slow
// execution between the watchdog's read and its commit would.
type takenMeanwhile struct {
	store.Store
	moveTo time.Time
	done   bool
}

func (s *takenMeanwhile) TimerGet(ctx context.Context, key string) (store.Timer, error) {
	t, err := s.Store.TimerGet(ctx, key)
	if err != nil || s.done {
		return t, err
	}
	s.done = true
	moved := t
	moved.DueAt = s.moveTo
	if err := s.Store.Commit(ctx, store.Change{Timers: []store.TimerWrite{{Timer: moved, ExpectDueAt: &t.DueAt}}}); err != nil {
		return t, err
	}
	return t, nil
}

// TestHandOffOnlyTheTimerItRead: the watchdog hands an orphaned step to a
// new execution on the condition that the step timer is still the one it
// read; a step taken meanwhile (the timer moved by a slow execution)
// wins, and nothing is handed — the timer keeps the step's move and its
// stamp.
func TestHandOffOnlyTheTimerItRead(t *testing.T) {
	f := newFixture(t)
	ref := f.triggerDue(t)
	armed, err := f.st.TimerGet(t.Context(), "step/"+ref.Run.PipelineID+"/"+ref.Run.ScheduleID+"/"+ref.Run.Period)
	if err != nil {
		t.Fatal(err)
	}
	f.clk.Set(armed.DueAt.Add(10 * time.Minute))
	racing := &takenMeanwhile{Store: f.st, moveTo: f.clk.Now().Add(time.Hour), done: true}
	eng := engine.New(engine.Options{Store: racing, Clock: f.clk, Passive: true})
	if err := eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	racing.done = false // armed after the engine's start: the race is HandOff's read
	if _, handed, err := eng.HandOff(t.Context(), armed, 5*time.Minute); err != nil || handed {
		t.Fatalf("HandOff: handed %v, %v; want nothing handed (the step was taken meanwhile)", handed, err)
	}
	cur, err := f.st.TimerGet(t.Context(), armed.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !cur.DueAt.Equal(racing.moveTo) || run.StampOf(cur.Detail).Handoff {
		t.Fatalf("the step timer after the race: due %s, stamp %+v; want the step's move, not a handoff", cur.DueAt, run.StampOf(cur.Detail))
	}
}
