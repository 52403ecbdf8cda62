package run

import "github.com/interlockhq/interlock/internal/sensor"

// A trigger call is begun (BeginTrigger commits the in-flight mark), made
// (the job port's Start, by whoever owns the call: a worker of the local
// runtime, a Step Functions Task) and its answer recorded. Between the
// mark and the record anything may happen to the run — the watchdog times
// it out, another process finds the call interrupted and adopts its job,
// a Task is retried and records the same answer twice — so the answer is
// recorded only when the run still waits for this very call, which the
// call's identity says.

// CallID identifies one trigger call of a run. The job system knows the
// call by the run id Interlock derives from the generation and attempt;
// the infrastructure errors of the attempt so far tell a retried call
// (same attempt, after an error) from the one before it.
type CallID struct {
	Generation    int `json:"generation"`
	Attempt       int `json:"attempt"`       // the attempt the call makes: the run's Attempt+1
	TriggerErrors int `json:"triggerErrors"` // the run's TriggerErrors when the call began
}

// Detail is c as a marker's detail.
func (c CallID) Detail() sensor.Object {
	return Detail("generation", c.Generation, "attempt", c.Attempt, "triggerErrors", c.TriggerErrors)
}

// ParseCallID reads a CallID from a marker's detail; ok is false when the
// detail is not one.
func ParseCallID(d sensor.Object) (c CallID, ok bool) {
	g, ok1 := intField(d, "generation")
	a, ok2 := intField(d, "attempt")
	te, ok3 := intField(d, "triggerErrors")
	return CallID{Generation: g, Attempt: a, TriggerErrors: te}, ok1 && ok2 && ok3
}

// Call is the identity of the trigger call r makes (or would make next).
func (r Run) Call() CallID {
	return CallID{Generation: r.Generation, Attempt: r.Attempt + 1, TriggerErrors: r.TriggerErrors}
}

// Standing is where a call's answer stands with its run as it now is.
type Standing string

// Standings.
const (
	// AnswerAwaited: the run's call in flight is this call; record the
	// answer.
	AnswerAwaited Standing = "awaited"
	// AnswerRecorded: this call's answer is recorded already (a duplicate
	// record), or its job was adopted by a process that took the call for
	// interrupted; nothing is left to do.
	AnswerRecorded Standing = "recorded"
	// AnswerLate: the run moved on without the answer (timed out, its
	// outcome given up on, reopened by a rerun, or a later call was
	// made); the answer is a fact to report, not a state to record.
	AnswerLate Standing = "late"
)

// AnswerStanding decides where the answer of call c stands with r.
// started says whether the answer is a started job (false: the call
// failed).
//
//	same generation, the call's attempt (or a later one) has a job     recorded: the job is this call's, or adopted under its identity
//	r's call in flight is c                                            awaited
//	same attempt, a later infrastructure error recorded, c failed      recorded: c's error (a duplicate)
//	anything else                                                      late
func AnswerStanding(r Run, c CallID, started bool) Standing {
	if r.Generation == c.Generation {
		switch {
		case r.Attempt >= c.Attempt:
			return AnswerRecorded
		case r.Awaits(c):
			return AnswerAwaited
		case !started && r.Attempt+1 == c.Attempt && r.TriggerErrors > c.TriggerErrors:
			return AnswerRecorded
		}
	}
	return AnswerLate
}

// Awaits reports whether r's trigger call in flight is c: the call may
// be made (a stale or repeated request to make it is refused).
func (r Run) Awaits(c CallID) bool {
	return r.CallInFlight() && r.Call() == c
}
