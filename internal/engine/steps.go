package engine

import (
	"context"
	"errors"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Step entry points. A run's lifecycle is a sequence of steps — evaluate,
// trigger (begin, call, record), poll (call, record) — each named by the
// run's key and taken when the run's step timer says it is due. Each one
// loads its facts from the store, decides through the pure core and
// commits once, on the conditions of what it read: the step timer's kind
// and due time (a step is taken once, however many callers race for it or
// repeat it), the run's version, the pipeline's row. A stale or repeated
// call commits nothing and returns the run's current next step. The job
// calls (TriggerCall, Poll) write nothing, so whoever owns them — a
// worker pool of the local runtime, a Step Functions Task — may take as
// long as the job takes. Inputs and outputs are plain values that encode
// to JSON, so a state machine can pass one step's output to the next.
//
// The run's step timer stays the one record of what is due when: every
// step that commits moves it, so a runtime finds the work by listing due
// timers (ProcessTimer sequences the entry points from them).

// StepRef names the step of a run a caller means to take.
type StepRef struct {
	Run run.Key `json:"run"`
	// Due is the due time of the run's step timer when the caller learned
	// of the step: the timer's DueAt, or the NextAt of the step before. A
	// step whose timer has moved since is stale. Zero: the step of that
	// kind due now, whichever it is.
	Due time.Time `json:"due,omitzero"`
	// Since is the stamp of the step timer the caller holds the run by
	// (run.StepStamp): a caller the run was handed away from since is
	// superseded, and takes no step. Zero: whoever holds it.
	Since time.Time `json:"since,omitzero"`
}

// StepResult is the run's next step after an entry point, and when it is
// due (the run's step timer); Next is run.StepNone when the run is
// terminal or held (a paused pipeline, a run that is gone).
type StepResult struct {
	Run    run.Key   `json:"run"`
	Next   run.Step  `json:"next,omitempty"`
	NextAt time.Time `json:"nextAt,omitzero"`
	// Acted reports whether this call committed a decision; false when
	// the step was not due (stale, repeated, or not yet due) or its
	// answer was recorded already.
	Acted bool `json:"acted"`
	// Since is the step timer's stamp (run.StepStamp): when the run was
	// handed to the waiter that holds it.
	Since time.Time `json:"since,omitzero"`
	// Superseded: the caller no longer holds the run (StepRef.Since is
	// older than the stored stamp); Next is none, for the caller only —
	// the run goes on with its new holder.
	Superseded bool `json:"superseded,omitempty"`
}

// Call is a trigger call TriggerBegin committed as in flight: what
// TriggerCall needs to make it and TriggerRecord to record its answer.
type Call struct {
	Run run.Key    `json:"run"`
	ID  run.CallID `json:"call"`
	// Trace is the W3C traceparent of the step that began the call, when
	// it was traced: the call, made later and perhaps elsewhere (an AWS
	// execution's next Task), continues that trace.
	Trace string `json:"traceparent,omitempty"`
}

// CallResult is what a trigger call returned.
type CallResult struct {
	Started trigger.Started `json:"started"`
	Err     string          `json:"error,omitempty"` // the call failed (an infrastructure error)
	// NotMade says why the call was not made: the run no longer waits for
	// it (it was timed out, or the call was already recorded). There is
	// nothing to record.
	NotMade string `json:"notMade,omitempty"`
}

// Polled is the answer of a job status call, for PollRecord.
type Polled struct {
	Run run.Key `json:"run"`
	// Due is the due time of the poll step it answers: PollRecord's
	// condition.
	Due        time.Time      `json:"due"`
	Generation int            `json:"generation"`
	Attempt    int            `json:"attempt"`
	JobRunID   string         `json:"jobRunId"`
	Result     trigger.Result `json:"result"`
	Err        string         `json:"error,omitempty"` // the status could not be read
}

// stepTaken is a step's decision (decide.Step) and the traceparent of
// the attempt that committed it.
type stepTaken struct {
	decide.StepTaken
	trace string
}

// takeStep takes a step of kind step if it is due (decide.Step): the
// step's facts are loaded first, in one batch — those need names
// (needs.Step, needs.Call, needs.Poll) — decided on, and the outcome
// committed once. A conflicting commit decides again on fresh facts. The
// engine's parts are the job calls: a poll due is returned to be made
// (StepTaken.Poll), and an interrupted call's lookup is made here
// (recoverCall) before its decision.
func (e *Engine) takeStep(ctx context.Context, ref StepRef, step run.Step, poll *decide.PollAnswer, need needsFunc) (StepResult, stepTaken, error) {
	var res StepResult
	var taken stepTaken
	err := e.retry(ctx, string(step)+" step of "+keyString(ref.Run), func(ctx context.Context) error {
		f, err := e.loadFor(ctx, ref.Run.PipelineID, need)
		if err != nil {
			return err
		}
		now := e.clk.Now()
		b := &batch{e: e, f: f}
		in := decide.StepIn{Run: ref.Run, Step: step, Due: ref.Due, Since: ref.Since, Poll: poll, Findable: e.findable, Env: b.env()}
		taken = stepTaken{trace: traceparent(ctx)}
		if taken.StepTaken, err = decideWith(ctx, b, decide.Step, in, now); err != nil {
			return err
		}
		switch {
		case taken.Superseded:
			res = StepResult{Run: ref.Run, Superseded: true}
			return nil
		case !taken.Due:
			res = current(ref.Run, taken.Timer)
			return nil
		case taken.NoCommit:
			e.logs(ctx, b.TakeLogs())
			res = current(ref.Run, taken.Timer)
			return nil
		case taken.Recover:
			if err := e.recoverCall(ctx, b, taken.StepTaken, now); err != nil {
				return err
			}
		}
		return b.commitThen(ctx, func() { res = b.stepResult(ref.Run) })
	})
	return res, taken, err
}

// current is the run's next step as its step timer t says (nil: none).
func current(key run.Key, t *store.Timer) StepResult {
	if t == nil {
		return StepResult{Run: key}
	}
	return StepResult{Run: key, Next: run.Step(t.Kind), NextAt: t.DueAt, Since: run.StampOf(t.Detail).Since}
}

// Current returns the run's next step and when, as its step timer says.
func (e *Engine) Current(ctx context.Context, key run.Key) (StepResult, error) {
	t, err := e.st.TimerGet(ctx, stepTimerKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return StepResult{Run: key}, nil
	}
	if err != nil {
		return StepResult{Run: key}, err
	}
	return current(key, &t), nil
}

// stepResult is the next step a committed batch set for the run key.
func (b *batch) stepResult(key run.Key) StepResult {
	res := StepResult{Run: key, Acted: true}
	for _, w := range b.C.Timers {
		if w.Timer.Key == stepTimerKey(key) {
			res.Next, res.NextAt, res.Since = run.Step(w.Timer.Kind), w.Timer.DueAt, run.StampOf(w.Timer.Detail).Since
		}
	}
	return res
}

func keyString(k run.Key) string { return k.PipelineID + " " + k.ScheduleID + " " + k.Period }

// Evaluate takes a run's due evaluate step: the validation rules are
// evaluated on the period's sensors and the run goes on (trigger now),
// waits (evaluate again after the interval) or ends (the window closed).
// A paused pipeline's run is held: its step is dropped and Resume re-arms
// it.
func (e *Engine) Evaluate(ctx context.Context, ref StepRef) (StepResult, error) {
	res, _, err := e.takeStep(ctx, ref, run.StepEvaluate, nil, e.stepNeeds(run.StepEvaluate, ref.Run))
	return res, err
}

// TriggerBegin takes a run's due trigger step up to its job call: it
// commits the call as in flight (run.BeginTrigger: only one caller wins;
// the step timer moves to the end of the call's lease) and returns the
// call to make, which TriggerCall makes and TriggerRecord records. A
// process that stops in between leaves the mark, and the call is never
// simply made again (recovery.go). When the step is that of a call
// already in flight (its lease ended, or an interrupted call's lookup is
// due), the call's outcome is established instead, and no call is
// returned. A paused pipeline's run is held.
func (e *Engine) TriggerBegin(ctx context.Context, ref StepRef) (StepResult, *Call, error) {
	res, taken, err := e.takeStep(ctx, ref, run.StepTrigger, nil, e.stepNeeds(run.StepTrigger, ref.Run))
	if err != nil || !res.Acted || taken.Begun == nil {
		return res, nil, err
	}
	return res, &Call{Run: ref.Run, ID: *taken.Begun, Trace: taken.trace}, nil
}

// TriggerCall makes a call TriggerBegin began: the job port's Start, and
// nothing else — it reads the run and the pipeline's config, and writes
// nothing. A call the run no longer waits for (the watchdog timed the run
// out, the answer is recorded) is not made (CallResult.NotMade). Making
// the same call twice would start its job twice, so a caller must not
// retry TriggerCall on its own: a call whose answer never reaches
// TriggerRecord is left to the crash rules (the lease, the lookup).
func (e *Engine) TriggerCall(ctx context.Context, c Call) (CallResult, error) {
	f, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.Call(c.Run) })
	if err != nil {
		return CallResult{}, err
	}
	call, err := get(ctx, f, func() (decide.CallToMake, error) { return decide.Call(c.Run, c.ID, f.Facts) })
	if err != nil || call.NotMade != "" {
		return CallResult{NotMade: call.NotMade}, err
	}
	r, lp := call.Run, call.Pipeline
	jctx, span := e.startSpan(ctx, spanJobStart, attrJobType.String(string(lp.P.Job.Type)))
	started, serr := e.jobs.Start(jctx, e.request(lp.P, r))
	endSpan(span, serr)
	if serr != nil {
		return CallResult{Err: serr.Error()}, nil
	}
	return CallResult{Started: started}, nil
}

