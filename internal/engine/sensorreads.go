package engine

import (
	"context"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// The engine never reads all of a pipeline's sensors: per-period keys
// ("orders#2026-03-10") pile up with every period until retention deletes
// them, so such a read would cost more every day. Each read below names
// what its decision needs.

// sensorsFor loads the sensors rules read for a period: each rule key and
// its per-period forms for per (schedule.PeriodKeys), by primary key, with
// per-period keys mapped to their base key and overlay (a write being
// decided in the same commit) in place of its stored version. Rules read
// their own keys only, so this is exactly what remapping every stored
// sensor would give them (schedule.TestPeriodKeysSuffice), at a cost that
// follows the rules rather than the history.
//
// Point lookups, not a range per rule key: a range of "orders#" would
// walk every period the key was ever written for, and "orders" is also a
// prefix of unrelated keys ("orders-v2").
func (e *Engine) sensorsFor(ctx context.Context, f *facts, pipelineID string, per schedule.Period, rules []rule.Rule, overlay *store.Sensor) (rule.SensorMap, error) {
	keys := make([]string, 0, 3*len(rules))
	for _, r := range rules {
		for _, k := range schedule.PeriodKeys(r.Key, per) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return rule.SensorMap{}, nil
	}
	stored, err := f.sensors(ctx, pipelineID, keys)
	if err != nil {
		return nil, err
	}
	recs := make([]sensor.Record, 0, len(stored)+1)
	for _, s := range stored {
		if overlay != nil && s.Key == overlay.Key {
			continue
		}
		recs = append(recs, s.Record())
	}
	if overlay != nil && slices.Contains(keys, overlay.Key) {
		recs = append(recs, overlay.Record())
	}
	return rule.SensorMap(schedule.RemapForPeriod(recs, per)), nil
}

// triggerSensors loads the sensors the trigger key matches, for every
// period, sorted by key: a range of keys starting with the trigger key
// (run.MatchesTrigger then decides which match). Operator actions read it
// (explain's trigger check, a rerun's period kinds, resume): they ask
// about the trigger sensors of periods they cannot name. None for a
// pipeline without a trigger.
func (e *Engine) triggerSensors(ctx context.Context, p *pipeline.Pipeline) ([]store.Sensor, error) {
	if p.Schedule.Trigger == nil || p.Schedule.Trigger.Rule.Key == "" {
		return nil, nil
	}
	return e.st.SensorListPrefix(ctx, store.SensorListPrefixParams{PipelineID: p.ID, Prefix: p.Schedule.Trigger.Rule.Key})
}

// changedSince reports whether any sensor of the pipeline received new
// content after t: one sensor changed since, found through the store's
// index on change times, not by reading every sensor.
func (e *Engine) changedSince(ctx context.Context, pipelineID string, t time.Time) (bool, error) {
	// ChangedAt >= t+1ns is ChangedAt after t: stored times keep
	// nanoseconds.
	got, err := e.st.SensorListChanged(ctx, store.SensorListChangedParams{PipelineID: pipelineID, Since: t.Add(time.Nanosecond), Limit: 1})
	return len(got) > 0, err
}
