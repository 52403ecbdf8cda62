// Package run defines a run — one pipeline, schedule and period going from
// evaluation to a terminal state — and its state machine. It owns the run
// states, the terminal outcomes and every lifecycle transition with its
// effect (events, the next step and when, the ledger entry), budgets and
// retries, reruns, the routing of an input (a sensor write, a tick, a due
// timer) to a run, a trigger call's recovery, and the typed timer keys and
// marker kinds.
//
// The other decisions are packages of their own that import run, never the
// reverse: sla, backfill, deps (upstreams, root causes, alert
// conditions), board, pause and dryrun. run performs no I/O and never
// reads the clock.
package run

import (
	"time"
)

// State is where a run is in its lifecycle.
type State string

// The run states. Who moves a run into each state is noted.
const (
	// Evaluating: the validation rules are evaluated at evaluation.interval
	// until they pass or evaluation.window closes. Entered by a cron tick,
	// a trigger sensor, an accepted rerun, or the watchdog's recovery.
	Evaluating State = "EVALUATING"
	// Triggering: the rules passed (or a failed job is retried); the job's
	// trigger call is due, in flight, or waiting to retry an
	// infrastructure error. Entered by the evaluate and poll steps.
	Triggering State = "TRIGGERING"
	// Running: the job started and is polled at job.pollInterval until it
	// reports a result or job.pollWindow closes. Entered by the trigger step.
	Running State = "RUNNING"
	// Completed: the job succeeded. Terminal until a rerun reopens it.
	Completed State = "COMPLETED"
	// FailedFinal: the run ended without success; Outcome says why.
	// Terminal until a rerun reopens it.
	FailedFinal State = "FAILED_FINAL"
)

// States lists every state in lifecycle order.
func States() []State { return []State{Evaluating, Triggering, Running, Completed, FailedFinal} }

// Terminal reports whether s ends a run.
func (s State) Terminal() bool { return s == Completed || s == FailedFinal }

// Outcome says why a run is terminal.
type Outcome string

// The outcomes.
const (
	OutcomeNone                Outcome = ""
	OutcomeSucceeded           Outcome = "succeeded"            // the job reported success
	OutcomeValidationExhausted Outcome = "validation-exhausted" // the evaluation window closed
	OutcomeRetriesExhausted    Outcome = "retries-exhausted"    // the job failed and the retry budget is used up
	OutcomeTriggerExhausted    Outcome = "trigger-exhausted"    // the trigger call kept failing (state unknown)
	OutcomePollExhausted       Outcome = "poll-exhausted"       // the poll window closed (state unknown)
	OutcomeTriggerUnknown      Outcome = "trigger-unknown"      // the process stopped during a trigger call (state unknown)
	OutcomeDeadlineExpired     Outcome = "deadline-expired"     // schedule.trigger.deadline passed with no run
	OutcomeTimedOut            Outcome = "timed-out"            // the run's time-to-live expired (SFN_TIMEOUT)
	OutcomeExcluded            Outcome = "excluded"             // a retry was refused because the period is excluded
)

// Key identifies the run of one pipeline, schedule and period. At most one
// run exists per key: creating it is the exclusive per-period trigger lock.
type Key struct {
	PipelineID string
	ScheduleID string
	Period     string // schedule.Period.String()
}

// Cause says what started (or reopened) a run.
type Cause string

// Causes.
const (
	CauseCron      Cause = "cron"
	CauseSensor    Cause = "sensor"
	CauseRerun     Cause = "rerun"
	CauseRecovered Cause = "recovered" // the watchdog found a sensor that should have started it
	CauseResume    Cause = "resume"
	CauseDeadline  Cause = "deadline" // closed by its trigger deadline without ever running
	CauseBackfill  Cause = "backfill" // started or reopened by a backfill (run.ReasonBackfill)
	CauseUpstream  Cause = "upstream" // an upstream's success opened it (deps.OpensOnUpstream)
)

// Failure is the last failure a job reported.
type Failure struct {
	Category Category
	Message  string
}

// Category classifies a job failure.
type Category string

// Failure categories (reference: TRANSIENT, PERMANENT, TIMEOUT).
const (
	Transient Category = "TRANSIENT"
	Permanent Category = "PERMANENT"
	Timeout   Category = "TIMEOUT"
)

// Run is the stored record of a run.
type Run struct {
	Key
	Version int64 // compare-and-swap version, bumped by every write
	State   State
	Outcome Outcome
	Cause   Cause

	Generation int // 0 for the first run of the period, +1 per accepted rerun
	Attempt    int // job triggers in this generation (1 after the first trigger)

	CreatedAt  time.Time
	UpdatedAt  time.Time
	StateSince time.Time // when State was entered (stuck-run detection)
	ExpiresAt  time.Time // time-to-live of a non-terminal run; zero when terminal

	EvalStartedAt time.Time // start of the current evaluation window
	EvalDeadline  time.Time // evaluation.window closes here

	TriggerErrors   int  // consecutive infrastructure errors of the current trigger call
	TriggerInFlight bool // a trigger call was started and its result not yet recorded

	JobRunID     string            // the job system's run id
	JobMeta      map[string]string // what the job type needs to poll (survives restarts)
	JobStartedAt time.Time
	PollDeadline time.Time

	EndedAt     time.Time // when the run became terminal
	LastFailure *Failure  // the last job failure, if any

	ConfigVersion int64 // the pipeline config version the run started with
}
