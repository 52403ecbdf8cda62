package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Recovery of interrupted trigger calls: the facts are loaded here, the
// decisions are run.FoundInterrupted and run.RecoverTrigger, and each is
// committed once, on the conditions of what was read (the run's version,
// the step timer's due time, the recovery marker's absence).

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
	fs, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.Interrupted(key) })
	if err != nil {
		return err
	}
	stored, err := fs.run(ctx, key)
	if stored == nil || err != nil {
		return err
	}
	r := *stored
	lp, err := fs.pipelineOf(ctx, key.PipelineID)
	if err != nil {
		return err
	}
	if lp == nil || !r.CallInFlight() {
		return nil // an unknown pipeline's timer drops the run's step (decide.Step)
	}
	facts, recorded, due, err := e.callFacts(ctx, fs, lp, r)
	if err != nil {
		return err
	}
	now := e.clk.Now()
	next, eff, rec, ok := run.FoundInterrupted(r, facts, now)
	if !ok {
		return nil
	}
	b := e.newBatch(lp, now).withFacts(fs)
	if err := e.applyRun(ctx, b, lp, &r, next, eff, due); err != nil {
		return err
	}
	b.Marker(store.Marker{Key: key, Kind: run.MarkerTriggerOutcome, At: rec.Since, Detail: rec.Detail()}, recorded == nil)
	return b.commit(ctx)
}

// callFacts loads what the recovery decisions need about r's call in
// flight: whether its type can be looked up, the stored recovery marker
// (returned too, nil when absent, so that a first write is conditioned
// on its absence), and the step timer's due time (nil when the run has
// no step timer).
func (e *Engine) callFacts(ctx context.Context, fs *facts, lp *loadedPipeline, r run.Run) (run.CallFacts, *run.CallRecovery, *time.Time, error) {
	f := run.CallFacts{JobType: string(lp.P.Job.Type), RunID: runID(r), Findable: trigger.Findable(e.jobs, string(lp.P.Job.Type))}
	var stored *run.CallRecovery
	m, err := fs.marker(ctx, r.Key, run.MarkerTriggerOutcome)
	switch {
	case err != nil:
		return f, nil, nil, err
	case m != nil:
		c, ok := run.ParseCallRecovery(m.At, m.Detail)
		if !ok {
			e.log.WarnContext(ctx, "unreadable trigger recovery marker; it is replaced", "pipeline", r.PipelineID, "period", r.Period)
		}
		stored = &c // present: its replacement must not be conditioned on absence
		if ok {
			f.Recovery = &c
		}
	}
	var due *time.Time
	t, err := fs.timer(ctx, stepTimerKey(r.Key))
	switch {
	case err != nil:
		return f, nil, nil, err
	case t != nil:
		due = &t.DueAt
		f.StepDue = t.DueAt
	default:
		f.StepDue = e.clk.Now() // no timer to wait for: the lease is over
	}
	return f, stored, due, nil
}

// recoverCall is the trigger step of a run whose call is in flight (its
// lease ended, or a lookup of an interrupted call's job is due): look the
// job up where its type allows, then record run.RecoverTrigger's decision
// in b.
func (e *Engine) recoverCall(ctx context.Context, b *batch, lp *loadedPipeline, r *run.Run, due time.Time) error {
	facts, stored, _, err := e.callFacts(ctx, b.f, lp, *r) // StepDue: the timer being processed
	if err != nil {
		return err
	}
	var look *run.Lookup
	if facts.Findable {
		finder, _ := e.jobs.(trigger.Finder)
		st, found, ferr := finder.Find(ctx, e.request(lp.P, *r))
		look = &run.Lookup{Found: found, JobRunID: st.JobRunID, Meta: st.Meta}
		if ferr != nil {
			look.Err = ferr.Error()
			e.log.WarnContext(ctx, "looking up the job of an interrupted trigger call failed; will ask again", "pipeline", r.PipelineID, "period", r.Period, "err", ferr)
		}
		b.Now = e.clk.Now()
	}
	d := run.RecoverTrigger(*r, facts, look, lp.P, b.Now)
	if err := e.applyRun(ctx, b, lp, r, d.Run, d.Effect, &due); err != nil {
		return err
	}
	switch {
	case d.Recovery != nil:
		b.Marker(store.Marker{Key: r.Key, Kind: run.MarkerTriggerOutcome, At: d.Recovery.Since, Detail: d.Recovery.Detail()}, stored == nil)
	case stored != nil:
		b.C.MarkerDeletes = append(b.C.MarkerDeletes, store.MarkerDelete{Key: r.Key, Kind: run.MarkerTriggerOutcome})
	}
	if d.Action.Settles() {
		e.log.InfoContext(ctx, "interrupted trigger call settled", "pipeline", r.PipelineID, "period", r.Period, "action", string(d.Action), "jobRunId", d.Run.JobRunID)
	}
	return nil
}

// callStatus is explain's sentence about r's trigger call in flight ("" when
// none is).
func (e *Engine) callStatus(ctx context.Context, lp *loadedPipeline, r run.Run) (string, error) {
	if !r.CallInFlight() {
		return "", nil
	}
	f, _, _, err := e.callFacts(ctx, e.directFacts(), lp, r)
	if err != nil {
		return "", err
	}
	return run.CallStatus(r, f), nil
}
