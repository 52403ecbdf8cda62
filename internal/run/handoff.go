package run

import (
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

// Who holds a run's steps. A runtime that waits for a step instead of
// scanning for it (AWS: a Step Functions execution waits until the step
// timer's due time) holds the run from the moment its waiter was started
// until another is started in its place. The step timer records that
// moment — its stamp — so that a waiter started since supersedes the
// ones before it: a stale waiter that wakes finds the stamp newer than
// its own and ends without taking a step, and a run never has two waiters
// taking turns at its steps. The local runtime scans for due timers and
// passes the stamp it read, so it is never stale.

// StepStamp is what a run's step timer carries beside its kind and due
// time (in the timer's detail).
type StepStamp struct {
	// Since is when the run was handed to the waiter that holds it: the
	// timer armed, or a handoff. Zero on timers written before stamps.
	Since time.Time
	// Handoff reports that this write handed the run to a new waiter: the
	// runtime starts one (on AWS, the stream-router on the timer's MODIFY
	// record; an armed timer's INSERT starts one anyway).
	Handoff bool
}

// The step timer's detail fields of a stamp.
const (
	stampSince   = "since"
	stampHandoff = "handoff"
)

// StampOf reads a step timer's stamp from its detail; a detail without
// one is the zero stamp.
func StampOf(d sensor.Object) StepStamp {
	var s StepStamp
	if v, ok := d.Str(stampSince); ok {
		s.Since, _ = time.Parse(time.RFC3339Nano, v)
	}
	if v, ok := d.Get(stampHandoff); ok {
		s.Handoff, _ = v.Bool()
	}
	return s
}

// Detail is the step timer's detail carrying s (the empty detail for the
// zero stamp). Since keeps its nanoseconds: two handoffs within a second
// must still be told apart.
func (s StepStamp) Detail() sensor.Object {
	if s.Since.IsZero() && !s.Handoff {
		return sensor.Object{}
	}
	fields := map[string]sensor.Value{stampSince: sensor.StringValue(s.Since.UTC().Format(time.RFC3339Nano))}
	if s.Handoff {
		fields[stampHandoff] = sensor.BoolValue(true)
	}
	return sensor.NewObject(fields)
}

// StoredStep is a run's step timer as a decision read it.
type StoredStep struct {
	At    time.Time
	Stamp StepStamp
}

// StampStep decides the stamp of a run's step timer written due at due
// at now: prev is the stored timer as the decision read it (nil: none is
// stored), inStep whether the write is a step's own (its commit is
// conditioned on the step timer it took):
//
//	no stored timer                        armed: Since now (the runtime starts a waiter for a new timer)
//	a step's own write                     the holder keeps the run: the stored Since
//	outside a step, earlier than stored    handoff: Since now — the waiter sleeps until the stored due time, too late
//	outside a step, not earlier            the holder keeps the run (it wakes in time and finds the new due time)
func StampStep(prev *StoredStep, inStep bool, due, now time.Time) StepStamp {
	switch {
	case prev == nil:
		return StepStamp{Since: now}
	case inStep:
		return StepStamp{Since: prev.Stamp.Since}
	case due.Before(prev.At):
		return StepStamp{Since: now, Handoff: true}
	}
	return StepStamp{Since: prev.Stamp.Since}
}

// Superseded reports whether a waiter holding the run since held is
// stale: the stored stamp is newer, another waiter took the run over. A
// caller that names no stamp (zero: the local runtime's tests, waiters
// started before stamps) is never stale.
func Superseded(held time.Time, stored StepStamp) bool {
	return !held.IsZero() && held.Before(stored.Since)
}

// Orphaned reports whether the watchdog resumes a run's step timer t at
// now: a step overdue by grace or more. A waiter takes its step within
// seconds of the due time (a trigger call in flight moved the timer to
// the end of its lease, so it is not overdue), so a step that late has no
// live waiter behind it — its execution timed out, failed, was deleted or
// was never started — and is handed to a new one.
func Orphaned(t TimerAt, now time.Time, grace time.Duration) bool {
	return IsStep(t.Kind) && !t.At.After(now.Add(-grace))
}

// HandsOff reports whether a handoff of a run's step goes ahead: the
// step timer as stored is still the one the caller learned of (due at
// learned: a timer that moved was taken or re-armed meanwhile) and is
// orphaned at now (Orphaned).
func HandsOff(stored TimerAt, learned, now time.Time, grace time.Duration) bool {
	return stored.At.Equal(learned) && Orphaned(stored, now, grace)
}
