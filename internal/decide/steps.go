package decide

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// A run's lifecycle is a sequence of steps — evaluate, trigger (begin,
// call, record), poll (call, record) — each taken when the run's step
// timer says it is due. The job calls are the engine's; their answers
// are inputs of the next decision here (Step with a JobAnswer, Answer).

// JobAnswer is what a job reported, as a decision reads it.
type JobAnswer struct {
	Report run.JobReport
	// Output is the end of what the job printed, bounded and cleaned by
	// the engine (the job port's bound): the detail of the event that
	// reports how the job ended.
	Output string
}

// afterResult decides what follows a job's reported status.
func afterResult(f *Facts, p *pipeline.Pipeline, r run.Run, a JobAnswer, now time.Time) (run.Run, run.Effect, error) {
	next, eff, err := AfterReport(f, p, r, a.Report, now)
	if err == nil && a.Report.Known {
		eff = run.WithJobOutput(eff, a.Output)
	}
	return next, eff, err
}

// PollAnswer is a poll's answer to record: the job polled and its
// report.
type PollAnswer struct {
	Generation, Attempt int
	JobRunID            string
	JobAnswer
}

// StepIn is a run's step to decide.
type StepIn struct {
	Run  run.Key
	Step run.Step
	// Due is the due time of the step timer when the caller learned of
	// the step (zero: the step of that kind due now); Since the stamp the
	// caller holds the run by (zero: whoever holds it). See run.TimerDue,
	// run.Superseded.
	Due, Since time.Time
	// Poll is the answer of the poll step to record; nil: the poll step
	// itself (the engine asks the job: StepTaken.Poll).
	Poll *PollAnswer
	// Findable says which job types an interrupted call's lookup can ask
	// (StepTaken.Lookup).
	Findable Findable
	Env
}

// StepTaken says what a step decision found beside its outcome.
type StepTaken struct {
	// Timer is the run's step timer as read (nil: none).
	Timer *store.Timer
	// Superseded: the caller no longer holds the run.
	Superseded bool
	// Due: the step was due (it was taken, or its timer dropped).
	Due bool
	// Run and Pipeline are the run the step is about and its pipeline
	// (nil when gone).
	Run      *run.Run
	Pipeline *Pipeline
	// Begun is the trigger call the outcome commits as in flight.
	Begun *run.CallID
	// Poll: the poll step is due: the engine asks the job (nothing is
	// committed), and records its answer with Step and a PollAnswer.
	Poll bool
	// Recover: the trigger step is that of a call in flight whose outcome
	// is to be established: the engine looks the job up when Lookup says
	// so (its type can be asked), then decides with Recovered.
	Recover, Lookup bool
	// NoCommit: nothing is to be committed now (a poll to make, an answer
	// about another job).
	NoCommit bool
}

// Step decides a run's step if it is due: its run's step timer has that
// kind, is due by now, and is in.Due when that is set. A run that is
// gone, or whose pipeline no longer runs, has its step timer dropped.
// The outcome moves or removes the step timer, on the condition of its
// due time read, so a step is taken once however many callers race for
// it.
func Step(in StepIn, f *Facts, now time.Time) (*Outcome, StepTaken, error) {
	var taken StepTaken
	key := StepTimerKey(in.Run)
	t, err := f.Timer(key)
	if err != nil || t == nil {
		return nil, taken, err
	}
	taken.Timer = t
	if run.Superseded(in.Since, run.StampOf(t.Detail)) {
		taken.Superseded = true
		return nil, taken, nil
	}
	if !run.TimerDue(run.TimerAt{Kind: t.Kind, At: t.DueAt}, string(in.Step), in.Due, now) {
		return nil, taken, nil
	}
	taken.Due = true
	r, err := f.Run(in.Run)
	if err != nil {
		return nil, taken, err
	}
	var lp *Pipeline
	if r != nil {
		if lp, err = f.Pipeline(in.Run.PipelineID); err != nil {
			return nil, taken, err
		}
	}
	o := New(lp, f, now, in.Env)
	o.ReadStep(t.Key, t)
	if r != nil && lp == nil {
		o.log(slog.LevelWarn, "run of an unknown pipeline; its timer is dropped", "pipeline", in.Run.PipelineID, "period", in.Run.Period)
		r = nil
	}
	taken.Run, taken.Pipeline = r, lp
	if r != nil {
		if err := o.step(in, lp, r, t.DueAt, &taken); err != nil {
			return nil, taken, err
		}
	}
	if taken.NoCommit || taken.Recover {
		return o, taken, nil
	}
	if !o.TouchesTimer(key) {
		due := t.DueAt
		o.DeleteTimer(key, &due)
	}
	return o, taken, nil
}