// TriggerRecord records the answer of a trigger call (decide.Answer): the
// job started (poll it next; a synchronous job's verdict at once: success,
// failure and retry) or the call failed (retry it with backoff, or give
// up). It commits only while the run waits for this very call
// (run.AnswerStanding): a repeated record, or one for a call whose job
// another process adopted, returns the run's current next step; an answer
// that comes after the run moved on (timed out by the watchdog, say) is
// reported once as INFRA_FAILURE. A cancelled context records nothing:
// the process is stopping, and the mark is left to the crash rules.
func (e *Engine) TriggerRecord(ctx context.Context, c Call, res CallResult) (StepResult, error) {
	if res.NotMade != "" {
		return e.Current(ctx, c.Run)
	}
	if err := ctx.Err(); err != nil {
		return StepResult{Run: c.Run}, err
	}
	var result *decide.JobAnswer
	if res.Err == "" && res.Started.Result != nil {
		result = &decide.JobAnswer{Report: pollReport(*res.Started.Result, true), Output: boundOutput(res.Started.Result.Output)}
	}
	var out StepResult
	err := e.retry(ctx, "trigger answer of "+keyString(c.Run), func(ctx context.Context) error {
		f, err := e.loadFor(ctx, c.Run.PipelineID, func(f *facts, cfg needs.Configs) needs.Set {
			var report *run.JobReport
			if result != nil {
				report = &result.Report
			}
			return needs.Answer(cfg(c.Run.PipelineID), f.ReadRuns, c.Run, c.ID, report)
		})
		if err != nil {
			return err
		}
		now := e.clk.Now()
		b := &batch{e: e, f: f}
		in := decide.AnswerIn{Run: c.Run, Call: c.ID, Err: res.Err, JobRunID: res.Started.JobRunID, Meta: res.Started.Meta, Result: result, Env: b.env()}
		a, err := decideWith(ctx, b, decide.Answer, in, now)
		if err != nil {
			return err
		}
		if err := b.commit(ctx); err != nil {
			return err
		}
		switch {
		case a.Gone:
			out = StepResult{Run: c.Run}
		case a.Current:
			out, err = e.Current(ctx, c.Run)
		default:
			out = b.stepResult(c.Run)
		}
		return err
	})
	return out, err
}

