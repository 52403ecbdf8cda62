package run

import (
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// PeriodSensors keeps, of the sensors the rules of period per read (their
// keys mapped by schedule.RemapForPeriod), those that count for a run of
// the period with cause, whose evaluation started at evalStart. A sensor
// stored under a per-period key ("orders#2026-03-03") always counts for
// its period. One stored under the rule's plain key counts, except for a
// run an operator asked for after the period ended — a backfill, a rerun
// of last week — for which it counts only when it belongs to the period:
// its date/hour fields name it, or it was written while the period was
// current (SensorPeriod at its receipt). So last week's period never runs
// on today's plain readiness flag; per-period keys are how a past period
// is made ready (docs/backfill.md). Runs started by data or a tick, also
// late ones and those evaluating past midnight, read plain keys as ever.
func PeriodSensors(p *pipeline.Pipeline, per schedule.Period, cause Cause, sensors map[string]sensor.Record, evalStart time.Time) map[string]sensor.Record {
	if cause != CauseBackfill && cause != CauseRerun || evalStart.Before(per.End(p.Schedule.Location)) {
		return sensors
	}
	out := make(map[string]sensor.Record, len(sensors))
	for k, rec := range sensors {
		if rec.Key == k { // the plain key's own record, not a per-period one mapped onto it
			own, err := SensorPeriod(p, rec.Key, rec.Data, rec.ReceivedAt)
			if err != nil || own != per {
				continue
			}
		}
		out[k] = rec
	}
	return out
}
