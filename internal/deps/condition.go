package deps

import (
	"time"

	"github.com/interlockhq/interlock/internal/board"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sla"
)

// A condition is what a problem event reports about a period and what
// stays true after it: an SLA breached, a job failed, a schedule missed.
// The event is raised once (its marker), but the condition lasts until
// the period's facts say it cleared — which is what a silence's end and a
// root cause's recovery ask (docs/root-cause.md): alert once more for the
// conditions still holding, resolve the others.

// OpensCondition reports whether an event of type t reports a condition
// that lasts beyond the event (ConditionHolds can judge it). Info events,
// all-clears and one-off reports (a drift, a rejected sensor) open none.
func OpensCondition(t event.Type) bool {
	switch t {
	case event.SLAWarning, event.SLABreach, event.RelativeSLAWarning, event.RelativeSLABreach,
		event.ValidationExhausted, event.JobFailed, event.RetryExhausted, event.JobPollExhausted,
		event.SensorDeadlineExpired, event.SFNTimeout, event.RunStuck,
		event.ScheduleMissed, event.IrregularScheduleMissed, event.PostRunSensorMissing:
		return true
	}
	return false
}

// ConditionFacts are the stored facts of one period that ConditionHolds
// reads, and that the root-cause decisions read of an upstream period
// (Board). store.ConditionFactsOf loads them; tests build them by hand.
type ConditionFacts struct {
	Run *run.Run // the period's run; nil: none
	// Marks are the period's SLA markers (each put by sla.Marks.Set).
	Marks sla.Marks
	// Recovered: SCHEDULE_RECOVERED was reported for the period
	// (MarkerRecovered): a run appeared after it was reported missed.
	Recovered bool
	// Missed: SCHEDULE_MISSED or IRREGULAR_SCHEDULE_MISSED was reported
	// for the period (MarkerScheduleMissed, MarkerIrregularMissed).
	Missed bool
	// PostRunArrived is when the engine last judged a post-run sensor of
	// the period after its success (MarkerPostRunArrived); zero: never.
	PostRunArrived time.Time
	// Paused and FirstLoaded are the pipeline row's (board.Facts).
	Paused      bool
	FirstLoaded time.Time
}

// SetMarker records that the period has a marker of kind, stored at at;
// kinds ConditionFacts does not hold are ignored.
func (f *ConditionFacts) SetMarker(kind string, at time.Time) {
	switch kind {
	case run.MarkerRecovered:
		f.Recovered = true
	case run.MarkerScheduleMissed, run.MarkerIrregularMissed:
		f.Missed = true
	case run.MarkerPostRunArrived:
		f.PostRunArrived = at
	default:
		f.Marks.Set(kind, at)
	}
}

// Board is the facts as the board decisions (board.StateOf) read them.
func (f ConditionFacts) Board() board.Facts {
	return board.Facts{Paused: f.Paused, FirstLoaded: f.FirstLoaded, Run: f.Run, Marks: f.Marks}
}

// Succeeded reports whether the period's job has succeeded: its run is
// COMPLETED (a rerun that reopened it has not, yet).
func (f ConditionFacts) Succeeded() bool { return f.Run != nil && f.Run.State == run.Completed }

// ConditionHolds reports whether the condition e reported for its period
// still holds, judged on the period's stored facts f:
//
//   - SLA warnings and breaches (absolute and relative), VALIDATION_EXHAUSTED,
//     JOB_FAILED, RETRY_EXHAUSTED, JOB_POLL_EXHAUSTED, SFN_TIMEOUT and
//     SENSOR_DEADLINE_EXPIRED: while the period's job has not succeeded;
//   - RUN_STUCK: while the same run (generation) is still in the state it
//     was stuck in;
//   - SCHEDULE_MISSED and IRREGULAR_SCHEDULE_MISSED: while the period has
//     no succeeded run and no SCHEDULE_RECOVERED (a run appeared; its own
//     failure is its own event);
//   - POST_RUN_SENSOR_MISSING: while the job's success stands and no
//     post-run sensor was judged after it;
//   - any other type (OpensCondition false), or a pipeline no longer
//     configured (p nil): false.
//
// now is the instant of the judgement; no condition needs it today, and it
// keeps the signature of every decision.
func ConditionHolds(p *pipeline.Pipeline, e event.Event, f ConditionFacts, now time.Time) bool {
	_ = now
	if p == nil || !OpensCondition(e.Type) {
		return false
	}
	switch e.Type {
	case event.RunStuck:
		if f.Run == nil || f.Run.State.Terminal() {
			return false
		}
		st, _ := e.Detail.Get("state")
		state, _ := st.Str()
		gv, _ := e.Detail.Get("generation")
		gen, ok := gv.Int()
		return ok && run.State(state) == f.Run.State && int(gen) == f.Run.Generation
	case event.ScheduleMissed, event.IrregularScheduleMissed:
		return !f.Succeeded() && !f.Recovered
	case event.PostRunSensorMissing:
		if p.PostRun == nil || !f.Succeeded() {
			return false
		}
		return !f.PostRunArrived.After(f.Run.EndedAt)
	}
	return !f.Succeeded()
}
