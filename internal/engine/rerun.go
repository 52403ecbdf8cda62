package engine

import (
	"context"
	"fmt"

	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// RerunResult is the verdict on a rerun request.
type RerunResult struct {
	Accepted bool
	Reason   string // why it was rejected
	Period   string
	// Duplicate: the request was decided before (RequestRerunOnce); this
	// delivery decided nothing.
	Duplicate bool
}

// RequestRerun asks to run a period again (product spec §3b). Budgets and
// the circuit breaker decide; the outcome is RERUN_ACCEPTED or
// RERUN_REJECTED with the reason, in the event log and in the result. A
// rerun also reopens a period closed by its trigger deadline.
func (e *Engine) RequestRerun(ctx context.Context, pipelineID, period, reason string) (_ RerunResult, err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"rerun", attrPipeline.String(pipelineID), attrPeriod.String(period))
	defer func() { endSpan(span, err) }()
	return e.requestRerun(ctx, pipelineID, period, reason, "")
}

// RequestRerunOnce is RequestRerun for a request that may be delivered
// more than once (the AWS runtime's rerun-request items, read from a
// stream): requestID names the request, and a request already decided
// decides nothing again (the result says Duplicate).
func (e *Engine) RequestRerunOnce(ctx context.Context, pipelineID, period, reason, requestID string) (_ RerunResult, err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"rerun", attrPipeline.String(pipelineID), attrPeriod.String(period))
	defer func() { endSpan(span, err) }()
	if requestID == "" {
		return RerunResult{}, fmt.Errorf("%w: a rerun request needs an id", ErrInvalidRequest)
	}
	return e.requestRerun(ctx, pipelineID, period, reason, requestID)
}

func (e *Engine) requestRerun(ctx context.Context, pipelineID, period, reason, requestID string) (RerunResult, error) {
	lp, err := e.pipelineOf(ctx, pipelineID)
	if err != nil {
		return RerunResult{}, err
	}
	if lp == nil {
		return RerunResult{}, unknown(pipelineID)
	}
	per, err := schedule.ParsePeriod(period)
	if err != nil {
		return RerunResult{}, fmt.Errorf("%w: period: %v", ErrInvalidRequest, err)
	}
	stored, err := e.triggerSensors(ctx, lp.p) // a trigger-only pipeline's sensors say which kinds of period it runs
	if err != nil {
		return RerunResult{}, err
	}
	recs := make([]sensor.Record, len(stored))
	for i, s := range stored {
		recs[i] = s.Record()
	}
	if err := run.CheckRerunPeriod(lp.p, per, e.clk.Now(), recs); err != nil {
		return RerunResult{}, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	if reason, err = run.CheckRerunReason(reason); err != nil {
		return RerunResult{}, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	var res RerunResult
	err = e.retry(ctx, "rerun "+pipelineID+"/"+period, func(ctx context.Context) error {
		f, err := e.loadFacts(ctx, func(_ *facts, cfg needs.Configs) needs.Set {
			return needs.RerunRequest(cfg(pipelineID), pipelineID, per)
		})
		if err != nil {
			return err
		}
		lp, err := f.pipelineOf(ctx, pipelineID)
		if err != nil {
			return err
		}
		if lp == nil {
			return unknown(pipelineID)
		}
		now := e.clk.Now()
		key := run.Key{PipelineID: pipelineID, ScheduleID: lp.p.ScheduleID(), Period: per.String()}
		b := e.newBatch(lp, now).withFacts(f)
		if requestID != "" {
			seen, err := f.hasMarker(ctx, key, run.ItemMarker(run.MarkerRerunRequest, requestID).String())
			if err != nil || seen {
				res = RerunResult{Period: key.Period, Duplicate: seen}
				return err
			}
			b.marker(store.Marker{Key: key, Kind: run.ItemMarker(run.MarkerRerunRequest, requestID).String(), At: now, Detail: run.Detail("reason", reason)}, true)
		}
		existing, err := f.run(ctx, key)
		if err != nil {
			return err
		}
		v, err := e.decideRerun(ctx, b, lp, key, existing, reason, "request", nil)
		if err != nil {
			return err
		}
		res = RerunResult{Period: key.Period, Accepted: v.Accepted, Reason: v.Refusal}
		return b.commit(ctx)
	})
	return res, err
}

// rerun decides a rerun inside a batch (the engine's own, for late data,
// drift and backfills), whose verdict no one is told.
func (e *Engine) rerun(ctx context.Context, b *batch, lp *loadedPipeline, key run.Key, existing *run.Run, reason, source string, overlay *store.Sensor) error {
	_, err := e.decideRerun(ctx, b, lp, key, existing, reason, source, overlay)
	return err
}

// decideRerun decides a rerun inside a batch and returns the verdict the
// core gave (run.RerunNotes), for the requester.
func (e *Engine) decideRerun(ctx context.Context, b *batch, lp *loadedPipeline, key run.Key, existing *run.Run, reason, source string, overlay *store.Sensor) (run.RerunVerdict, error) {
	p := lp.p
	per, err := parsePeriod(key.Period)
	if err != nil {
		return run.RerunVerdict{}, err
	}
	ledger, err := b.f.ledger(ctx, key)
	if err != nil {
		return run.RerunVerdict{}, err
	}
	in := run.RerunInput{Reason: reason, Existing: existing, Ledger: ledgerReasons(ledger), Exclusion: run.ExclusionReason(p, per)}
	if in.NeedsFreshData() {
		in.FreshData, err = e.freshSince(ctx, p.ID, existing, overlay)
		if err != nil {
			return run.RerunVerdict{}, err
		}
	}
	d := run.DecideRerun(in, p)
	notes, reopen, v := run.RerunNotes(p, reason, d)
	b.notes(key, notes)
	if !reopen {
		return v, nil
	}
	r, eff := run.Reopen(existing, key, reason, source, d, lp.row.ConfigVersion, p, b.now)
	if err := e.applyRun(ctx, b, lp, existing, r, eff, nil); err != nil {
		return v, err
	}
	return v, e.armSLA(ctx, b, p, key, per)
}

// ledgerReasons lists the reasons of a period's ledger entries, which
// the budgets count.
func ledgerReasons(ledger []store.LedgerEntry) []string {
	reasons := make([]string, len(ledger))
	for i, l := range ledger {
		reasons[i] = l.Reason
	}
	return reasons
}

// freshSince reports whether any sensor of the pipeline received new
// content after the run succeeded — the circuit breaker's question.
func (e *Engine) freshSince(ctx context.Context, pipelineID string, r *run.Run, overlay *store.Sensor) (bool, error) {
	if overlay != nil && run.FreshSince(*r, overlay.ChangedAt) {
		return true, nil
	}
	return e.changedSince(ctx, pipelineID, r.EndedAt)
}
