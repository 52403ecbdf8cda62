package run

import "time"

// How a runtime that does not scan for due timers (AWS: Step Functions for
// a run's steps, Scheduler schedules for every other timer) realises the
// engine's timers: which runtime part owns a timer, whether a schedule's
// firing is still current, and which timers the watchdog's net takes.

// IsStep reports whether a timer kind is a run's step (evaluate, trigger,
// poll): the run's execution takes it; every other timer (SLA, cron,
// period, resume) is a schedule's.
func IsStep(kind string) bool {
	switch Step(kind) {
	case StepEvaluate, StepTrigger, StepPoll:
		return true
	}
	return false
}

// FiringVerdict is what a schedule's firing does.
type FiringVerdict int

// Firing verdicts.
const (
	// FiringStale: the timer is gone, moved to another due time, or is a
	// run step: nothing to do.
	FiringStale FiringVerdict = iota
	// FiringEarly: the timer is not due yet by this clock: fail, so the
	// scheduler fires again.
	FiringEarly
	// FiringTake: process the timer.
	FiringTake
)

// DecideFiring decides a firing for the due time firedFor of a timer
// stored as t (found false: no timer of that key is stored) at now.
func DecideFiring(t TimerAt, found bool, firedFor, now time.Time) FiringVerdict {
	switch {
	case !found || !t.At.Equal(firedFor) || IsStep(t.Kind):
		return FiringStale
	case t.At.After(now):
		return FiringEarly
	}
	return FiringTake
}

// Swept reports whether the watchdog's net processes timer t at now: a
// timer that is not a run step (the stuck- and stale-run checks watch
// those) and was due grace or more ago, so no schedule stands behind it.
func Swept(t TimerAt, now time.Time, grace time.Duration) bool {
	return !IsStep(t.Kind) && !t.At.After(now.Add(-grace))
}
