package silence

import (
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/schedule"
)

// Window is a recurring maintenance window from interlock.yaml's
// `maintenance:` list: from each tick of Cron, on Location's wall clock,
// for Duration of elapsed time, events its matchers cover are silenced.
//
// Ticks follow the project's cron arithmetic (schedule.Cron.Next/Prev),
// so across a daylight saving change a window starts at the wall-clock
// time it names (a 02:30 start inside a spring-forward gap starts at the
// first instant after the gap; a 01:30 start in a fall-back overlap
// starts once, at its first occurrence), and lasts Duration of real time
// from there: a 3h window from 01:00 on the night clocks spring forward
// ends at 05:00 local time, three hours later.
type Window struct {
	Name     string
	Cron     schedule.Cron
	Duration time.Duration
	Location *time.Location
	Matchers
	Comment string
}

// WindowPrefix starts the ID of every maintenance window, which tells
// it from a silence's.
const WindowPrefix = "maintenance:"

// WindowID is the ID events matched by the window named name carry.
func WindowID(name string) string { return WindowPrefix + name }

// ID is w's WindowID.
func (w Window) ID() string { return WindowID(w.Name) }

// MaxWindowDuration bounds a window: a week. Longer is a silence's job.
const MaxWindowDuration = 7 * 24 * time.Hour

// NewWindow checks a window as interlock.yaml gives it. Errors name the
// field ("cron", "duration", "timezone", "matchers") and wrap ErrInvalid;
// several are joined.
func NewWindow(name, cron string, d time.Duration, zone string, m Matchers, comment string) (Window, error) {
	w := Window{Name: name, Duration: d, Location: time.UTC, Matchers: m, Comment: comment}
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if name == "" {
		bad("name", "missing")
	}
	c, err := schedule.ParseCron(cron)
	if err != nil {
		bad("cron", "%v", err)
	}
	w.Cron = c
	if d <= 0 || d > MaxWindowDuration {
		bad("duration", "%s is out of range (want more than 0, at most %s)", d, MaxWindowDuration)
	}
	if zone != "" {
		loc, err := time.LoadLocation(zone)
		if err != nil || zone == "Local" {
			bad("timezone", "unknown time zone %q (want an IANA name such as Europe/Berlin or UTC)", zone)
		} else {
			w.Location = loc
		}
	}
	if m.Empty() {
		bad("matchers", "at least one of pipelines, types, levels, owners is needed (write pipelines: [\"*\"] to cover every pipeline)")
	}
	if len(comment) > MaxComment {
		bad("comment", "longer than %d bytes", MaxComment)
	}
	if len(errs) > 0 {
		return Window{}, errors.Join(errs...)
	}
	return w, nil
}

// FieldError is an error about one field of a silence or a window; it
// wraps ErrInvalid.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Unwrap makes every FieldError an ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// FieldErrors lists the FieldErrors in err (one, or several joined).
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		var fe *FieldError
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		} else if errors.As(err, &fe) {
			out = append(out, fe)
		}
	}
	walk(err)
	return out
}

// ActiveAt returns the occurrence of w that covers t: its start (the
// latest tick at or before t) and end, and whether t is before that end
// (start inclusive, end exclusive). Every occurrence lasts the same, so
// the latest start has the latest end: no earlier one can cover t when it
// does not.
func (w Window) ActiveAt(t time.Time) (start, end time.Time, ok bool) {
	s, found := w.Cron.Prev(t, w.Location)
	if !found {
		return time.Time{}, time.Time{}, false
	}
	e := s.Add(w.Duration)
	return s, e, t.Before(e)
}

// NextEnd is the end of w's first occurrence that ends after t; zero
// when the cron never fires again. It is when a window's end timer is
// due: the silence-end check runs then. Every occurrence lasts the same,
// so the first to end after t is the first to start after t - Duration
// (the cron's next tick is strictly after the instant it is given).
func (w Window) NextEnd(t time.Time) time.Time {
	s := w.Cron.Next(t.Add(-w.Duration), w.Location)
	if s.IsZero() {
		return time.Time{}
	}
	return s.Add(w.Duration)
}
