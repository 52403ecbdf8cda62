package schedule

import (
	"fmt"
	"strings"
	"time"
)

// Period is what a run is for: a day ("2026-03-10") or an hour of a day
// ("2026-03-10T07") on the wall clock of the schedule's zone. For each
// pipeline, schedule and period Interlock runs at most once.
//
// Periods tile time without gaps or overlaps: a period ends where the next
// one starts. Around daylight saving changes this gives the hours their
// real lengths. In America/New_York on 2026-03-08 the day is 23 hours and
// the hour T02 does not exist on the clock, so its period is empty
// (Start == End == 03:00 EDT) and no instant maps to it. On 2026-11-01 the
// day is 25 hours and T01 lasts two hours: both occurrences of 01:xx
// belong to it.
type Period struct {
	Date   Date
	Hour   int // 0–23; meaningful only when Hourly
	Hourly bool
}

// Daily is the period of a whole date.
func Daily(d Date) Period { return Period{Date: d} }

// HourlyPeriod is the period of one hour of d. An hour outside 0–23 is
// carried into the neighbouring dates (24 is 00 of the next day), which
// keeps hour arithmetic simple for callers.
func HourlyPeriod(d Date, hour int) Period {
	days := hour / 24
	hour %= 24
	if hour < 0 {
		hour += 24
		days--
	}
	if days != 0 {
		d = d.AddDays(days)
	}
	return Period{Date: d, Hour: hour, Hourly: true}
}

// ParsePeriod reads a period in the forms writers use: "2026-03-10",
// "2026-03-10T07", and the compact "20260310" and "20260310T07". The hour
// is two digits, 00 to 23.
func ParsePeriod(s string) (Period, error) {
	ds, hs, hourly := strings.Cut(s, "T")
	d, err := ParseDate(ds)
	if err != nil {
		return Period{}, fmt.Errorf("period %q (want YYYY-MM-DD or YYYY-MM-DDTHH): %w", s, err)
	}
	if !hourly {
		return Daily(d), nil
	}
	h, ok := digits(hs)
	if !ok || len(hs) != 2 || h > 23 {
		return Period{}, fmt.Errorf("%w: period %q: hour must be two digits, 00 to 23", ErrSyntax, s)
	}
	return HourlyPeriod(d, h), nil
}

// String renders the canonical form, "YYYY-MM-DD" or "YYYY-MM-DDTHH".
func (p Period) String() string {
	if p.Hourly {
		return fmt.Sprintf("%sT%02d", p.Date, p.Hour)
	}
	return p.Date.String()
}

// Compact renders "YYYYMMDD" or "YYYYMMDDTHH", the form some writers put
// in sensor keys.
func (p Period) Compact() string {
	if p.Hourly {
		return fmt.Sprintf("%sT%02d", p.Date.Compact(), p.Hour)
	}
	return p.Date.Compact()
}

// IsZero reports whether p is the zero Period.
func (p Period) IsZero() bool { return p == Period{} }

// Next is the period that follows p: the next date, or the next hour.
func (p Period) Next() Period {
	if p.Hourly {
		return HourlyPeriod(p.Date, p.Hour+1)
	}
	return Daily(p.Date.AddDays(1))
}

// Prev is the period before p: the previous date, or the previous hour.
func (p Period) Prev() Period {
	if p.Hourly {
		return HourlyPeriod(p.Date, p.Hour-1)
	}
	return Daily(p.Date.AddDays(-1))
}

// Start is the first instant of p in loc: midnight (or the first instant
// after a gap that skips midnight) for a day; the first occurrence of HH:00
// for an hour, or the end of the gap for an hour the clock skips.
func (p Period) Start(loc *time.Location) time.Time {
	if p.Hourly {
		return ClockTime{Hour: p.Hour}.On(p.Date, loc)
	}
	return p.Date.Midnight(loc)
}

// End is the first instant after p, which is the Start of the next period.
// A day lasts 23, 24 or 25 hours; an hour lasts 0, 1 or 2 (see Period).
func (p Period) End(loc *time.Location) time.Time { return p.Next().Start(loc) }

// PeriodAt is the period holding instant t on loc's wall clock: its date,
// and its hour when hourly. Both occurrences of a repeated hour map to the
// same hourly period.
func PeriodAt(t time.Time, loc *time.Location, hourly bool) Period {
	l := t.In(orUTC(loc))
	d := DateOf(l, l.Location())
	if hourly {
		return HourlyPeriod(d, l.Hour())
	}
	return Daily(d)
}
