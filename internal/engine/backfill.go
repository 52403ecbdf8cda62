package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/store"
)

// A backfill is decided in package decide (decide.BackfillRequest,
// BackfillCancel, and its timer's step in decide.Timer): the engine
// loads the needs, calls, commits and answers.

// ErrBackfillRunning refuses a second backfill of a pipeline while one
// runs: cancel it first.
var ErrBackfillRunning = decide.ErrBackfillRunning

// BackfillPlan is the answer to a backfill request: the verdict on each
// period, and the stored backfill (nil for a dry run, which stores
// nothing).
type BackfillPlan struct {
	PipelineID string
	Periods    []backfill.PlannedPeriod
	Backfill   *store.Backfill
	// Paused and DryRun say how the pipeline stands: a paused pipeline's
	// backfill waits for the resume; a dry-run pipeline's records
	// would-trigger events, running nothing.
	Paused, DryRun bool
}

// RequestBackfill plans a backfill of pipelineID and, unless dryRun,
// stores it and arms its timer (BACKFILL_REQUESTED). A request is
// refused with ErrInvalidRequest naming the field (backfill.Range),
// and with ErrBackfillRunning while another backfill of the pipeline
// runs.
func (e *Engine) RequestBackfill(ctx context.Context, pipelineID string, req backfill.Request, dryRun bool, by string) (_ BackfillPlan, err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"backfill", attrPipeline.String(pipelineID))
	defer func() { endSpan(span, err) }()
	var plan BackfillPlan
	err = e.retry(ctx, "backfill "+pipelineID, func(ctx context.Context) error {
		now := e.clk.Now()
		f, err := e.loadFor(ctx, pipelineID, func(f *facts, cfg needs.Configs) needs.Set {
			p := cfg(pipelineID)
			start := ""
			if p != nil {
				if periods, err := decide.BackfillRange(f.Facts, p, req, now); err == nil {
					start = backfill.RangeStart(periods)
				}
			}
			return needs.BackfillRequest(p, pipelineID, start)
		})
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.BackfillRequestIn{PipelineID: pipelineID, Request: req, DryRun: dryRun, By: by, Env: b.env()}
		v, err := decideWith(ctx, b, decide.BackfillRequest, in, now)
		if err != nil {
			return err
		}
		return b.commitThen(ctx, func() {
			plan = BackfillPlan{PipelineID: pipelineID, Periods: v.Periods, Backfill: v.Backfill, Paused: v.Paused, DryRun: v.DryRun}
		})
	})
	return plan, err
}

// Backfills returns a pipeline's backfills, oldest first.
func (e *Engine) Backfills(ctx context.Context, pipelineID string) ([]store.Backfill, error) {
	if _, err := e.knownPipeline(ctx, pipelineID); err != nil {
		return nil, err
	}
	return e.st.BackfillList(ctx, pipelineID)
}

// ErrUnknownBackfill: no backfill of the pipeline has the id.
var ErrUnknownBackfill = decide.ErrUnknownBackfill

// Backfill returns one backfill of a pipeline.
func (e *Engine) Backfill(ctx context.Context, pipelineID, id string) (store.Backfill, error) {
	bf, err := e.st.BackfillGet(ctx, pipelineID, id)
	if errors.Is(err, store.ErrNotFound) {
		return bf, fmt.Errorf("%w: pipeline %s has no backfill %q", ErrUnknownBackfill, pipelineID, id)
	}
	return bf, err
}

// CancelBackfill stops a running backfill (id "": the pipeline's running
// one): no new period starts, the active ones finish
// (BACKFILL_CANCELLED). Cancelling one that already ended changes
// nothing and returns it as it is.
func (e *Engine) CancelBackfill(ctx context.Context, pipelineID, id, by string) (_ store.Backfill, err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"backfill.cancel", attrPipeline.String(pipelineID))
	defer func() { endSpan(span, err) }()
	var out store.Backfill
	err = e.retry(ctx, "cancel backfill "+pipelineID+"/"+id, func(ctx context.Context) error {
		f, err := e.loadFor(ctx, pipelineID, func(*facts, needs.Configs) needs.Set { return needs.BackfillCancel(pipelineID) })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.BackfillCancelIn{PipelineID: pipelineID, ID: id, By: by, Env: b.env()}
		bf, err := decideWith(ctx, b, decide.BackfillCancel, in, e.clk.Now())
		if err != nil {
			return err
		}
		return b.commitThen(ctx, func() { out = bf })
	})
	return out, err
}
