package engine

import (
	"context"
	"fmt"

	"github.com/interlockhq/interlock/internal/lineage"
)

// LineageWrite is what an OpenLineage event did for one pipeline source.
type LineageWrite struct {
	PipelineID string
	Key        string // the per-period sensor key written (lineage.SensorKey)
	Period     string
	Changed    bool // new data: the rules saw it
	// Stale: the event changed nothing (lineage.Stale: a replay, or an
	// older event than the stored one); nothing was written.
	Stale bool
}

// PutLineage writes an OpenLineage run event as a sensor, through the
// same decision as PutSensor, to every source of every running pipeline
// it matches (lineage.Matches): under the source's key with the event's
// period (lineage.Period, lineage.SensorKey), as lineage.SensorData maps
// it. An event lineage.Stale judges against the stored sensor, in the
// same attempt, writes nothing. No match is no write and no error: the
// caller counts it.
func (e *Engine) PutLineage(ctx context.Context, ev lineage.Event) (_ []LineageWrite, err error) {
	ctx, span := e.startSpan(ctx, spanLineage)
	defer func() { endSpan(span, err) }()
	lps, err := e.activePipelines(ctx)
	if err != nil {
		return nil, err
	}
	var out []LineageWrite
	for _, lp := range lps {
		for _, src := range lineage.Matches(lp.P, ev) {
			key := lineage.SensorKey(src, lineage.Period(lp.P, ev))
			data := lineage.SensorData(src, ev)
			_, res, err := e.putSensor(ctx, lp.P.ID, key, &data, true)
			if err != nil {
				return out, fmt.Errorf("pipeline %s, lineage key %s: %w", lp.P.ID, src.Key, err)
			}
			out = append(out, LineageWrite{PipelineID: lp.P.ID, Key: key, Period: res.Period, Changed: res.Changed, Stale: res.Skipped})
		}
	}
	return out, nil
}