// step adds a due step's decision about r to o. Adding nothing drops the
// step timer: the step cannot be taken (a paused pipeline, a run in
// another state).
func (o *Outcome) step(in StepIn, lp *Pipeline, r *run.Run, due time.Time, taken *StepTaken) error {
	switch in.Step {
	case run.StepEvaluate:
		if run.StepFor(*r, run.StepEvaluate, o.Paused()) != run.StepTake {
			return nil
		}
		return o.EvaluateRun(lp, r, r, run.Effect{}, nil, &due)
	case run.StepTrigger:
		switch run.StepFor(*r, run.StepTrigger, o.Paused()) {
		case run.StepDrop:
			return nil // another state, or a pause stops new triggers: Resume re-arms the step
		case run.StepRecoverCall:
			taken.Recover = true
			taken.Lookup = in.Findable != nil && in.Findable(string(lp.P.Job.Type))
			return nil
		}
		inflight, eff := run.BeginTrigger(*r, lp.P, o.Now)
		if err := o.ApplyRun(lp, r, inflight, eff, &due); err != nil {
			return err
		}
		c := inflight.Call()
		taken.Begun = &c
		return nil
	case run.StepPoll:
		if run.StepFor(*r, run.StepPoll, o.Paused()) != run.StepTake {
			return nil
		}
		if in.Poll == nil {
			taken.Poll, taken.NoCommit = true, true
			return nil
		}
		if !r.RunsJob(in.Poll.Generation, in.Poll.Attempt, in.Poll.JobRunID) {
			taken.NoCommit = true // the answer is about another job
			return nil
		}
		next, eff, err := afterResult(o.F, lp.P, *r, in.Poll.JobAnswer, o.Now)
		if err != nil {
			return err
		}
		return o.ApplyRun(lp, r, next, eff, &due)
	}
	return fmt.Errorf("decide: %q is not a step", in.Step)
}

// AnswerIn is the answer of a trigger call to record.
type AnswerIn struct {
	Run  run.Key
	Call run.CallID
	// Err: the call failed (an infrastructure error); else the job
	// started as JobRunID, Meta, and Result when it reported at once.
	Err      string
	JobRunID string
	Meta     map[string]string
	Result   *JobAnswer
	Env
}

// Answered says what an answer's decision found beside its outcome.
type Answered struct {
	// Gone: the run is gone; the answer is not recorded.
	Gone bool
	// Current: nothing is recorded for the run's step (recorded already,
	// or late: the outcome reports a late answer at most); the caller
	// answers the run's current step.
	Current bool
	// Late: the run moved on during the call (the outcome reports it
	// once).
	Late bool
}

