package engine

import (
	"context"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// The run path's decisions are package decide's (decide.Outcome's
// methods). The engine's inputs not yet decided as one call of decide
// (the operator's: backfill, pause, the watchdog's findings, recovery)
// reach them through these, which supply what a part finds missing
// (batch.sub).

// loadedPipeline is what one decision knows about its pipeline.
type loadedPipeline = decide.Pipeline

func (e *Engine) applyRun(ctx context.Context, b *batch, lp *loadedPipeline, prev *run.Run, r run.Run, eff run.Effect, timerExpect *time.Time) error {
	return b.sub(ctx, func() error { return b.ApplyRun(lp, prev, r, eff, timerExpect) })
}

func (e *Engine) startPeriod(ctx context.Context, b *batch, lp *loadedPipeline, key run.Key, per schedule.Period, cause run.Cause, overlay *store.Sensor) error {
	return b.sub(ctx, func() error { return b.StartPeriod(lp, key, per, cause, overlay) })
}

func (e *Engine) rerun(ctx context.Context, b *batch, lp *loadedPipeline, key run.Key, existing *run.Run, reason, source string, overlay *store.Sensor) error {
	return b.sub(ctx, func() error { return b.Rerun(lp, key, existing, reason, source, overlay) })
}

func (e *Engine) runOf(ctx context.Context, b *batch, key run.Key) (*run.Run, error) {
	return get(ctx, b.f, func() (*run.Run, error) { return b.RunOf(key) })
}

// sensorsFor gives the sensors rules read for a period (decide.SensorsFor).
func (e *Engine) sensorsFor(ctx context.Context, f *facts, pipelineID string, per schedule.Period, rules []rule.Rule, overlay *store.Sensor) (rule.SensorMap, error) {
	return get(ctx, f, func() (rule.SensorMap, error) { return decide.SensorsFor(f.Facts, pipelineID, per, rules, overlay) })
}

// validation judges a period's rules with its upstreams' (decide.Validation).
func (e *Engine) validation(ctx context.Context, f *facts, p *pipeline.Pipeline, per schedule.Period, sensors rule.SensorMap, now time.Time) (rule.Outcome, error) {
	return get(ctx, f, func() (rule.Outcome, error) { return decide.Validation(f.Facts, e.rules, p, per, sensors, now) })
}

func (e *Engine) triggerSensor(ctx context.Context, b *batch, lp *loadedPipeline, s *store.Sensor, key run.Key, per schedule.Period) error {
	return b.sub(ctx, func() error { return b.TriggerSensor(lp, s, key, per) })
}
