package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
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

// errNoCommit: the step decided to commit nothing now — its facts say it
// is not this caller's to take, or the rest of it is the caller's (a
// poll's answer is recorded by PollRecord).
var errNoCommit = errors.New("engine: nothing to commit")

// stepDecision adds a due step's decision about r to b (due: the step
// timer's due time, a condition of the commit). Adding nothing drops the
// step timer: the step cannot be taken (a paused pipeline, a run in
// another state).
type stepDecision func(b *batch, lp *loadedPipeline, r *run.Run, due time.Time) error

// takeStep takes a step of kind step if it is due: its run's step timer
// has that kind, is due by the clock, and is ref.Due when that is set.
// A run that is gone, or whose pipeline no longer runs, has its step
// timer dropped. A conflicting commit decides again on fresh facts.
//
// The step's facts are loaded first, in one batch: those need names
// (needs.Step, needs.Call, needs.Poll).
func (e *Engine) takeStep(ctx context.Context, ref StepRef, step run.Step, need needsFunc, decide stepDecision) (StepResult, error) {
	var res StepResult
	err := e.retry(ctx, string(step)+" step of "+keyString(ref.Run), func(ctx context.Context) error {
		f, err := e.loadFacts(ctx, need)
		if err != nil {
			return err
		}
		t, due, err := e.dueStep(ctx, f, ref, step)
		if err == nil && t != nil && run.Superseded(ref.Since, run.StampOf(t.Detail)) {
			res = StepResult{Run: ref.Run, Superseded: true}
			return nil
		}
		if err != nil || !due {
			res = current(ref.Run, t)
			return err
		}
		r, lp, err := e.runFor(ctx, f, ref.Run)
		if err != nil {
			return err
		}
		b := e.newBatch(lp, e.clk.Now()).withFacts(f)
		b.ReadStep(t.Key, t)
		if r != nil {
			err := decide(b, lp, r, t.DueAt)
			if errors.Is(err, errNoCommit) {
				res = current(ref.Run, t)
				return nil
			}
			if err != nil {
				return err
			}
		}
		key := stepTimerKey(ref.Run)
		if !b.TouchesTimer(key) {
			b.DeleteTimer(key, &t.DueAt)
		}
		if err := b.commit(ctx); err != nil {
			return err
		}
		res = b.stepResult(ref.Run)
		return nil
	})
	return res, err
}

// dueStep reads the run's step timer (nil when it has none) and reports
// whether ref's step of kind step is due.
func (e *Engine) dueStep(ctx context.Context, f *facts, ref StepRef, step run.Step) (*store.Timer, bool, error) {
	t, err := f.timer(ctx, stepTimerKey(ref.Run))
	if t == nil || err != nil {
		return nil, false, err
	}
	return t, run.TimerDue(run.TimerAt{Kind: t.Kind, At: t.DueAt}, string(step), ref.Due, e.clk.Now()), nil
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
	return e.takeStep(ctx, ref, run.StepEvaluate, e.stepNeeds(run.StepEvaluate, ref.Run), func(b *batch, lp *loadedPipeline, r *run.Run, due time.Time) error {
		if run.StepFor(*r, run.StepEvaluate, b.Paused()) != run.StepTake {
			return nil
		}
		return e.evaluateRun(ctx, b, lp, r, r, run.Effect{}, nil, &due)
	})
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
	var call *Call
	res, err := e.takeStep(ctx, ref, run.StepTrigger, e.stepNeeds(run.StepTrigger, ref.Run), func(b *batch, lp *loadedPipeline, r *run.Run, due time.Time) error {
		call = nil
		switch run.StepFor(*r, run.StepTrigger, b.Paused()) {
		case run.StepDrop:
			return nil // another state, or a pause stops new triggers: Resume re-arms the step
		case run.StepRecoverCall:
			return e.recoverCall(ctx, b, lp, r, due)
		}
		inflight, eff := run.BeginTrigger(*r, lp.P, b.Now)
		if err := e.applyRun(ctx, b, lp, r, inflight, eff, &due); err != nil {
			return err
		}
		call = &Call{Run: r.Key, ID: inflight.Call(), Trace: traceparent(ctx)}
		return nil
	})
	if err != nil || !res.Acted {
		return res, nil, err
	}
	return res, call, nil
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
	stored, err := f.run(ctx, c.Run)
	if err != nil {
		return CallResult{}, err
	}
	if stored == nil {
		return CallResult{NotMade: "the run is gone"}, nil
	}
	r := *stored
	if !r.Awaits(c.ID) {
		return CallResult{NotMade: fmt.Sprintf("the run no longer waits for this call (%s, attempt %d)", r.State, r.Attempt)}, nil
	}
	lp, err := e.callingPipeline(ctx, f, c.Run.PipelineID)
	if err != nil {
		return CallResult{}, err
	}
	if lp == nil {
		return CallResult{}, fmt.Errorf("engine: trigger call of %s: no stored config of the pipeline loads", keyString(c.Run))
	}
	jctx, span := e.startSpan(ctx, spanJobStart, attrJobType.String(string(lp.P.Job.Type)))
	started, serr := e.jobs.Start(jctx, e.request(lp.P, r))
	endSpan(span, serr)
	if serr != nil {
		return CallResult{Err: serr.Error()}, nil
	}
	return CallResult{Started: started}, nil
}