// Poll takes a run's due poll step up to its answer: the job's status is
// asked (the job port's Poll) and returned for PollRecord; nothing is
// written. A poll step that cannot be taken (the run is not running, or
// is gone) is dropped, as every step's is.
func (e *Engine) Poll(ctx context.Context, ref StepRef) (StepResult, *Polled, error) {
	res, taken, err := e.takeStep(ctx, ref, run.StepPoll, nil, func(*facts, needs.Configs) needs.Set { return needs.Call(ref.Run) })
	if err != nil || res.Acted || !taken.Poll {
		return res, nil, err
	}
	r, lp := *taken.Run, taken.Pipeline
	jctx, span := e.startSpan(ctx, spanJobPoll, attrJobType.String(string(lp.P.Job.Type)))
	jr, perr := e.jobs.Poll(jctx, e.request(lp.P, r))
	endSpan(span, perr)
	polled := &Polled{Run: r.Key, Due: taken.Timer.DueAt, Generation: r.Generation, Attempt: r.Attempt, JobRunID: r.JobRunID, Result: jr}
	if perr != nil {
		e.log.WarnContext(ctx, "job status poll failed; will poll again", "pipeline", r.PipelineID, "period", r.Period, "err", perr)
		polled.Err = perr.Error()
	}
	return res, polled, nil
}

// PollRecord records a poll's answer: the job succeeded (the run
// completes: baseline, SLA verdict, in the same commit), failed (retry
// within the budget, or end), or is still running (poll again, or end
// when the poll window closed). It commits only if the poll step it
// answers is still due and the run still runs the job polled: a repeated
// record returns the run's current next step.
func (e *Engine) PollRecord(ctx context.Context, p Polled) (StepResult, error) {
	report := pollReport(p.Result, p.Err == "")
	answer := &decide.PollAnswer{Generation: p.Generation, Attempt: p.Attempt, JobRunID: p.JobRunID,
		JobAnswer: decide.JobAnswer{Report: report, Output: boundOutput(p.Result.Output)}}
	res, _, err := e.takeStep(ctx, StepRef{Run: p.Run, Due: p.Due}, run.StepPoll, answer, func(_ *facts, cfg needs.Configs) needs.Set {
		return needs.Poll(cfg(p.Run.PipelineID), p.Run, report)
	})
	return res, err
}
