package decide

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// Rerun decides a rerun inside the outcome (the engine's own, for late
// data, drift and backfills), whose verdict no one is told.
func (o *Outcome) Rerun(lp *Pipeline, key run.Key, existing *run.Run, reason, source string, overlay *store.Sensor) error {
	_, err := o.DecideRerun(lp, key, existing, reason, source, overlay)
	return err
}

// DecideRerun decides a rerun inside the outcome and returns the verdict
// the core gave (run.RerunNotes), for the requester.
func (o *Outcome) DecideRerun(lp *Pipeline, key run.Key, existing *run.Run, reason, source string, overlay *store.Sensor) (run.RerunVerdict, error) {
	p := lp.P
	per, err := ParsePeriod(key.Period)
	if err != nil {
		return run.RerunVerdict{}, err
	}
	ledger, err := o.F.Ledger(key)
	if err != nil {
		return run.RerunVerdict{}, err
	}
	in := run.RerunInput{Reason: reason, Existing: existing, Ledger: LedgerReasons(ledger), Exclusion: run.ExclusionReason(p, per)}
	if in.NeedsFreshData() {
		in.FreshData, err = o.freshSince(p.ID, existing, overlay)
		if err != nil {
			return run.RerunVerdict{}, err
		}
	}
	d := run.DecideRerun(in, p)
	notes, reopen, v := run.RerunNotes(p, reason, d)
	o.Notes(key, notes)
	if !reopen {
		return v, nil
	}
	r, eff := run.Reopen(existing, key, reason, source, d, lp.Row.ConfigVersion, p, o.Now)
	if err := o.ApplyRun(lp, existing, r, eff, nil); err != nil {
		return v, err
	}
	return v, o.ArmSLA(p, key, per)
}

// freshSince reports whether any sensor of the pipeline received new
// content after the run succeeded — the circuit breaker's question.
func (o *Outcome) freshSince(pipelineID string, r *run.Run, overlay *store.Sensor) (bool, error) {
	if overlay != nil && run.FreshSince(*r, overlay.ChangedAt) {
		return true, nil
	}
	return o.F.ChangedAfter(ChangedSince{PipelineID: pipelineID, Since: r.EndedAt})
}

// RerunRequestIn is an operator's rerun request to decide.
type RerunRequestIn struct {
	PipelineID string
	// Period and Reason are as asked: a period the pipeline does not run
	// (run.CheckRerunPeriod), or a bad reason (run.CheckRerunReason), is
	// ErrInvalidRequest.
	Period string
	Reason string
	// RequestID names a request that may be delivered more than once
	// ("": none); one decided before decides nothing (Duplicate).
	RequestID string
	Env
}

// RerunDecided is the verdict on a rerun request.
type RerunDecided struct {
	Accepted  bool
	Refusal   string
	Period    string
	Duplicate bool
}

// RerunRequest decides an operator's rerun request: a period the
// pipeline runs, a valid reason (ErrInvalidRequest otherwise), then
// budgets and the circuit breaker decide (DecideRerun); the outcome holds
// RERUN_ACCEPTED or RERUN_REJECTED and, accepted, the reopened run.
func RerunRequest(in RerunRequestIn, f *Facts, now time.Time) (*Outcome, RerunDecided, error) {
	lp, err := f.KnownPipeline(in.PipelineID)
	if err != nil {
		return nil, RerunDecided{}, err
	}
	per, err := schedule.ParsePeriod(in.Period)
	if err != nil {
		return nil, RerunDecided{}, fmt.Errorf("%w: period: %v", ErrInvalidRequest, err)
	}
	recs, err := f.TriggerRecords(lp.P) // a trigger-only pipeline's sensors say which kinds of period it runs
	if err != nil {
		return nil, RerunDecided{}, err
	}
	if err := run.CheckRerunPeriod(lp.P, per, now, recs); err != nil {
		return nil, RerunDecided{}, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	reason, err := run.CheckRerunReason(in.Reason)
	if err != nil {
		return nil, RerunDecided{}, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	key := run.Key{PipelineID: in.PipelineID, ScheduleID: lp.P.ScheduleID(), Period: per.String()}
	o := New(lp, f, now, in.Env)
	if in.RequestID != "" {
		kind := run.ItemMarker(run.MarkerRerunRequest, in.RequestID).String()
		seen, err := f.HasMarker(key, kind)
		if err != nil || seen {
			return o, RerunDecided{Period: key.Period, Duplicate: seen}, err
		}
		o.Marker(store.Marker{Key: key, Kind: kind, At: now, Detail: run.Detail("reason", reason)}, true)
	}
	existing, err := f.Run(key)
	if err != nil {
		return nil, RerunDecided{}, err
	}
	v, err := o.DecideRerun(lp, key, existing, reason, "request", nil)
	if err != nil {
		return nil, RerunDecided{}, err
	}
	return o, RerunDecided{Period: key.Period, Accepted: v.Accepted, Refusal: v.Refusal}, nil
}