// TriggerRecord records the answer of a trigger call: the job started
// (poll it next; a synchronous job's verdict at once: success, failure
// and retry) or the call failed (retry it with backoff, or give up). It
// commits only while the run waits for this very call
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
	var out StepResult
	err := e.retry(ctx, "trigger answer of "+keyString(c.Run), func(ctx context.Context) error {
		f, err := e.loadFacts(ctx, func(f *facts, cfg needs.Configs) needs.Set {
			var report *run.JobReport
			if res.Err == "" && res.Started.Result != nil {
				r := pollReport(*res.Started.Result, true)
				report = &r
			}
			return needs.Answer(cfg(c.Run.PipelineID), f.ReadRuns, c.Run, c.ID, report)
		})
		if err != nil {
			return err
		}
		stored, err := f.run(ctx, c.Run)
		if err != nil {
			return err
		}
		if stored == nil {
			e.log.ErrorContext(ctx, "the run of a trigger call is gone; its answer is not recorded", "pipeline", c.Run.PipelineID, "period", c.Run.Period, "jobRunId", res.Started.JobRunID)
			out = StepResult{Run: c.Run}
			return nil
		}
		cur := *stored
		switch run.AnswerStanding(cur, c.ID, res.Err == "") {
		case run.AnswerRecorded:
			out, err = e.Current(ctx, c.Run)
			return err
		case run.AnswerLate:
			if err := e.reportLate(ctx, f, cur, c.ID, res); err != nil {
				return err
			}
			out, err = e.Current(ctx, c.Run)
			return err
		}
		// Recording the call's answer is a decision of its own (the next
		// poll, a synchronous job's verdict): on fresh pipeline facts.
		lp, err := e.callingPipeline(ctx, f, c.Run.PipelineID)
		if err != nil {
			return err
		}
		if lp == nil {
			return fmt.Errorf("engine: trigger answer of %s: no stored config of the pipeline loads", keyString(c.Run))
		}
		var expect *time.Time
		b := e.newBatch(lp, e.clk.Now()).withFacts(f)
		t, err := f.timer(ctx, stepTimerKey(c.Run))
		if err != nil {
			return err
		}
		if t != nil {
			expect = &t.DueAt
		}
		b.ReadStep(stepTimerKey(c.Run), t)
		next, eff, err := e.afterCall(ctx, b.f, lp, cur, res, b.Now)
		if err != nil {
			return err
		}
		if err := e.applyRun(ctx, b, lp, &cur, next, eff, expect); err != nil {
			return err
		}
		if err := b.commit(ctx); err != nil {
			return err
		}
		out = b.stepResult(c.Run)
		return nil
	})
	return out, err
}

// afterCall decides what follows a trigger call's answer for the run r
// that awaits it.
func (e *Engine) afterCall(ctx context.Context, f *facts, lp *loadedPipeline, r run.Run, res CallResult, now time.Time) (run.Run, run.Effect, error) {
	if res.Err != "" {
		next, eff := run.AfterTriggerError(r, res.Err, lp.P, now)
		return next, eff, nil
	}
	next, eff := run.Triggered(r, string(lp.P.Job.Type), res.Started.JobRunID, res.Started.Meta, lp.P, now)
	if deps.NamesParent(r) {
		notes, err := e.withUpstreamParent(ctx, f, lp.P, r, eff.Notes)
		if err != nil {
			return r, run.Effect{}, err
		}
		eff.Notes = notes
	}
	if res.Started.Result == nil {
		return next, eff, nil
	}
	n2, e2, err := e.afterResult(ctx, f, lp.P, next, *res.Started.Result, true, now)
	if err != nil {
		return r, run.Effect{}, err
	}
	e2.Notes = append(eff.Notes, e2.Notes...)
	return n2, e2, nil
}

