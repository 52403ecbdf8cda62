package schedule

import (
	"testing"
	"time"
)

// FuzzParse feeds one string to every parser: none may panic, whatever
// parses must print in a form that parses back to the same value, and the
// parsed value must be usable (resolving, ticking) without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"2026-03-10", "20260310", "2028-02-29", "2026-02-29", "2026-03-10T07", "20260310T23",
		"30 2 * * *", "*/15 * * * *", "0 0 29 2 *", "0 6 * * mon-fri", "@hourly", "@every 1h",
		"TZ=UTC", "CRON_TZ=Europe/London 0 0 * * *", "0 0 31 2 *", "1-2-3/4/5 * * * *",
		"06:00", "+1d 02:00", ":30", "+366d 23:59", "saturday", "sat", "", "#", "a#20260303T07",
	} {
		f.Add(s)
	}
	instant := time.Date(2026, time.November, 1, 5, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseDate(s); err == nil {
			if again, err := ParseDate(d.String()); err != nil || again != d {
				t.Fatalf("date %q: String %q gives %v, %v", s, d, again, err)
			}
			if again, err := ParseDate(d.Compact()); err != nil || again != d {
				t.Fatalf("date %q: Compact %q gives %v, %v", s, d.Compact(), again, err)
			}
			_ = d.Midnight(newYork)
		}
		if p, err := ParsePeriod(s); err == nil {
			if again, err := ParsePeriod(p.String()); err != nil || again != p {
				t.Fatalf("period %q: String %q gives %v, %v", s, p, again, err)
			}
			if start, end := p.Start(newYork), p.End(newYork); end.Before(start) {
				t.Fatalf("period %q ends before it starts", s)
			}
		}
		if c, err := ParseCron(s); err == nil {
			again, err := ParseCron(c.String())
			if err != nil || again != c {
				t.Fatalf("cron %q: String %q gives %v, %v", s, c, again, err)
			}
			next := c.Next(instant, newYork)
			if !next.After(instant) {
				t.Fatalf("cron %q: Next(%v) = %v", s, instant, next)
			}
			if prev, ok := c.Prev(next, newYork); !ok || !prev.Equal(next) {
				t.Fatalf("cron %q: Prev(Next) = %v, %v; want %v", s, prev, ok, next)
			}
			_ = c.PeriodOf(next, newYork)
		}
		if d, err := ParseDeadline(s); err == nil {
			if again, err := ParseDeadline(d.String()); err != nil || again != d {
				t.Fatalf("deadline %q: String %q gives %v, %v", s, d, again, err)
			}
			_, _ = d.Resolve(HourlyPeriod(Date{2026, time.March, 8}, 1), newYork)
			_, _ = d.Resolve(Daily(Date{2026, time.March, 8}), newYork)
		}
		if c, err := ParseClockTime(s); err == nil {
			if again, err := ParseClockTime(c.String()); err != nil || again != c {
				t.Fatalf("clock %q: String %q gives %v, %v", s, c, again, err)
			}
		}
		_, _ = ParseWeekday(s)
		_, _, _ = SplitPeriodKey(s)
	})
}
