package engine

import (
	"context"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/sensor"
)

// The engine never reads all of a pipeline's sensors: per-period keys
// ("orders#2026-03-10") pile up with every period until retention deletes
// them, so such a read would cost more every day. Each read below names
// what its decision needs.

// triggerRecords loads the sensors the trigger key matches, for every
// period, sorted by key, as records: a range of keys starting with the trigger key
// (run.MatchesTrigger then decides which match), read as asked. Operator
// actions not decided from named needs read it (explain's trigger check,
// a backfill's period kinds): they ask about the trigger sensors of
// periods they cannot name. None for a pipeline without a trigger.
func (e *Engine) triggerRecords(ctx context.Context, p *pipeline.Pipeline) ([]sensor.Record, error) {
	f := e.directFacts()
	return get(ctx, f, func() ([]sensor.Record, error) { return f.TriggerRecords(p) })
}
