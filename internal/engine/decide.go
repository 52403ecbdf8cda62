package engine

import (
	"context"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// The run path's decisions are package decide's (decide.Outcome's
// methods). Explain, not yet one call of decide, reaches its parts
// through these, which supply what a part finds missing.

// loadedPipeline is what one decision knows about its pipeline.
type loadedPipeline = decide.Pipeline

// sensorsFor gives the sensors rules read for a period (decide.SensorsFor).
func (e *Engine) sensorsFor(ctx context.Context, f *facts, pipelineID string, per schedule.Period, rules []rule.Rule, overlay *store.Sensor) (rule.SensorMap, error) {
	return get(ctx, f, func() (rule.SensorMap, error) { return decide.SensorsFor(f.Facts, pipelineID, per, rules, overlay) })
}

// validation judges a period's rules with its upstreams' (decide.Validation).
func (e *Engine) validation(ctx context.Context, f *facts, p *pipeline.Pipeline, per schedule.Period, sensors rule.SensorMap, now time.Time) (rule.Outcome, error) {
	return get(ctx, f, func() (rule.Outcome, error) { return decide.Validation(f.Facts, e.rules, p, per, sensors, now) })
}
