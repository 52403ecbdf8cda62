package engine

import (
	"context"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
)

// Pause stops new runs of a pipeline (product spec §3b): cron ticks and
// trigger sensors are still recorded but start nothing; running jobs
// finish; SLA and watchdog alerts continue. A zero until pauses until
// Resume. decide.Pause decides it.
func (e *Engine) Pause(ctx context.Context, pipelineID string, until time.Time, by string) (err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"pause", attrPipeline.String(pipelineID))
	defer func() { endSpan(span, err) }()
	return e.retry(ctx, "pause "+pipelineID, func(ctx context.Context) error {
		f, err := e.loadFor(ctx, pipelineID, func(*facts, needs.Configs) needs.Set { return needs.Pause(pipelineID) })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.PauseIn{PipelineID: pipelineID, Until: until, By: by, Env: b.env()}
		if _, err := decideWith(ctx, b, decide.Pause, in, e.clk.Now()); err != nil {
			return err
		}
		return b.commit(ctx)
	})
}

// Resume allows new runs again and treats each period that received
// trigger data during the pause as if that data had just arrived, so it
// starts now. decide.Resume decides it, on the facts decide.ResumeNeeds
// names as the rounds read them.
func (e *Engine) Resume(ctx context.Context, pipelineID, by string) (err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"resume", attrPipeline.String(pipelineID))
	defer func() { endSpan(span, err) }()
	return e.retry(ctx, "resume "+pipelineID, func(ctx context.Context) error {
		now := e.clk.Now()
		f, err := e.loadFor(ctx, pipelineID, func(f *facts, cfg needs.Configs) needs.Set {
			return decide.ResumeNeeds(f.Facts, cfg, pipelineID, now, e.rules)
		})
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.ResumeIn{PipelineID: pipelineID, By: by, Env: b.env()}
		if _, err := decideWith(ctx, b, decide.Resume, in, now); err != nil {
			return err
		}
		return b.commit(ctx)
	})
}