// Answer decides the answer of a trigger call: the job started (poll it
// next; a synchronous job's verdict at once) or the call failed (retry
// with backoff, or give up). It records only while the run waits for
// this very call (run.AnswerStanding); an answer that comes after the run
// moved on is reported once (run.LateCallNote). A call begun is
// recorded even when the pipeline was paused or its file removed
// meanwhile: on the row as it is now, with the config stored in it.
func Answer(in AnswerIn, f *Facts, now time.Time) (*Outcome, Answered, error) {
	stored, err := f.Run(in.Run)
	if err != nil {
		return nil, Answered{}, err
	}
	if stored == nil {
		o := New(nil, f, now, in.Env)
		o.log(slog.LevelError, "the run of a trigger call is gone; its answer is not recorded", "pipeline", in.Run.PipelineID, "period", in.Run.Period, "jobRunId", in.JobRunID)
		return o, Answered{Gone: true}, nil
	}
	cur := *stored
	switch run.AnswerStanding(cur, in.Call, in.Err == "") {
	case run.AnswerRecorded:
		return New(nil, f, now, in.Env), Answered{Current: true}, nil
	case run.AnswerLate:
		o, err := reportLate(in, f, cur, now)
		return o, Answered{Current: true, Late: true}, err
	}
	lp, err := f.CallingPipeline(in.Run.PipelineID)
	if err != nil {
		return nil, Answered{}, err
	}
	if lp == nil {
		return nil, Answered{}, fmt.Errorf("engine: trigger answer of %s %s %s: no stored config of the pipeline loads", in.Run.PipelineID, in.Run.ScheduleID, in.Run.Period)
	}
	o := New(lp, f, now, in.Env)
	var expect *time.Time
	t, err := f.Timer(StepTimerKey(in.Run))
	if err != nil {
		return nil, Answered{}, err
	}
	if t != nil {
		expect = &t.DueAt
	}
	o.ReadStep(StepTimerKey(in.Run), t)
	next, eff, err := afterCall(f, lp, cur, in, now)
	if err != nil {
		return nil, Answered{}, err
	}
	return o, Answered{}, o.ApplyRun(lp, &cur, next, eff, expect)
}

// afterCall decides what follows a trigger call's answer for the run r
// that awaits it.
func afterCall(f *Facts, lp *Pipeline, r run.Run, in AnswerIn, now time.Time) (run.Run, run.Effect, error) {
	if in.Err != "" {
		next, eff := run.AfterTriggerError(r, in.Err, lp.P, now)
		return next, eff, nil
	}
	next, eff := run.Triggered(r, string(lp.P.Job.Type), in.JobRunID, in.Meta, lp.P, now)
	if deps.NamesParent(r) {
		notes, err := withUpstreamParent(f, lp.P, r, eff.Notes)
		if err != nil {
			return r, run.Effect{}, err
		}
		eff.Notes = notes
	}
	if in.Result == nil {
		return next, eff, nil
	}
	n2, e2, err := afterResult(f, lp.P, next, *in.Result, now)
	if err != nil {
		return r, run.Effect{}, err
	}
	e2.Notes = append(eff.Notes, e2.Notes...)
	return n2, e2, nil
}

// reportLate reports, once per call, the answer of a call that came
// after its run moved on: the call's outcome is a fact (a job may have
// started for a run that ended), so it is reported rather than dropped.
// The period's MarkerLateCall remembers which call was reported.
func reportLate(in AnswerIn, f *Facts, cur run.Run, now time.Time) (*Outcome, error) {
	late := New(nil, f, now, in.Env) // a fact to report, whatever the pipeline's state
	m, err := f.Marker(cur.Key, run.MarkerLateCall)
	if err != nil {
		return nil, err
	}
	var reported *sensor.Object
	if m != nil {
		reported = &m.Detail
	}
	a := run.LateAnswer{Err: in.Err, JobRunID: in.JobRunID}
	if in.Result != nil {
		a.Status = in.Result.Report.Status
	}
	note, ok := run.LateCallNote(cur, in.Call, a, reported)
	if !ok {
		return late, nil // reported already: a repeated record
	}
	late.log(slog.LevelError, "run changed during its trigger call", "pipeline", cur.PipelineID, "period", cur.Period, "state", cur.State)
	late.Notes(cur.Key, []run.Note{note})
	late.Marker(store.Marker{Key: cur.Key, Kind: run.MarkerLateCall, At: now, Detail: in.Call.Detail()}, reported == nil)
	return late, nil
}

// withUpstreamParent names, on the JOB_TRIGGERED notes of a run its
// upstreams opened, the upstream run it counts as started by
// (deps.UpstreamParent), reading the upstreams' configs.
func withUpstreamParent(f *Facts, p *pipeline.Pipeline, r run.Run, notes []run.Note) ([]run.Note, error) {
	per, err := schedule.ParsePeriod(r.Period)
	if err != nil {
		return notes, nil
	}
	ups := map[string]*pipeline.Pipeline{}
	for _, u := range p.Upstreams {
		lp, err := f.Pipeline(u.Pipeline)
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
