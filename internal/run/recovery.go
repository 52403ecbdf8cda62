package run

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/sensor"
)

// An interrupted trigger call is one found in flight (Run.TriggerInFlight)
// with no process to record its answer: the process that made it stopped
// between the "call in flight" commit and the commit of the answer, so
// whether the job started is unknown. Where the job type can be looked up
// by the identity Interlock gave the call (CallFacts.Findable: Airflow,
// Databricks, Step Functions, EMR Serverless), the outcome is established
// by asking: a job that started is adopted, a call that started nothing is
// made again under the same identity. The other types wait out the
// call's lease and end as outcome unknown: a person checks the job system
// and requests a rerun.
//
// The decisions below are FoundInterrupted (at an engine's start, for
// every call in flight: say so at once) and RecoverTrigger (the run's
// trigger step, when the lease ended or a lookup is due).

// LookupWindow is the least time an interrupted call's job is looked up
// for, counted from when the call was found interrupted: a job system that
// is down when Interlock restarts (they often go down together) gets this
// long to answer, even when the call's lease ended while Interlock was
// down. Within the lease, lookups go on until the lease ends.
const LookupWindow = TriggerLease

// CallRecovery is the stored state of establishing the outcome of one
// interrupted trigger call, kept as the period's MarkerTriggerOutcome
// marker: written when the call is found interrupted
// (TRIGGER_OUTCOME_UNKNOWN, once per call), rewritten by each failed
// lookup, removed once the outcome is established or given up on.
type CallRecovery struct {
	Generation int       // the run generation of the call
	Attempt    int       // the call's attempt: the run's Attempt+1 while the call is in flight
	Since      time.Time // when the call was found interrupted (the marker's At)
	GiveUpAt   time.Time // the run ends as outcome unknown here if the outcome is still not established
	Lookups    int       // failed lookups so far
	LastError  string    // the last failed lookup's error
}

// For reports whether c is the recovery of r's call in flight (and not of
// an earlier call of the period whose marker outlived it).
func (c CallRecovery) For(r Run) bool {
	return r.CallInFlight() && c.Generation == r.Generation && c.Attempt == r.Attempt+1
}

// Detail is c as its marker's detail (Since is the marker's At).
func (c CallRecovery) Detail() sensor.Object {
	return Detail("generation", c.Generation, "attempt", c.Attempt, "giveUpAt", c.GiveUpAt, "lookups", c.Lookups, "lastError", c.LastError)
}

// ParseCallRecovery reads a recovery from its marker's time and detail;
// ok is false when the detail is not one.
func ParseCallRecovery(at time.Time, d sensor.Object) (CallRecovery, bool) {
	c := CallRecovery{Since: at}
	gen, ok1 := intField(d, "generation")
	att, ok2 := intField(d, "attempt")
	lookups, ok3 := intField(d, "lookups")
	giveUp, ok4 := d.Str("giveUpAt")
	t, err := time.Parse(time.RFC3339, giveUp)
	if !ok1 || !ok2 || !ok3 || !ok4 || err != nil {
		return CallRecovery{}, false
	}
	c.Generation, c.Attempt, c.Lookups, c.GiveUpAt = gen, att, lookups, t
	c.LastError, _ = d.Str("lastError")
	return c, true
}

func intField(d sensor.Object, k string) (int, bool) {
	v, ok := d.Get(k)
	if !ok {
		return 0, false
	}
	i, ok := v.Int()
	return int(i), ok
}

// CallFacts is what the engine knows about a run's trigger call in flight.
type CallFacts struct {
	JobType string // job.type
	RunID   string // the identity Interlock gave the call (each type derives its own from it)
	// Findable: the job type can be looked up by that identity
	// (trigger.Finder).
	Findable bool
	// StepDue is the due time of the run's step timer: while the call is
	// not known to be interrupted, the end of its lease (BeginTrigger);
	// while its outcome is being established, the next lookup.
	StepDue time.Time
	// Recovery is the stored recovery of the period (nil: none). One that
	// is not For the run's call is ignored.
	Recovery *CallRecovery
}

