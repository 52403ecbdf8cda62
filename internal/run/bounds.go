package run

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Bounds on the instants that operators and writers can name. Each keeps
// what is accepted representable in every store (the SQLite store holds
// nanoseconds, which end in 2262) and refuses what no real writer means,
// with a message naming the field, instead of an internal error when the
// store refuses it.
const (
	// SensorLeadDays is how far after today, in the pipeline's time zone,
	// a sensor may name its period. A writer in a zone ahead of the
	// pipeline's, or one publishing tomorrow's partition early, writes a
	// date a day or two ahead; a week leaves room for that and for
	// scheduled loads, while a year ahead is a bug upstream.
	SensorLeadDays = 7
)

// EarliestPeriod is the first date a sensor or a rerun may name: the Unix
// epoch. Earlier dates are no data pipeline's periods, and their instants
// approach what stores can hold.
var EarliestPeriod = schedule.Date{Year: 1970, Month: time.January, Day: 1}

// LatestSensorDate is the last date a sensor written at now may name:
// SensorLeadDays after today in the pipeline's time zone.
func LatestSensorDate(p *pipeline.Pipeline, now time.Time) schedule.Date {
	return schedule.DateOf(now, p.Schedule.Location).AddDays(SensorLeadDays)
}

// SensorWritePeriod is the period of a sensor being written (see
// SensorPeriod), refused when it is outside the bounds a write may name:
// from EarliestPeriod to LatestSensorDate. Stored sensors are read with
// SensorPeriod, which applies no bound: a write accepted once stays
// readable.
func SensorWritePeriod(p *pipeline.Pipeline, key string, data sensor.Object, now time.Time) (schedule.Period, error) {
	per, from, err := sensorPeriod(p, key, data, now)
	if err != nil {
		return per, err
	}
	if err := checkSensorDate(p, per, from, now); err != nil {
		return schedule.Period{}, err
	}
	return per, nil
}

func checkSensorDate(p *pipeline.Pipeline, per schedule.Period, from string, now time.Time) error {
	if per.Date.Before(EarliestPeriod) {
		return fmt.Errorf("%s names period %s, before %s, the earliest period Interlock runs", from, per, EarliestPeriod)
	}
	if latest := LatestSensorDate(p, now); latest.Before(per.Date) {
		return fmt.Errorf("%s names period %s, more than %d days ahead of today (%s in %s): the latest period a sensor may name now is %s",
			from, per, SensorLeadDays, schedule.DateOf(now, p.Schedule.Location), zoneName(p), latest)
	}
	return nil
}

// CheckPauseUntil refuses the end of a pause that is not in the future or
// is more than a year after now (LatestPauseEnd): a longer pause is one
// without an end, resumed by hand. It judges an end that was given: the
// zero time is 0001-01-01T00:00:00Z, in the past, never "no end".
func CheckPauseUntil(until, now time.Time) error {
	if !until.After(now) {
		return fmt.Errorf("%s is not in the future", until.UTC().Format(time.RFC3339))
	}
	if latest := LatestPauseEnd(now); until.After(latest) {
		return fmt.Errorf("%s is more than a year ahead (at most %s); for longer, pause without an end and resume by hand",
			until.UTC().Format(time.RFC3339), latest.UTC().Format(time.RFC3339))
	}
	return nil
}

// LatestPauseEnd is the latest end a pause started at now may have.
func LatestPauseEnd(now time.Time) time.Time { return now.AddDate(1, 0, 0) }

func zoneName(p *pipeline.Pipeline) string {
	if p.Schedule.Location == nil {
		return "UTC"
	}
	return p.Schedule.Location.String()
}
