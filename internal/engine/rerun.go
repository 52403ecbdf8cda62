package engine

import (
	"context"
	"fmt"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/schedule"
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
	per, perErr := schedule.ParsePeriod(period) // for naming the needs; decide.RerunRequest judges it
	var res RerunResult
	err := e.retry(ctx, "rerun "+pipelineID+"/"+period, func(ctx context.Context) error {
		f, err := e.loadFor(ctx, pipelineID, func(f *facts, cfg needs.Configs) needs.Set {
			if perErr != nil {
				return needs.Pipeline(pipelineID)
			}
			return needs.RerunRequest(cfg(pipelineID), f.ReadRuns, pipelineID, per)
		})
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.RerunRequestIn{PipelineID: pipelineID, Period: period, Reason: reason, RequestID: requestID, Env: b.env()}
		v, err := decideWith(ctx, b, decide.RerunRequest, in, e.clk.Now())
		if err != nil {
			return err
		}
		return b.commitThen(ctx, func() {
			res = RerunResult{Period: v.Period, Accepted: v.Accepted, Reason: v.Refusal, Duplicate: v.Duplicate}
		})
	})
	return res, err
}