// recovery is the stored recovery of r's call, nil when there is none.
func (f CallFacts) recovery(r Run) *CallRecovery {
	if f.Recovery == nil || !f.Recovery.For(r) {
		return nil
	}
	c := *f.Recovery
	return &c
}

// Lookup is the answer to a lookup of an interrupted call's job.
type Lookup struct {
	Found    bool              // a job holds the call's identity
	JobRunID string            // the job found
	Meta     map[string]string // what polling it needs
	Err      string            // the job system could not be asked (Found is then meaningless)
}

// RecoveryAction is what RecoverTrigger decided.
type RecoveryAction string

// Recovery actions.
const (
	// RecoveryAdopt: a job holds the call's identity; it is the run's job
	// (RUNNING, JOB_TRIGGERED once).
	RecoveryAdopt RecoveryAction = "adopt"
	// RecoveryRetry: no job holds the identity, so the call started
	// nothing; the trigger step makes it again at once, under the same
	// identity.
	RecoveryRetry RecoveryAction = "retry"
	// RecoveryLookAgain: the lookup failed; ask again after a backoff,
	// within the lookup window.
	RecoveryLookAgain RecoveryAction = "look-again"
	// RecoveryWait: the type cannot be looked up and the lease has not
	// ended; wait for it (a process still making the call may record its
	// answer first).
	RecoveryWait RecoveryAction = "wait"
	// RecoveryGiveUp: the outcome stays unknown; the run ends
	// (INFRA_FAILURE, outcome trigger-unknown) and waits for a person.
	RecoveryGiveUp RecoveryAction = "give-up"
)

// Settles reports whether the action settles the interrupted call (the
// run adopts a job, calls again or gives up) rather than leaving it in
// flight (look again, wait).
func (a RecoveryAction) Settles() bool { return a != RecoveryLookAgain && a != RecoveryWait }

// RecoveryDecision is RecoverTrigger's answer: the run, its effect, and
// the recovery to store (nil: remove the marker).
type RecoveryDecision struct {
	Action   RecoveryAction
	Run      Run
	Effect   Effect
	Recovery *CallRecovery
}

// LookupBackoff is the wait after the k-th (1-based) failed lookup: 15s,
// 30s, 1m, then every 2m. Lookups are reads (or an idempotent start), so
// they may come more often than trigger retries.
func LookupBackoff(k int) time.Duration {
	d := 15 * time.Second
	for i := 1; i < k && d < 2*time.Minute; i++ {
		d *= 2
	}
	return min(d, 2*time.Minute)
}

// newRecovery is the recovery of r's call found interrupted now. A call
// that cannot be looked up ends with its lease; one that can is looked up
// until the lease ends, and for LookupWindow at least.
func newRecovery(r Run, f CallFacts, now time.Time) CallRecovery {
	giveUp := f.StepDue
	if f.Findable {
		giveUp = later(giveUp, now.Add(LookupWindow))
	}
	return CallRecovery{Generation: r.Generation, Attempt: r.Attempt + 1, Since: now, GiveUpAt: giveUp}
}

// FoundInterrupted decides what an engine does at its start with a run
// whose trigger call is in flight: no process of its own is making that
// call, so the process that made it stopped. It says so at once
// (TRIGGER_OUTCOME_UNKNOWN, once per call: not when the stored recovery is
// already this call's) and either asks for a lookup now (a findable type)
// or keeps waiting for the lease's end. ok is false when there is nothing
// to do. (On a store shared by several processes the call may still be in
// flight elsewhere; a lookup and a retry are safe anyway, as a findable
// type keeps one job per identity, and the others only wait.)
func FoundInterrupted(r Run, f CallFacts, now time.Time) (next Run, eff Effect, c CallRecovery, ok bool) {
	if !r.CallInFlight() || f.recovery(r) != nil {
		return r, Effect{}, CallRecovery{}, false
	}
	c = newRecovery(r, f, now)
	announce(&eff, r, f, c)
	r.UpdatedAt = now
	r.ExpiresAt = later(r.ExpiresAt, c.GiveUpAt.Add(ttlMargin))
	eff.Next, eff.NextAt = StepTrigger, c.GiveUpAt
	if f.Findable {
		eff.NextAt = now
	}
	return r, eff, c, true
}

