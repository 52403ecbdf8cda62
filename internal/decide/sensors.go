package decide

import (
	"slices"

	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// SensorsFor gives the sensors rules read for a period: each rule key and
// its per-period forms for per (schedule.PeriodKeys), by primary key,
// with per-period keys mapped to their base key and overlay (a write
// being decided in the same commit) in place of its stored version. Rules
// read their own keys only, so this is exactly what remapping every
// stored sensor would give them (schedule.TestPeriodKeysSuffice), at a
// cost that follows the rules rather than the history: per-period keys
// ("orders#2026-03-10") pile up with every period until retention
// deletes them, and "orders" is also a prefix of unrelated keys
// ("orders-v2"), so no decision reads a range of them.
func SensorsFor(f *Facts, pipelineID string, per schedule.Period, rules []rule.Rule, overlay *store.Sensor) (rule.SensorMap, error) {
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
	stored, err := f.SensorsOf(pipelineID, keys)
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
