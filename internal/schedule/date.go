package schedule

import (
	"fmt"
	"time"
)

// Date is a civil date with no time zone. Its zero value is not a valid
// date (IsZero reports it). Dates are comparable with ==.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate reads "YYYY-MM-DD" or the compact "YYYYMMDD" that writers put
// in sensor keys and fields. The date must exist: 2026-02-30 and 2026-02-29
// are refused, 2028-02-29 is accepted.
func ParseDate(s string) (Date, error) {
	var y, m, d int
	var ok bool
	switch len(s) {
	case 10:
		if s[4] != '-' || s[7] != '-' {
			break
		}
		y, ok = digits(s[0:4])
		if ok {
			m, ok = digits(s[5:7])
		}
		if ok {
			d, ok = digits(s[8:10])
		}
	case 8:
		y, ok = digits(s[0:4])
		if ok {
			m, ok = digits(s[4:6])
		}
		if ok {
			d, ok = digits(s[6:8])
		}
	}
	if !ok {
		return Date{}, fmt.Errorf("%w: date %q: want YYYY-MM-DD or YYYYMMDD", ErrSyntax, s)
	}
	if y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, time.Month(m)) {
		return Date{}, fmt.Errorf("%w: date %q does not exist", ErrSyntax, s)
	}
	return Date{Year: y, Month: time.Month(m), Day: d}, nil
}

// digits parses a run of ASCII digits. Unlike strconv.Atoi it refuses signs
// and spaces, so "+1" is never a month and " 7" never an hour.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(s) > 0
}

func daysIn(year int, m time.Month) int {
	return time.Date(year, m+1, 0, 12, 0, 0, 0, time.UTC).Day()
}

// DateOf is the date of t on the wall clock of loc.
func DateOf(t time.Time, loc *time.Location) Date {
	y, m, d := t.In(orUTC(loc)).Date()
	return Date{Year: y, Month: m, Day: d}
}

// civil is the date at noon UTC: a time.Time used only for calendar
// arithmetic, where noon keeps any normalisation away from day edges.
func (d Date) civil() time.Time {
	return time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC)
}

// String renders the date as YYYY-MM-DD.
func (d Date) String() string {
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// Compact renders the date as YYYYMMDD, the form used in sensor keys.
func (d Date) Compact() string {
	return fmt.Sprintf("%04d%02d%02d", d.Year, int(d.Month), d.Day)
}

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d == Date{} }

// AddDays returns the date n calendar days later (earlier when n < 0).
func (d Date) AddDays(n int) Date {
	return DateOf(d.civil().AddDate(0, 0, n), time.UTC)
}

// Weekday is the day of the week of d.
func (d Date) Weekday() time.Weekday { return d.civil().Weekday() }

// Compare returns -1, 0 or +1 as d is before, equal to or after o.
func (d Date) Compare(o Date) int {
	switch {
	case d.Year != o.Year:
		return sign(d.Year - o.Year)
	case d.Month != o.Month:
		return sign(int(d.Month) - int(o.Month))
	default:
		return sign(d.Day - o.Day)
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// Before reports whether d is an earlier date than o.
func (d Date) Before(o Date) bool { return d.Compare(o) < 0 }

// After reports whether d is a later date than o.
func (d Date) After(o Date) bool { return d.Compare(o) > 0 }

// Midnight is the first instant of d in loc. Where a daylight saving change
// skips midnight (America/Santiago, for one), that is the first instant
// after the gap.
func (d Date) Midnight(loc *time.Location) time.Time {
	return ClockTime{}.On(d, loc)
}