// announce notes TRIGGER_OUTCOME_UNKNOWN for r's call.
func announce(eff *Effect, r Run, f CallFacts, c CallRecovery) {
	giveUp := c.GiveUpAt.UTC().Format(time.RFC3339)
	if f.Findable {
		eff.note(event.TriggerOutcomeUnknown, fmt.Sprintf("the process stopped during the trigger call (attempt %d); establishing its outcome: looking up the %s job by the identity Interlock gave the call (run id %s) — adopted if it started, triggered again if not; if the job system cannot be asked by %s, the outcome stays unknown", c.Attempt, f.JobType, f.RunID, giveUp),
			"jobType", f.JobType, "runId", f.RunID, "attempt", c.Attempt, "lookup", true, "giveUpAt", c.GiveUpAt)
		return
	}
	eff.note(event.TriggerOutcomeUnknown, fmt.Sprintf("the process stopped during the trigger call (attempt %d); %s; the run ends as outcome unknown at %s unless a process still making the call records its answer first — then check the job system and request a rerun", c.Attempt, notFindable(f.JobType), giveUp),
		"jobType", f.JobType, "runId", f.RunID, "attempt", c.Attempt, "lookup", false, "giveUpAt", c.GiveUpAt)
}

func notFindable(jobType string) string {
	return jobType + " jobs cannot be looked up by the identity Interlock gave them"
}

// RecoverTrigger decides what follows when the trigger step of a run whose
// call is in flight comes due: the call's lease ended (no answer was
// recorded: the process making it stopped), or a lookup of an interrupted
// call's job is due. l is the lookup's answer, nil when the engine did
// not look (a type that cannot be looked up).
//
//	cannot be looked up, lease not ended    wait for it
//	cannot be looked up, lease ended        give up: outcome unknown (as before lookups existed)
//	found                                   adopt the job: RUNNING, JOB_TRIGGERED
//	not found                               retry the call at once, same identity
//	lookup failed, window open              look again after LookupBackoff
//	lookup failed, window closed            give up: outcome unknown
//
// A findable call not yet known to be interrupted (its lease ended in a
// running engine) is announced (TRIGGER_OUTCOME_UNKNOWN) with the same
// decision.
func RecoverTrigger(r Run, f CallFacts, l *Lookup, p *pipeline.Pipeline, now time.Time) RecoveryDecision {
	var eff Effect
	c := f.recovery(r)
	if c == nil {
		if !f.Findable {
			// Its lease ended with no answer and nothing to ask.
			next, e := TriggerInterrupted(r, now)
			return RecoveryDecision{Action: RecoveryGiveUp, Run: next, Effect: e}
		}
		fresh := newRecovery(r, f, now)
		c = &fresh
		announce(&eff, r, f, *c)
	}
	if !f.Findable {
		if now.Before(c.GiveUpAt) {
			eff.Next, eff.NextAt = StepTrigger, c.GiveUpAt
			return RecoveryDecision{Action: RecoveryWait, Run: r, Effect: eff, Recovery: c}
		}
		return giveUp(r, eff, f, *c, now)
	}
	if l == nil {
		l = &Lookup{Err: "the job was not looked up"}
	}
	switch {
	case l.Err == "" && l.Found:
		next, e := triggered(r, f.JobType, l.JobRunID, l.Meta, p, now, "adopted after the process stopped during the call: job run "+l.JobRunID+" holds the identity Interlock gave it")
		e.Notes = append(eff.Notes, e.Notes...)
		return RecoveryDecision{Action: RecoveryAdopt, Run: next, Effect: e}
	case l.Err == "":
		r.TriggerInFlight = false
		r.UpdatedAt = now
		r.ExpiresAt = now.Add(TriggerLease + ttlMargin)
		eff.Next, eff.NextAt = StepTrigger, now
		return RecoveryDecision{Action: RecoveryRetry, Run: r, Effect: eff}
	}
	failed := *c
	failed.Lookups++
	failed.LastError = l.Err
	if !now.Before(failed.GiveUpAt) {
		return giveUp(r, eff, f, failed, now)
	}
	r.UpdatedAt = now
	r.ExpiresAt = later(r.ExpiresAt, failed.GiveUpAt.Add(ttlMargin))
	eff.Next, eff.NextAt = StepTrigger, minTime(now.Add(LookupBackoff(failed.Lookups)), failed.GiveUpAt)
	return RecoveryDecision{Action: RecoveryLookAgain, Run: r, Effect: eff, Recovery: &failed}
}

