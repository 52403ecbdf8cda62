package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Recovery of interrupted trigger calls: an engine's start finds the
// runs whose call is in flight (a list read: the inputs, not facts) and
// decides each on its named needs (decide.Interrupted); a due trigger
// step of such a run is decide.Step's, which says whether the job is to
// be looked up — the engine makes that call (an effect) — and
// decide.Recovered decides from its answer. Each is committed once, on
// the conditions of what was read (the run's version, the step timer's
// due time, the recovery marker's absence).

// recoverInterrupted is what an engine does at its start for every run
// whose trigger call is in flight: no process of its own is making it, so
// it says at once that the call's outcome is being established
// (TRIGGER_OUTCOME_UNKNOWN, once per call) and, where the job type can be
// looked up, makes the run's trigger step due now for the lookup.
func (e *Engine) recoverInterrupted(ctx context.Context) error {
	active, err := e.st.RunList(ctx, store.RunListParams{ActiveOnly: true})
	if err != nil {
		return fmt.Errorf("engine: list active runs: %w", err)
	}
	for _, r := range active {
		if !r.CallInFlight() {
			continue
		}
		key := r.Key
		err := e.retry(ctx, "interrupted trigger call of "+key.PipelineID+" "+key.Period, func(ctx context.Context) error {
			return e.foundInterrupted(ctx, key)
		})
		if err != nil {
			return fmt.Errorf("engine: interrupted trigger call of %s %s: %w", key.PipelineID, key.Period, err)
		}
	}
	return nil
}

func (e *Engine) foundInterrupted(ctx context.Context, key run.Key) error {
	f, err := e.loadFor(ctx, key.PipelineID, func(*facts, needs.Configs) needs.Set { return needs.Interrupted(key) })
	if err != nil {
		return err
	}
	b := &batch{e: e, f: f}
	in := decide.InterruptedIn{Run: key, Findable: e.findable, Env: b.env()}
	if err := decideOutcome(ctx, b, func(f *decide.Facts) (*decide.Outcome, error) { return decide.Interrupted(in, f, e.clk.Now()) }); err != nil {
		return err
	}
	return b.commit(ctx)
}

// recoverCall is the trigger step of a run whose call is in flight (its
// lease ended, or a lookup of an interrupted call's job is due), once
// decide.Step said so: the job lookup its answer asked for (the effect,
// a call of the job system), then decide.Recovered's decision in b.
func (e *Engine) recoverCall(ctx context.Context, b *batch, taken decide.StepTaken, now time.Time) error {
	var look *run.Lookup
	r := *taken.Run
	if taken.Lookup {
		finder, _ := e.jobs.(trigger.Finder)
		st, found, ferr := finder.Find(ctx, e.request(taken.Pipeline.P, r))
		look = &run.Lookup{Found: found, JobRunID: st.JobRunID, Meta: st.Meta}
		if ferr != nil {
			look.Err = ferr.Error()
			e.log.WarnContext(ctx, "looking up the job of an interrupted trigger call failed; will ask again", "pipeline", r.PipelineID, "period", r.Period, "err", ferr)
		}
		now = e.clk.Now()
	}
	e.logs(ctx, b.TakeLogs())
	in := decide.RecoveredIn{Run: r.Key, Due: taken.Timer.DueAt, Lookup: look, Findable: e.findable, Env: b.env()}
	_, err := decideWith(ctx, b, decide.Recovered, in, now)
	return err
}
