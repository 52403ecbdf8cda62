package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/silence"
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
// one call acts on it. A run's step timer is the sequencer of the step
// entry points (steps.go): evaluate → Evaluate; trigger → TriggerBegin,
// TriggerCall, TriggerRecord; poll → Poll, PollRecord.
func (e *Engine) ProcessTimer(ctx context.Context, t store.Timer) error {
	return e.processTimer(ctx, t)
}

func (e *Engine) processTimer(ctx context.Context, t store.Timer) error {
	call, err := e.ProcessTimerUntilCall(ctx, t)
	if err != nil || call == nil {
		return err
	}
	_, err = e.MakeCall(ctx, *call)
	return err
}

// ProcessTimerUntilCall processes a timer as ProcessTimer does, except
// that a trigger call it begins is returned instead of made: the caller
// makes it (MakeCall) where a slow synchronous job holds nothing that
// other timers need.
func (e *Engine) ProcessTimerUntilCall(ctx context.Context, t store.Timer) (call *Call, err error) {
	ctx, span := e.startSpan(ctx, spanTimer, attrTimer.String(t.Kind), attrPipeline.String(t.Run.PipelineID), attrPeriod.String(t.Run.Period))
	defer func() { endSpan(span, err) }()
	// A bug in a handler must not take the process down with every timer
	// still due: report it, keep the timer for a later try.
	defer e.survive("processing a timer", t.Key, &err)
	ref := StepRef{Run: t.Run, Due: t.DueAt, Since: run.StampOf(t.Detail).Since}
	switch t.Kind {
	case string(run.StepEvaluate):
		_, err = e.Evaluate(ctx, ref)
	case string(run.StepTrigger):
		_, call, err = e.TriggerBegin(ctx, ref)
	case string(run.StepPoll):
		var polled *Polled
		if _, polled, err = e.Poll(ctx, ref); err == nil && polled != nil {
			_, err = e.PollRecord(ctx, *polled)
		}
	default:
		err = e.processOther(ctx, t)
	}
	return call, err
}

// MakeCall makes a begun trigger call and records its answer
// (TriggerCall, then TriggerRecord).
func (e *Engine) MakeCall(ctx context.Context, c Call) (res StepResult, err error) {
	return e.MakeCallBy(ctx, c, time.Time{})
}

// MakeCallBy is MakeCall with the job call bounded by callDeadline (zero:
// ctx's own), so that a caller whose own time is bounded — a Lambda
// invocation — keeps the time to record the answer. A call cut by that
// bound has an unknown outcome (the job may have started): its answer is
// not recorded as a failure — which would retry, and could start the job
// twice — but left, with the call's in-flight mark, to the crash rules at
// the end of its lease (the lookup, or TRIGGER_OUTCOME_UNKNOWN), as if the
// caller had stopped; the run's current step (the lease's end) is returned.
func (e *Engine) MakeCallBy(ctx context.Context, c Call, callDeadline time.Time) (res StepResult, err error) {
	ctx, span := e.startSpan(callTrace(ctx, c), spanJobCall, attrPipeline.String(c.Run.PipelineID), attrPeriod.String(c.Run.Period))
	defer func() { endSpan(span, err) }()
	defer e.survive("making a trigger call", keyString(c.Run), &err)
	callCtx := ctx
	if !callDeadline.IsZero() {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithDeadline(ctx, callDeadline)
		defer cancel()
	}
	cr, err := e.TriggerCall(callCtx, c)
	if err != nil {
		return StepResult{Run: c.Run}, err
	}
	if decide.CallCut(cr.Err != "", callCtx.Err() != nil, ctx.Err() == nil) {
		e.log.WarnContext(ctx, "trigger call cut at its deadline; its outcome is established at the end of its lease", "pipeline", c.Run.PipelineID, "period", c.Run.Period, "err", cr.Err)
		return e.Current(ctx, c.Run)
	}
	return e.TriggerRecord(ctx, c, cr)
}

// survive turns a panic into *err, logged. A panic during a trigger call
// leaves its in-flight mark: the crash rules establish its outcome.
func (e *Engine) survive(what, key string, err *error) {
	if p := recover(); p != nil {
		e.log.Error("panic "+what, "key", key, "panic", p)
		*err = fmt.Errorf("panic: %v", p)
	}
}

// processOther runs the handler of a timer that is not a run's step and
// commits its batch. Every handler moves or removes its timer in the same
// commit, so a timer is processed once even when several processes race
// for it: the loser's commit fails its due-time condition and it re-reads.
func (e *Engine) processOther(ctx context.Context, t store.Timer) error {
	// A window's end judges the windows configured now (an input, not a
	// fact): read once, its needs name the occurrence's events.
	var windows []silence.Window
	if decide.ReadsWindows(t) {
		var err error
		if windows, err = e.Maintenance(ctx); err != nil {
			return err
		}
	}
	return e.retry(ctx, "timer "+t.Key, func(ctx context.Context) error {
		now := e.clk.Now()
		f, err := e.loadFacts(ctx, func(f *facts, cfg needs.Configs) needs.Set {
			return decide.TimerNeeds(f.Facts, cfg, decide.TimerIn{Timer: t, Windows: windows, Env: decide.Env{Rules: e.rules}}, now)
		})
		if err != nil {
			return err
		}
		due, err := get(ctx, f, func() (*store.Timer, error) { return decide.DueTimer(f.Facts, t, now) })
		if due == nil || err != nil {
			return err // nil: someone else processed it
		}
		t := *due
		b := &batch{e: e, f: f}
		// A timer's pipelines are all its decision's: its own, the
		// upstreams it judges, the downstreams it reaches.
		if err := f.resolve(ctx, slices.Sorted(maps.Keys(f.Pipelines))...); err != nil {
			return err
		}
		in := decide.TimerIn{Timer: t, Windows: windows, Env: b.env()}
		end, err := decideWith(ctx, b, decide.Timer, in, now)
		if err != nil {
			return err
		}
		// The conditions a silence's or window's end judges, each on its
		// own facts and commit, before the timer's.
		if err := e.alertAfterSilence(ctx, end); err != nil {
			return err
		}
		return b.commit(ctx)
	})
}

// pollReport is a job's reported status as the core reads it (known:
// the status could be read).
func pollReport(res trigger.Result, known bool) run.JobReport {
	return run.JobReport{Known: known, Status: string(res.Status), Failure: run.Failure{Category: res.Category, Message: res.Message}}
}