// giveUp ends r as outcome unknown after its recovery c, after the notes
// already in eff.
func giveUp(r Run, eff Effect, f CallFacts, c CallRecovery, now time.Time) RecoveryDecision {
	why := notFindable(f.JobType)
	if f.Findable {
		why = fmt.Sprintf("the %s job could not be looked up (%d lookup(s) failed, the last: %s)", f.JobType, c.Lookups, c.LastError)
	}
	eff.note(event.InfraFailure, fmt.Sprintf("the trigger call (attempt %d) was interrupted (process stopped) and %s: the job may or may not have started — check the job system, then request a rerun", c.Attempt, why),
		"attempt", c.Attempt, "jobType", f.JobType, "runId", f.RunID, "lookups", c.Lookups, "lastError", c.LastError)
	r.end(FailedFinal, OutcomeTriggerUnknown, now)
	eff.Ended = true
	eff.Next = StepNone
	return RecoveryDecision{Action: RecoveryGiveUp, Run: r, Effect: eff}
}

// CallStatus says, for explain, what becomes of r's trigger call in flight
// and when; "" when no call is in flight.
func CallStatus(r Run, f CallFacts) string {
	if !r.CallInFlight() {
		return ""
	}
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	c := f.recovery(r)
	switch {
	case c == nil && f.Findable:
		return fmt.Sprintf("trigger call (attempt %d) in flight since %s; if its answer is not recorded by %s (the end of its lease), the %s job is looked up by the identity Interlock gave it (run id %s)", r.Attempt+1, at(r.UpdatedAt), at(f.StepDue), f.JobType, f.RunID)
	case c == nil:
		return fmt.Sprintf("trigger call (attempt %d) in flight since %s; if its answer is not recorded by %s (the end of its lease), the run ends as outcome unknown: %s", r.Attempt+1, at(r.UpdatedAt), at(f.StepDue), notFindable(f.JobType))
	case f.Findable:
		s := fmt.Sprintf("the process stopped during the trigger call (attempt %d; found at %s); the %s job is being looked up by the identity Interlock gave it (run id %s)", c.Attempt, at(c.Since), f.JobType, f.RunID)
		if c.Lookups > 0 {
			s += fmt.Sprintf("; %d lookup(s) failed, the last: %s", c.Lookups, c.LastError)
		}
		return s + fmt.Sprintf("; next lookup at %s; the run ends as outcome unknown at %s if the job system cannot be asked by then", at(f.StepDue), at(c.GiveUpAt))
	}
	return fmt.Sprintf("the process stopped during the trigger call (attempt %d; found at %s); %s; the run ends as outcome unknown at %s unless a process still making the call records its answer first", c.Attempt, at(c.Since), notFindable(f.JobType), at(c.GiveUpAt))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