// reportLate reports, once per call, the answer of a call that came after
// its run moved on: the call's outcome is a fact (a job may have started
// for a run that ended), so it is reported rather than dropped. The
// period's MarkerLateCall remembers which call was reported.
func (e *Engine) reportLate(ctx context.Context, f *facts, cur run.Run, c run.CallID, res CallResult) error {
	m, err := f.marker(ctx, cur.Key, run.MarkerLateCall)
	if err != nil {
		return err
	}
	var reported *sensor.Object
	if m != nil {
		reported = &m.Detail
	}
	stored := reported != nil
	a := run.LateAnswer{Err: res.Err, JobRunID: res.Started.JobRunID}
	if res.Started.Result != nil {
		a.Status = string(res.Started.Result.Status)
	}
	note, ok := run.LateCallNote(cur, c, a, reported)
	if !ok {
		return nil // reported already: a repeated record
	}
	e.log.ErrorContext(ctx, "run changed during its trigger call", "pipeline", cur.PipelineID, "period", cur.Period, "state", cur.State)
	late := e.newBatch(nil, e.clk.Now()) // a fact to report, whatever the pipeline's state
	late.Notes(cur.Key, []run.Note{note})
	late.Marker(store.Marker{Key: cur.Key, Kind: run.MarkerLateCall, At: late.Now, Detail: c.Detail()}, !stored)
	return late.commit(ctx)
}

// Poll takes a run's due poll step up to its answer: the job's status is
// asked (the job port's Poll) and returned for PollRecord; nothing is
// written. A poll step that cannot be taken (the run is not running, or
// is gone) is dropped, as every step's is.
func (e *Engine) Poll(ctx context.Context, ref StepRef) (StepResult, *Polled, error) {
	var polled *Polled
	res, err := e.takeStep(ctx, ref, run.StepPoll, func(*facts, needs.Configs) needs.Set { return needs.Call(ref.Run) }, func(b *batch, lp *loadedPipeline, r *run.Run, due time.Time) error {
		polled = nil
		if run.StepFor(*r, run.StepPoll, b.Paused()) != run.StepTake {
			return nil
		}
		jctx, span := e.startSpan(ctx, spanJobPoll, attrJobType.String(string(lp.P.Job.Type)))
		jr, perr := e.jobs.Poll(jctx, e.request(lp.P, *r))
		endSpan(span, perr)
		polled = &Polled{Run: r.Key, Due: due, Generation: r.Generation, Attempt: r.Attempt, JobRunID: r.JobRunID, Result: jr}
		if perr != nil {
			e.log.WarnContext(ctx, "job status poll failed; will poll again", "pipeline", r.PipelineID, "period", r.Period, "err", perr)
			polled.Err = perr.Error()
		}
		return errNoCommit
	})
	if err != nil || res.Acted {
		return res, nil, err
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
	return e.takeStep(ctx, StepRef{Run: p.Run, Due: p.Due}, run.StepPoll, func(_ *facts, cfg needs.Configs) needs.Set {
		return needs.Poll(cfg(p.Run.PipelineID), p.Run, pollReport(p.Result, p.Err == ""))
	}, func(b *batch, lp *loadedPipeline, r *run.Run, due time.Time) error {
		if run.StepFor(*r, run.StepPoll, b.Paused()) != run.StepTake {
			return nil
		}
		if !r.RunsJob(p.Generation, p.Attempt, p.JobRunID) {
			return errNoCommit // the answer is about another job
		}
		next, eff, err := e.afterResult(ctx, b.f, lp.P, *r, p.Result, p.Err == "", b.Now)
		if err != nil {
			return err
		}
		return e.applyRun(ctx, b, lp, r, next, eff, &due)
	})
}

// callingPipeline reads the pipeline facts a trigger call is made and
// recorded with. A call begun is made, and its answer recorded, even when
// the pipeline was paused or its file removed meanwhile: on the row as it
// is now, with the config stored in it.
func (e *Engine) callingPipeline(ctx context.Context, f *facts, id string) (*loadedPipeline, error) {
	row, ok, err := f.pipelineRow(ctx, id)
	if !ok || err != nil {
		return nil, err
	}
	return e.withConfig(ctx, row, nil)
}

// withUpstreamParent names, on the JOB_TRIGGERED notes of a run its
// upstreams opened, the upstream run it counts as started by
// (deps.UpstreamParent), reading the upstreams' configs.
func (e *Engine) withUpstreamParent(ctx context.Context, f *facts, p *pipeline.Pipeline, r run.Run, notes []run.Note) ([]run.Note, error) {
	per, err := schedule.ParsePeriod(r.Period)
	if err != nil {
		return notes, nil
	}
	ups := map[string]*pipeline.Pipeline{}
	for _, u := range p.Upstreams {
		lp, err := f.pipelineOf(ctx, u.Pipeline)
		if err != nil {
			return nil, err
		}
		if lp != nil {
			ups[u.Pipeline] = lp.P
		}
	}
	id, upPer, ok := deps.UpstreamParent(p, ups, per)
	if !ok {
		return notes, nil
	}
	return deps.WithParent(notes, id, upPer), nil
}
