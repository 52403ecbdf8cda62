package decide

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// Recovery of interrupted trigger calls (run/recovery.go): a run whose
// call is in flight with no process making it. Interrupted decides what
// an engine's start does with one (run.FoundInterrupted); the run's
// trigger step, due, says whether its job is to be looked up first
// (Step: StepTaken.Recover, StepTaken.Lookup), the engine looks it up —
// a job call, an effect — and Recovered decides from the answer
// (run.RecoverTrigger). CallStatus is explain's reading of the same
// facts.

// Findable answers whether a job type can be looked up by the identity
// Interlock gave its call (the runtime's trigger.Findable): an input of
// the decisions, not a fact.
type Findable func(jobType string) bool

// RunID is the identity Interlock gives r's trigger call in flight (its
// attempt's): each job type derives its own from it.
func RunID(r run.Run) string {
	return r.PipelineID + "-" + r.ScheduleID + "-" + r.Period + "-g" + strconv.Itoa(r.Generation) + "-a" + strconv.Itoa(r.Attempt+1)
}

// CallView is what the recovery decisions read about a run's call in
// flight (CallFacts).
type CallView struct {
	Facts run.CallFacts
	// Stored: the period has a recovery marker (readable or not): its
	// replacement is not conditioned on absence.
	Stored bool
	// Unreadable: the stored marker is not a recovery; it is replaced.
	Unreadable bool
	// Due is the step timer's due time (nil: the run has no step timer).
	Due *time.Time
}

// CallFacts reads what the recovery decisions need about r's call in
// flight, of pipeline lp: whether its type can be looked up, the stored
// recovery marker, and the step timer's due time (now when there is
// none: the lease is over). It reads the period's markers and the run's
// step timer (needs.Interrupted, needs.Call).
func CallFacts(f *Facts, lp *Pipeline, r run.Run, findable Findable, now time.Time) (CallView, error) {
	typ := string(lp.P.Job.Type)
	v := CallView{Facts: run.CallFacts{JobType: typ, RunID: RunID(r), Findable: findable != nil && findable(typ)}}
	m, err := f.Marker(r.Key, run.MarkerTriggerOutcome)
	if err != nil {
		return CallView{}, err
	}
	if m != nil {
		c, ok := run.ParseCallRecovery(m.At, m.Detail)
		v.Stored, v.Unreadable = true, !ok
		if ok {
			v.Facts.Recovery = &c
		}
	}
	t, err := f.Timer(StepTimerKey(r.Key))
	if err != nil {
		return CallView{}, err
	}
	v.Facts.StepDue = now
	if t != nil {
		due := t.DueAt
		v.Due, v.Facts.StepDue = &due, due
	}
	return v, nil
}

// CallStatus is explain's sentence about r's trigger call in flight (""
// when none is): run.CallStatus on CallFacts.
func CallStatus(f *Facts, lp *Pipeline, r run.Run, findable Findable, now time.Time) (string, error) {
	if !r.CallInFlight() {
		return "", nil
	}
	v, err := CallFacts(f, lp, r, findable, now)
	if err != nil {
		return "", err
	}
	return run.CallStatus(r, v.Facts), nil
}

// warnUnreadable logs a recovery marker that is replaced unread.
func (o *Outcome) warnUnreadable(v CallView, key run.Key) {
	if v.Unreadable {
		o.log(slog.LevelWarn, "unreadable trigger recovery marker; it is replaced", "pipeline", key.PipelineID, "period", key.Period)
	}
}

// recoveryMarker writes c as the period's recovery marker, on the
// condition of its absence when none was stored.
func (o *Outcome) recoveryMarker(key run.Key, c run.CallRecovery, v CallView) {
	o.Marker(store.Marker{Key: key, Kind: run.MarkerTriggerOutcome, At: c.Since, Detail: c.Detail()}, !v.Stored)
}

// InterruptedIn is a run found, at an engine's start, with its trigger
// call in flight.
type InterruptedIn struct {
	Run      run.Key
	Findable Findable
	Env
}

