package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Deadline is an SLA deadline relative to a period (product spec §3 item
// 12). It resolves to one instant per period and never rolls forward: a
// deadline already past when computed stays past, which is a breach, not
// a reason to wait another day. Three forms:
//
//	"HH:MM"      that wall time on the period's date
//	"+Nd HH:MM"  that wall time N days later (yesterday's data processed today)
//	":MM"        MM minutes after the end of the period's hour (hourly only)
type Deadline struct {
	kind   deadlineKind
	days   int       // wallClock: days after the period's date
	clock  ClockTime // wallClock
	minute int       // afterHour
}

type deadlineKind uint8

const (
	noDeadline deadlineKind = iota
	wallClock
	afterHour
)

// maxDeadlineDays keeps "+Nd" within reason; a longer wait is not a
// deadline for a daily period.
const maxDeadlineDays = 366

// ParseDeadline reads "HH:MM", "+Nd HH:MM" (N ≥ 1) or ":MM" (00–59).
func ParseDeadline(s string) (Deadline, error) {
	fail := func(why string) (Deadline, error) {
		return Deadline{}, fmt.Errorf("%w: deadline %q: %s", ErrSyntax, s, why)
	}
	in := strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(in, ":"); ok {
		m, ok := digits(rest)
		if !ok || len(rest) != 2 || m > 59 {
			return fail("want :MM with MM from 00 to 59")
		}
		return Deadline{kind: afterHour, minute: m}, nil
	}
	days := 0
	if rest, ok := strings.CutPrefix(in, "+"); ok {
		fields := strings.Fields(rest)
		n, okN := strings.CutSuffix(firstOr(fields), "d")
		nd, okD := digits(n)
		if len(fields) != 2 || !okN || !okD || len(n) > 3 {
			return fail("want +Nd HH:MM, e.g. +1d 02:00")
		}
		if nd < 1 || nd > maxDeadlineDays {
			return fail("days must be from 1 to " + strconv.Itoa(maxDeadlineDays))
		}
		days, in = nd, fields[1]
	}
	c, err := ParseClockTime(in)
	if err != nil {
		return fail("want HH:MM (00:00 to 23:59), +Nd HH:MM or :MM")
	}
	return Deadline{kind: wallClock, days: days, clock: c}, nil
}

func firstOr(fields []string) string {
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// String renders the deadline in the form ParseDeadline reads.
func (d Deadline) String() string {
	switch d.kind {
	case afterHour:
		return fmt.Sprintf(":%02d", d.minute)
	case wallClock:
		if d.days > 0 {
			return fmt.Sprintf("+%dd %s", d.days, d.clock)
		}
		return d.clock.String()
	}
	return ""
}

// Days is N of a "+Nd HH:MM" deadline: how many days after the period's
// date it falls (0 for the other forms).
func (d Deadline) Days() int { return d.days }

// IsZero reports whether d is the zero Deadline (no deadline configured).
func (d Deadline) IsZero() bool { return d.kind == noDeadline }

// HourlyOnly reports whether d is the ":MM" form, which only hourly
// periods have.
func (d Deadline) HourlyOnly() bool { return d.kind == afterHour }

// Resolve is the instant period p breaches d, in loc.
//
// "HH:MM" and "+Nd HH:MM" use the period's date for hourly periods too.
// Wall times skipped or repeated by a daylight saving change resolve as in
// ClockTime.On: the first instant after a gap, the first of two
// occurrences. ":MM" counts real minutes from the period's End, so a
// period that is two hours long on the clock because of a fall-back
// change still gets MM minutes after its end (T10 + ":30" is 11:30;
// T23 + ":30" is 00:30 the next day).
func (d Deadline) Resolve(p Period, loc *time.Location) (time.Time, error) {
	switch d.kind {
	case afterHour:
		if !p.Hourly {
			return time.Time{}, fmt.Errorf("%w: deadline %q needs an hourly period, got %s", ErrGranularity, d, p)
		}
		return p.End(loc).Add(time.Duration(d.minute) * time.Minute), nil
	case wallClock:
		return d.clock.On(p.Date.AddDays(d.days), loc), nil
	}
	return time.Time{}, fmt.Errorf("%w: no deadline to resolve", ErrSyntax)
}

// WarningAt is when to warn about a coming breach: expected (the job's
// expected duration) before it, so there is still time to act.
func WarningAt(breach time.Time, expected time.Duration) time.Time {
	return breach.Add(-expected)
}

// RelativeBreach is the breach instant of a relative SLA (sla.maxDuration),
// counted from the first arrival of the period's trigger sensor.
func RelativeBreach(firstArrival time.Time, maxDuration time.Duration) time.Time {
	return firstArrival.Add(maxDuration)
}
