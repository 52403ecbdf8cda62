package run

import "time"

// Which step a caller may take. A run's step timer names the step that is
// due and when; a step entry point (or a timer handler) acts only when the
// timer it was given is still the one stored and due, and only on a run
// in the state the step is for. Both questions are answered here, on the
// facts the engine read: the timer and the run as stored, the pipeline's
// pause state and the clock.

// TimerAt is a stored timer as a step reads it: its kind (for a run's
// step timer, the Step) and its due time.
type TimerAt struct {
	Kind string
	At   time.Time
}

// TimerDue reports whether the stored timer t is the one a caller of kind
// kind may act on at now: it has that kind, is due by now, and — when the
// caller names the due time it learned of (asked; zero: whichever is due)
// — is still at that time, exactly or as Announced. A timer that moved
// since (taken by another caller, re-set by a later decision) is not the
// caller's to act on.
//
// A timer moved within one second to the same kind is announced at the
// same instant, so a caller of the first due time may take it: the step is
// still taken once (the commit's condition is the due time read), it is
// only taken by this caller rather than another.
func TimerDue(t TimerAt, kind string, asked, now time.Time) bool {
	return t.Kind == kind && !t.At.After(now) && (asked.IsZero() || t.At.Equal(asked) || Announced(t.At).Equal(asked))
}

// Announced is the instant a step due at at is announced to a runtime
// whose waits count whole seconds: at rounded up to the second. Step
// Functions truncates the fractional seconds of a Wait's TimestampPath, so
// a Task waiting for at itself would arrive up to a second before it, find
// its step not yet due and wait again for the same instant (a spin);
// waiting for Announced(at) it arrives at or after at.
func Announced(at time.Time) time.Time {
	s := at.Truncate(time.Second)
	if s.Before(at) {
		s = s.Add(time.Second)
	}
	return s
}

// StepAction is what a due step does with its run.
type StepAction int

// Step actions.
const (
	// StepDrop: the run is not in the state the step is for (it moved on,
	// or was ended by another path), or a pause holds it: the step timer
	// goes and nothing else is written. Resume re-arms a held run.
	StepDrop StepAction = iota
	// StepTake: the run waits for this step; decide it.
	StepTake
	// StepRecoverCall: a trigger step of a run whose call is in flight
	// (its lease ended, or an interrupted call's lookup is due): establish
	// the call's outcome (RecoverTrigger) instead of making a call.
	StepRecoverCall
)

// StepFor decides what the due step of kind step does with r, paused
// being the pipeline's pause state as read:
//
//	evaluate  r evaluating and not held by a pause           take
//	trigger   r triggering with a call in flight             recover the call (a pause does not stop a call begun)
//	trigger   r triggering, not held by a pause              take
//	poll      r running                                      take (a pause lets running jobs finish)
//	anything else                                            drop
func StepFor(r Run, step Step, paused bool) StepAction {
	held := paused && HeldByPause(r)
	switch step {
	case StepEvaluate:
		if r.State == Evaluating && !held {
			return StepTake
		}
	case StepTrigger:
		switch {
		case r.State != Triggering:
		case r.TriggerInFlight:
			return StepRecoverCall
		case !held:
			return StepTake
		}
	case StepPoll:
		if r.State == Running {
			return StepTake
		}
	}
	return StepDrop
}

// RunsJob reports whether r runs the job a poll asked about (the job of
// generation's attempt, by the job system's id): an answer about another
// job — an earlier attempt's, or one replaced since by a retry or a
// rerun — is not r's to record.
func (r Run) RunsJob(generation, attempt int, jobRunID string) bool {
	return r.State == Running && r.Generation == generation && r.Attempt == attempt && r.JobRunID == jobRunID
}

// CallInFlight reports whether r's trigger call is in flight: begun, its
// answer not recorded.
func (r Run) CallInFlight() bool { return r.State == Triggering && r.TriggerInFlight }
