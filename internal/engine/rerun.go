package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/interlockhq/interlock/internal/event"
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
	if reason == "" {
		reason = run.ReasonManual
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
	if reason == run.LedgerJobRetry {
		return RerunResult{}, fmt.Errorf("%w: reason %q is reserved for automatic retries", ErrInvalidRequest, reason)
	}
	if reason == run.ReasonBackfill { // its budget is a backfill's own (run.DecideRerun)
		return RerunResult{}, fmt.Errorf("%w: reason %q is reserved for backfills (interlock backfill)", ErrInvalidRequest, reason)
	}
	var res RerunResult
	err = e.retry(ctx, "rerun "+pipelineID+"/"+period, func(ctx context.Context) error {
		lp, err := e.pipelineOf(ctx, pipelineID)
		if err != nil {
			return err
		}
		if lp == nil {
			return unknown(pipelineID)
		}
		now := e.clk.Now()
		key := run.Key{PipelineID: pipelineID, ScheduleID: lp.p.ScheduleID(), Period: per.String()}
		b := e.newBatch(lp, now)
		if requestID != "" {
			seen, err := e.markerExists(ctx, key, run.ItemMarker(run.MarkerRerunRequest, requestID).String())
			if err != nil || seen {
				res = RerunResult{Period: key.Period, Duplicate: seen}
				return err
			}
			b.marker(store.Marker{Key: key, Kind: run.ItemMarker(run.MarkerRerunRequest, requestID).String(), At: now, Detail: run.Detail("reason", reason)}, true)
		}
		var existing *run.Run
		r, err := e.st.RunGet(ctx, key)
		switch {
		case err == nil:
			existing = &r
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if err := e.rerun(ctx, b, lp, key, existing, reason, "request", nil); err != nil {
			return err
		}
		res = RerunResult{Period: key.Period}
		for _, ev := range b.c.Events {
			switch ev.Type {
			case event.RerunAccepted, event.DryRunWouldRerun:
				res.Accepted = true
			case event.RerunRejected, event.DryRunRerunRejected:
				res.Reason = ev.Message
			}
		}
		return b.commit(ctx)
	})
	return res, err
}

// rerun decides a rerun request inside a batch (an operator's request, or
// the engine's own for late data and drift).
func (e *Engine) rerun(ctx context.Context, b *batch, lp *loadedPipeline, key run.Key, existing *run.Run, reason, source string, overlay *store.Sensor) error {
	p := lp.p
	per, err := parsePeriod(key.Period)
	if err != nil {
		return err
	}
	ledger, err := e.st.LedgerList(ctx, key)
	if err != nil {
		return err
	}
	in := run.RerunInput{Reason: reason, Existing: existing, Ledger: ledgerReasons(ledger), Exclusion: run.ExclusionReason(p, per)}
	if in.NeedsFreshData() {
		in.FreshData, err = e.freshSince(ctx, p.ID, existing, overlay)
		if err != nil {
			return err
		}
	}
	d := run.DecideRerun(in, p)
	notes, reopen := run.RerunNotes(p, reason, d)
	b.notes(key, notes)
	if !reopen {
		return nil
	}
	r, eff := run.Reopen(existing, key, reason, source, d, lp.row.ConfigVersion, p, b.now)
	if err := e.applyRun(ctx, b, lp, existing, r, eff, nil); err != nil {
		return err
	}
	return e.armSLA(ctx, b, p, key, per)
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
