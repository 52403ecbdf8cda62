package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Calendar is a named set of days (calendars/*.yaml): weekdays that recur
// and single dates, such as a holiday list. Pipelines refer to it by name
// from schedule.exclude or schedule.include.
type Calendar struct {
	Name  string
	Days  []time.Weekday
	Dates []Date
}

// Weekends are the days `exclude.weekends: true` stands for.
func Weekends() []time.Weekday { return []time.Weekday{time.Saturday, time.Sunday} }

// ParseWeekday reads a day name in any case, in full ("Saturday") or in
// three letters ("sat").
func ParseWeekday(s string) (time.Weekday, error) {
	in := strings.ToLower(strings.TrimSpace(s))
	for d := time.Sunday; d <= time.Saturday; d++ {
		full := strings.ToLower(d.String())
		if in == full || in == full[:3] {
			return d, nil
		}
	}
	return 0, fmt.Errorf("%w: weekday %q: want a day name such as saturday or sat", ErrSyntax, s)
}

// DaySet is a set of days given by weekdays and dates: one exclusion or
// inclusion list, with any named calendar merged into it. The zero DaySet
// is empty. A DaySet is not modified after construction and is safe to
// share.
//
// Exclusion is judged on a period's date, which is already a date in the
// schedule's zone: excluded := set.Contains(p.Date). An hourly period is
// excluded when its date is.
type DaySet struct {
	weekdays uint8 // bit d set: weekday d is in the set
	dates    map[Date]struct{}
}

// NewDaySet merges inline weekdays and dates with the days of calendars.
// Weekday values outside Sunday–Saturday are ignored.
func NewDaySet(weekdays []time.Weekday, dates []Date, cals ...Calendar) DaySet {
	var s DaySet
	add := func(days []time.Weekday, ds []Date) {
		for _, w := range days {
			if w >= time.Sunday && w <= time.Saturday {
				s.weekdays |= 1 << uint(w)
			}
		}
		for _, d := range ds {
			if s.dates == nil {
				s.dates = map[Date]struct{}{}
			}
			s.dates[d] = struct{}{}
		}
	}
	add(weekdays, dates)
	for _, c := range cals {
		add(c.Days, c.Dates)
	}
	return s
}

// Contains reports whether d is in the set, by weekday or by date.
func (s DaySet) Contains(d Date) bool {
	if s.weekdays&(1<<uint(d.Weekday())) != 0 {
		return true
	}
	_, ok := s.dates[d]
	return ok
}

// Empty reports whether the set holds no day at all.
func (s DaySet) Empty() bool { return s.weekdays == 0 && len(s.dates) == 0 }

// Weekdays lists the weekdays in the set, Sunday first.
func (s DaySet) Weekdays() []time.Weekday {
	var out []time.Weekday
	for d := time.Sunday; d <= time.Saturday; d++ {
		if s.weekdays&(1<<uint(d)) != 0 {
			out = append(out, d)
		}
	}
	return out
}

// Dates lists the single dates in the set, earliest first.
func (s DaySet) Dates() []Date {
	out := make([]Date, 0, len(s.dates))
	for d := range s.dates {
		out = append(out, d)
	}
	slices.SortFunc(out, Date.Compare)
	return out
}

// String lists the set for people (`interlock explain`):
// "saturday, sunday, 2026-12-25".
func (s DaySet) String() string {
	var parts []string
	for _, w := range s.Weekdays() {
		parts = append(parts, strings.ToLower(w.String()))
	}
	for _, d := range s.Dates() {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, ", ")
}
