package schedule

import (
	"fmt"
	"strings"
	"time"
)

// ClockTime is a time of day on a wall clock, 00:00 to 23:59, such as
// schedule.time or the "HH:MM" of a deadline.
type ClockTime struct {
	Hour, Minute int
}

// ParseClockTime reads "HH:MM" (a single-digit hour, "9:30", is accepted).
func ParseClockTime(s string) (ClockTime, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, okH := digits(h)
	mm, okM := digits(m)
	if !ok || !okH || !okM || len(h) > 2 || len(m) != 2 {
		return ClockTime{}, fmt.Errorf("%w: clock time %q: want HH:MM", ErrSyntax, s)
	}
	if hh > 23 || mm > 59 {
		return ClockTime{}, fmt.Errorf("%w: clock time %q: want 00:00 to 23:59", ErrSyntax, s)
	}
	return ClockTime{Hour: hh, Minute: mm}, nil
}

// String renders the time as HH:MM.
func (c ClockTime) String() string { return fmt.Sprintf("%02d:%02d", c.Hour, c.Minute) }

// On is the instant loc's clock shows c on date d. When a spring-forward
// change skips c that day, it is the first instant after the gap (02:30 in
// New York on 2026-03-08 is 03:00 EDT): the event still happens that day,
// as early as it can. When a fall-back change shows c twice, it is the
// first occurrence (01:30 on 2026-11-01 is 01:30 EDT): one instant per
// date, and the earlier one, so deadlines never quietly gain an hour.
func (c ClockTime) On(d Date, loc *time.Location) time.Time {
	first, _, _ := resolveWall(naiveWall(d, c.Hour, c.Minute), loc)
	return first
}