// Interrupted decides what an engine's start does with a run whose
// trigger call is in flight (run.FoundInterrupted): TRIGGER_OUTCOME_UNKNOWN
// once per call with the recovery marker (its first write conditioned on
// absence), and the trigger step due now for a lookup, or at the lease's
// end. Nothing when the run is gone, no longer calling, of a pipeline
// that no longer runs (its step drops it), or already found.
func Interrupted(in InterruptedIn, f *Facts, now time.Time) (*Outcome, error) {
	none := New(nil, f, now, in.Env)
	stored, err := f.Run(in.Run)
	if err != nil || stored == nil {
		return none, err
	}
	r := *stored
	lp, err := f.Pipeline(in.Run.PipelineID)
	if err != nil || lp == nil || !r.CallInFlight() {
		return none, err
	}
	v, err := CallFacts(f, lp, r, in.Findable, now)
	if err != nil {
		return nil, err
	}
	next, eff, rec, ok := run.FoundInterrupted(r, v.Facts, now)
	o := New(lp, f, now, in.Env)
	o.warnUnreadable(v, r.Key)
	if !ok {
		return o, nil
	}
	if err := o.ApplyRun(lp, &r, next, eff, v.Due); err != nil {
		return nil, err
	}
	o.recoveryMarker(r.Key, rec, v)
	return o, nil
}

// RecoveredIn is the answer of an interrupted call's lookup (Lookup nil:
// the type cannot be looked up, nothing was asked), for the trigger step
// that was due at Due.
type RecoveredIn struct {
	Run      run.Key
	Due      time.Time
	Lookup   *run.Lookup
	Findable Findable
	Env
}

// RecoveryDecided says what a recovery decided beside its outcome.
type RecoveryDecided struct {
	Action run.RecoveryAction // "" when the step was not the recovery's any more
}

// Recovered decides the trigger step of a run whose call is in flight
// (run.RecoverTrigger) from its lookup's answer: adopt the job found,
// call again, look again after a backoff, wait for the lease, or give up
// (outcome unknown). The recovery marker is written (its first write
// conditioned on absence) or removed once the call is settled, and the
// step timer moved or removed on its due time. The facts are the step's
// (Step answered StepTaken.Recover on them).
func Recovered(in RecoveredIn, f *Facts, now time.Time) (*Outcome, RecoveryDecided, error) {
	key := StepTimerKey(in.Run)
	t, err := f.Timer(key)
	if err != nil {
		return nil, RecoveryDecided{}, err
	}
	stored, err := f.Run(in.Run)
	if err != nil {
		return nil, RecoveryDecided{}, err
	}
	var lp *Pipeline
	if stored != nil {
		if lp, err = f.Pipeline(in.Run.PipelineID); err != nil {
			return nil, RecoveryDecided{}, err
		}
	}
	o := New(lp, f, now, in.Env)
	due := in.Due
	if t == nil || !t.DueAt.Equal(due) || stored == nil || lp == nil || !stored.CallInFlight() {
		// Not the step Step found due (a caller's mistake): drop nothing
		// but the step read.
		return o, RecoveryDecided{}, nil
	}
	o.ReadStep(key, t)
	r := *stored
	v, err := CallFacts(f, lp, r, in.Findable, now)
	if err != nil {
		return nil, RecoveryDecided{}, err
	}
	v.Facts.StepDue = due // the timer being processed
	o.warnUnreadable(v, r.Key)
	d := run.RecoverTrigger(r, v.Facts, in.Lookup, lp.P, now)
	if err := o.ApplyRun(lp, &r, d.Run, d.Effect, &due); err != nil {
		return nil, RecoveryDecided{}, err
	}
	switch {
	case d.Recovery != nil:
		o.recoveryMarker(r.Key, *d.Recovery, v)
	case v.Stored:
		o.C.MarkerDeletes = append(o.C.MarkerDeletes, store.MarkerDelete{Key: r.Key, Kind: run.MarkerTriggerOutcome})
	}
	if d.Action.Settles() {
		o.log(slog.LevelInfo, "interrupted trigger call settled", "pipeline", r.PipelineID, "period", r.Period, "action", string(d.Action), "jobRunId", d.Run.JobRunID)
	}
	if !o.TouchesTimer(key) {
		o.DeleteTimer(key, &due)
	}
	return o, RecoveryDecided{Action: d.Action}, nil
}
