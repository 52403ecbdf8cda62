// Package schedule owns Interlock's notion of time on the calendar: civil
// dates, the periods a run is for (a day or an hour), cron schedules,
// calendars of excluded or included days, clock times and SLA deadlines.
//
// It never reads the clock. Every function that needs the current instant
// or a time zone takes it as an argument, so the engine, the watchdog and
// `interlock simulate` get identical answers for identical inputs. Nothing
// here panics on bad input: parse functions return errors wrapping
// ErrSyntax, and a nil *time.Location means UTC.
//
// Wall-clock times that do not exist or happen twice because of a daylight
// saving change are resolved one way everywhere in the package (see
// ClockTime.On): a time inside a spring-forward gap means the first instant
// after the gap, and a time inside a fall-back overlap means its first
// occurrence.
package schedule

import (
	"errors"
	"time"
)

// ErrSyntax is wrapped by every error about malformed text: dates, periods,
// cron expressions, weekdays, clock times, deadlines and sensor date fields.
var ErrSyntax = errors.New("invalid syntax")

// ErrGranularity is wrapped when a value is used with a period of the wrong
// kind, such as an hourly ":MM" deadline with a daily period.
var ErrGranularity = errors.New("wrong period granularity")

// orUTC lets callers pass a nil location without making time.Time.In panic.
func orUTC(loc *time.Location) *time.Location {
	if loc == nil {
		return time.UTC
	}
	return loc
}
