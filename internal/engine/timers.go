package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
)

// NextDue returns when the earliest timer is due; ok is false when no timer
// is set.
func (e *Engine) NextDue(ctx context.Context) (time.Time, bool, error) {
	t, err := e.st.TimerNext(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	return t.DueAt, true, nil
}

// RunDue processes every timer due at the clock's current time, including
// timers that processing makes due at once (a passed evaluation makes the
// trigger step due immediately). It returns how many timers it processed.
func (e *Engine) RunDue(ctx context.Context) (int, error) {
	n := 0
	for {
		ts, err := e.st.TimerListDue(ctx, e.clk.Now(), 64)
		if err != nil {
			return n, err
		}
		if len(ts) == 0 {
			return n, nil
		}
		for _, t := range ts {
			if err := e.processTimer(ctx, t); err != nil {
				return n, fmt.Errorf("engine: timer %s: %w", t.Key, err)
			}
			n++
		}
	}
}

// DueTimers lists timers due at the clock's time, earliest first, at most
// limit: for runtimes that process timers concurrently (ProcessTimer).
func (e *Engine) DueTimers(ctx context.Context, limit int) ([]store.Timer, error) {
	return e.st.TimerListDue(ctx, e.clk.Now(), limit)
}

// ProcessTimer processes one timer. It is safe to call concurrently, for
// the same timer too: its due time is a condition of the commit, so only
// one call acts on it.
func (e *Engine) ProcessTimer(ctx context.Context, t store.Timer) error {
	return e.processTimer(ctx, t)
}

// processTimer runs a timer's handler and commits its batch. Every handler
// moves or removes its timer in the same commit (finish), so a timer is
// processed once even when several processes race for it: the loser's
// commit fails its due-time condition and it re-reads.
func (e *Engine) processTimer(ctx context.Context, t store.Timer) (err error) {
	// A bug in a handler must not take the process down with every timer
	// still due: report it, keep the timer for a later try.
	defer func() {
		if p := recover(); p != nil {
			e.log.Error("panic processing a timer", "timer", t.Key, "panic", p)
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return e.retry(ctx, "timer "+t.Key, func() error {
		cur, err := e.st.TimerGet(ctx, t.Key)
		if errors.Is(err, store.ErrNotFound) || (err == nil && !cur.DueAt.Equal(t.DueAt)) {
			return nil // someone else processed it
		}
		if err != nil {
			return err
		}
		now := e.clk.Now()
		var b *batch
		switch t.Kind {
		case string(run.StepEvaluate):
			b, err = e.stepEvaluate(ctx, t, now)
		case string(run.StepTrigger):
			b, err = e.stepTrigger(ctx, t, now)
		case string(run.StepPoll):
			b, err = e.stepPoll(ctx, t, now)
		case kindCron:
			b, err = e.cronTick(ctx, t, now)
		case kindSLAWarning, kindSLABreach:
			b, err = e.slaTimer(ctx, t, now)
		case kindPeriod:
			b, err = e.periodTimer(ctx, t, now)
		case kindResume:
			b, err = e.resumeTimer(ctx, t, now)
		default:
			e.log.Error("unknown timer kind; removing it", "key", t.Key, "kind", t.Kind)
			b = e.newBatch(nil, now)
		}
		if err != nil || b == nil {
			return err
		}
		if !b.touchesTimer(t.Key) {
			due := t.DueAt
			b.deleteTimer(t.Key, &due)
		}
		return b.commit(ctx)
	})
}

// runFor loads the run and pipeline a step timer concerns. A missing run
// or pipeline leaves nothing to do (the timer is removed).
func (e *Engine) runFor(ctx context.Context, t store.Timer) (*run.Run, *loadedPipeline, error) {
	r, err := e.st.RunGet(ctx, t.Run)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	lp, err := e.pipelineOf(ctx, t.Run.PipelineID)
	if err != nil {
		return nil, nil, err
	}
	if lp == nil {
		e.log.Warn("run of an unknown pipeline; its timer is dropped", "pipeline", t.Run.PipelineID, "period", t.Run.Period)
		return nil, nil, nil
	}
	return &r, lp, nil
}

func (e *Engine) stepEvaluate(ctx context.Context, t store.Timer, now time.Time) (*batch, error) {
	r, lp, err := e.runFor(ctx, t)
	if err != nil || r == nil {
		return e.newBatch(nil, now), err
	}
	b := e.newBatch(lp, now)
	if r.State != run.Evaluating || lp.row.Paused {
		return b, nil // a paused pipeline's run is held; Resume re-arms it
	}
	due := t.DueAt
	return b, e.evaluateRun(ctx, b, lp, r, r, run.Effect{}, nil, &due)
}

// evaluateRun evaluates the validation rules for r (which prev is the
// stored version of, nil for a new run) and records the decision, after
// the notes of an earlier effect in the same commit (a run just started).
func (e *Engine) evaluateRun(ctx context.Context, b *batch, lp *loadedPipeline, prev *run.Run, r *run.Run, before run.Effect, overlay *store.Sensor, timerExpect *time.Time) error {
	out, err := e.evaluate(ctx, lp.p, r.Key, overlay, b.now)
	if err != nil {
		return err
	}
	next, eff := run.AfterEvaluation(*r, out, lp.p, b.now)
	eff.Notes = append(before.Notes, eff.Notes...)
	return e.applyRun(ctx, b, lp, prev, next, eff, timerExpect)
}

func (e *Engine) stepPoll(ctx context.Context, t store.Timer, now time.Time) (*batch, error) {
	r, lp, err := e.runFor(ctx, t)
	if err != nil || r == nil {
		return e.newBatch(nil, now), err
	}
	b := e.newBatch(lp, now)
	if r.State != run.Running {
		return b, nil
	}
	res, perr := e.jobs.Poll(ctx, e.request(lp.p, *r))
	now = e.clk.Now()
	b.now = now
	if perr != nil {
		e.log.Warn("job status poll failed; will poll again", "pipeline", r.PipelineID, "period", r.Period, "err", perr)
	}
	next, eff, err := e.afterResult(ctx, lp.p, *r, res, perr == nil, now)
	if err != nil {
		return nil, err
	}
	due := t.DueAt
	return b, e.applyRun(ctx, b, lp, r, next, eff, &due)
}

// afterResult decides what follows a job's reported status.
func (e *Engine) afterResult(ctx context.Context, p *pipeline.Pipeline, r run.Run, res trigger.Result, known bool, now time.Time) (run.Run, run.Effect, error) {
	switch {
	case known && res.Status == trigger.StatusSucceeded:
		next, eff := run.JobSucceeded(r, now)
		return next, withOutput(eff, res.Output), nil
	case known && res.Status == trigger.StatusFailed:
		ledger, err := e.st.LedgerList(ctx, r.Key)
		if err != nil {
			return r, run.Effect{}, err
		}
		per, err := parsePeriod(r.Period)
		if err != nil {
			return r, run.Effect{}, err
		}
		next, eff := run.JobFailed(r, run.Failure{Category: res.Category, Message: res.Message}, run.RetriesUsed(ledgerReasons(ledger)), run.ExclusionReason(p, per), p, now)
		return next, withOutput(eff, res.Output), nil
	}
	next, eff := run.AfterPollRunning(r, p, now)
	return next, eff, nil
}

// stepTrigger makes the trigger call in two commits: first the run is
// marked as having a call in flight (only one process wins that), then the
// call is made, then its result is recorded. A process that dies in between
// leaves the mark, and the call is never simply made again: a job is never
// started twice for one attempt. An engine that starts finds the mark and
// establishes the call's outcome (recovery.go): a job type that can be
// looked up by the identity Interlock gave the call is asked — its job is
// adopted, or the call, which started nothing, is made again under the
// same identity — and the others end as "outcome unknown" when the lease
// ends.
func (e *Engine) stepTrigger(ctx context.Context, t store.Timer, now time.Time) (*batch, error) {
	r, lp, err := e.runFor(ctx, t)
	if err != nil || r == nil {
		return e.newBatch(nil, now), err
	}
	b := e.newBatch(lp, now)
	due := t.DueAt
	if r.State != run.Triggering {
		return b, nil
	}
	if r.TriggerInFlight {
		return b, e.recoverCall(ctx, b, lp, r, due)
	}
	if lp.row.Paused {
		return b, nil // held: a pause stops new triggers; Resume re-arms it
	}
	inflight, eff := run.BeginTrigger(*r, lp.p, now)
	if err := e.applyRun(ctx, b, lp, r, inflight, eff, &due); err != nil {
		return nil, err
	}
	if err := b.commit(ctx); err != nil {
		return nil, err
	}
	inflight.Version = r.Version + 1
	leaseDue := eff.NextAt

	started, serr := e.jobs.Start(ctx, e.request(lp.p, inflight))
	for attempt := 0; ; attempt++ {
		now := e.clk.Now()
		// Recording the call's result is a decision of its own (the next
		// poll, a synchronous job's verdict): on fresh pipeline facts.
		if lp, err = e.recordingFacts(ctx, lp); err != nil {
			return nil, err
		}
		b := e.newBatch(lp, now)
		var next run.Run
		var eff run.Effect
		if serr != nil {
			next, eff = run.AfterTriggerError(inflight, serr.Error(), lp.p, now)
		} else {
			next, eff = run.Triggered(inflight, string(lp.p.Job.Type), started.JobRunID, started.Meta, lp.p, now)
			if started.Result != nil {
				n2, e2, err := e.afterResult(ctx, lp.p, next, *started.Result, true, now)
				if err != nil {
					return nil, err
				}
				e2.Notes = append(eff.Notes, e2.Notes...)
				next, eff = n2, e2
			}
		}
		if err := e.applyRun(ctx, b, lp, &inflight, next, eff, &leaseDue); err != nil {
			return nil, err
		}
		err := b.commit(ctx)
		if !errors.Is(err, store.ErrConflict) || attempt >= maxAttempts {
			return nil, err
		}
		// The run moved while the call was in flight (the watchdog may
		// have timed it out). Record the result only if it still waits.
		cur, gerr := e.st.RunGet(ctx, inflight.Key)
		if gerr != nil {
			return nil, gerr
		}
		if serr == nil && started.JobRunID != "" && cur.JobRunID == started.JobRunID && cur.Generation == inflight.Generation && cur.Attempt == inflight.Attempt+1 {
			// Another engine found this call interrupted and adopted the
			// job it started (a store shared with a process that took
			// this one for stopped): the answer is already recorded.
			return nil, nil
		}
		if cur.State != run.Triggering || !cur.TriggerInFlight {
			// The run ended while the call was in flight (timed out by
			// the watchdog, say). The call's outcome is still a fact:
			// report it rather than drop it.
			e.log.Error("run changed during its trigger call", "pipeline", cur.PipelineID, "period", cur.Period, "state", cur.State)
			late := e.newBatch(nil, e.clk.Now()) // a fact to report, whatever the pipeline's state
			what := "failed: " + fmt.Sprint(serr)
			if serr == nil {
				what = "started job " + started.JobRunID
				if started.Result != nil {
					what += ", which reported " + string(started.Result.Status)
				}
			}
			late.emit(cur.Key, event.InfraFailure, fmt.Sprintf("the trigger call returned after the run had ended (%s): it %s — check the job system", cur.State, what),
				run.Detail("state", string(cur.State), "jobRunId", started.JobRunID))
			return nil, late.commit(ctx)
		}
		inflight = cur
		if tm, terr := e.st.TimerGet(ctx, stepTimerKey(cur.Key)); terr == nil {
			leaseDue = tm.DueAt
		}
	}
}

// recordingFacts reads the pipeline facts under which the result of a
// trigger call made with lp's config is recorded. The call was made: its
// result is recorded even when the pipeline was paused or its file
// removed meanwhile — on the row as it is now, and with the config that
// made the call when no config runs any more.
func (e *Engine) recordingFacts(ctx context.Context, lp *loadedPipeline) (*loadedPipeline, error) {
	cur, err := e.pipelineOf(ctx, lp.row.ID)
	if err != nil || cur != nil {
		return cur, err
	}
	row, err := e.st.PipelineGet(ctx, lp.row.ID)
	if err != nil {
		return nil, err
	}
	return &loadedPipeline{p: lp.p, row: row}, nil
}
