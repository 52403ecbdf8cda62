package schedule

import (
	"fmt"

	"github.com/interlockhq/interlock/internal/sensor"
)

// PeriodFromSensor is the period a sensor reports data for, read from its
// `date` field ("YYYY-MM-DD" or "YYYYMMDD", a string) and optional `hour`
// field ("07", "7", or a number 0–23). A date with an hour gives an hourly
// period; a date alone a daily one.
//
// Without a date field the sensor does not name a period and fallback is
// returned; callers pass the period of now in the schedule's zone (product
// spec §3 item 3), never the UTC date. A date or hour that is present but
// malformed (null, empty, "2026-02-30", "25") is an error, unlike the
// reference implementation which silently used today: running the wrong
// period is worse than not running. An hour without a date is an error for
// the same reason.
func PeriodFromSensor(data sensor.Object, fallback Period) (Period, error) {
	dv, hasDate := data.Get("date")
	hv, hasHour := data.Get("hour")
	if !hasDate {
		if hasHour {
			return Period{}, fmt.Errorf("%w: sensor field \"hour\" given without \"date\"", ErrSyntax)
		}
		return fallback, nil
	}
	ds, ok := dv.Str()
	if !ok {
		return Period{}, fmt.Errorf("%w: sensor field \"date\": want a string YYYY-MM-DD or YYYYMMDD, got %s", ErrSyntax, dv.Kind())
	}
	d, err := ParseDate(ds)
	if err != nil {
		return Period{}, fmt.Errorf("sensor field \"date\": %w", err)
	}
	if !hasHour {
		return Daily(d), nil
	}
	h, err := sensorHour(hv)
	if err != nil {
		return Period{}, err
	}
	return HourlyPeriod(d, h), nil
}

// sensorHour accepts the spellings writers actually send for an hour:
// "07", "7" and 7.
func sensorHour(v sensor.Value) (int, error) {
	if s, ok := v.Str(); ok {
		h, ok := digits(s)
		if !ok || len(s) > 2 || h > 23 {
			return 0, fmt.Errorf("%w: sensor field \"hour\" %q: want 00 to 23", ErrSyntax, s)
		}
		return h, nil
	}
	if n, ok := v.Int(); ok {
		if n < 0 || n > 23 {
			return 0, fmt.Errorf("%w: sensor field \"hour\" %d: want 0 to 23", ErrSyntax, n)
		}
		return int(n), nil
	}
	return 0, fmt.Errorf("%w: sensor field \"hour\": want a string \"00\"–\"23\" or a whole number 0–23, got %s", ErrSyntax, v)
}
