package schedule

import (
	"errors"
	"testing"
	"time"
)

func TestParseDeadline(t *testing.T) {
	cases := []struct {
		in, str string
		hourly  bool
	}{
		{"06:00", "06:00", false},
		{"6:00", "06:00", false},
		{"23:59", "23:59", false},
		{"+1d 02:00", "+1d 02:00", false},
		{"+2d 9:15", "+2d 09:15", false},
		{"+1d  02:00", "+1d 02:00", false},
		{":30", ":30", true},
		{":00", ":00", true},
		{":59", ":59", true},
		{" :05 ", ":05", true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			d, err := ParseDeadline(c.in)
			if err != nil {
				t.Fatalf("ParseDeadline(%q): %v", c.in, err)
			}
			if d.String() != c.str || d.HourlyOnly() != c.hourly || d.IsZero() {
				t.Fatalf("ParseDeadline(%q) = %q hourly=%v, want %q hourly=%v", c.in, d, d.HourlyOnly(), c.str, c.hourly)
			}
			if again, err := ParseDeadline(d.String()); err != nil || again != d {
				t.Fatalf("String() does not round-trip: %v, %v", again, err)
			}
		})
	}
	for _, in := range []string{
		"", "24:00", "12:60", ":60", ":5", ":", "30", "+0d 02:00", "+d 02:00", "+1 02:00",
		"+1d", "+1d :30", "+1d 02:00 x", "-1d 02:00", "+367d 02:00", "+1h 02:00", "1d 02:00", "T+1", "+-1d 02:00",
	} {
		t.Run("invalid "+in, func(t *testing.T) {
			if d, err := ParseDeadline(in); !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseDeadline(%q) = %v, %v; want ErrSyntax", in, d, err)
			}
		})
	}
}

func TestDeadlineResolve(t *testing.T) {
	cases := []struct {
		name, deadline, period string
		loc                    *time.Location
		want                   string
	}{
		{"same day", "06:00", "2026-03-10", newYork, "2026-03-10 06:00 -0400"},
		{"no implicit T+1 for an early time", "00:30", "2026-03-10", time.UTC, "2026-03-10 00:30 +0000"},
		{"hourly period uses its date", "06:00", "2026-03-10T22", time.UTC, "2026-03-10 06:00 +0000"},
		{"+1d", "+1d 02:00", "2026-03-10", london, "2026-03-11 02:00 +0000"},
		{"+1d across month end", "+1d 02:00", "2026-01-31", time.UTC, "2026-02-01 02:00 +0000"},
		{"+1d across year end", "+1d 02:00", "2026-12-31", time.UTC, "2027-01-01 02:00 +0000"},
		{"+1d onto a leap day", "+1d 02:00", "2028-02-28", time.UTC, "2028-02-29 02:00 +0000"},
		{"+1d off a leap day", "+1d 02:00", "2028-02-29", time.UTC, "2028-03-01 02:00 +0000"},
		{"+2d", "+2d 06:00", "2026-03-30", time.UTC, "2026-04-01 06:00 +0000"},
		{"deadline in the spring gap", "02:30", "2026-03-08", newYork, "2026-03-08 03:00 -0400"},
		{"+1d into the spring gap", "+1d 02:30", "2026-03-07", newYork, "2026-03-08 03:00 -0400"},
		{"deadline in the overlap: first occurrence", "01:30", "2026-11-01", newYork, "2026-11-01 01:30 -0400"},
		{"london gap", "01:15", "2026-03-29", london, "2026-03-29 02:00 +0100"},
		{"london overlap", "01:15", "2026-10-25", london, "2026-10-25 01:15 +0100"},
		{"after the change keeps wall time", "06:00", "2026-03-09", newYork, "2026-03-09 06:00 -0400"},

		{":MM after the hour", ":30", "2026-03-10T10", time.UTC, "2026-03-10 11:30 +0000"},
		{":MM at year end", ":30", "2026-12-31T23", time.UTC, "2027-01-01 00:30 +0000"},
		{":MM at month end", ":05", "2026-02-28T23", newYork, "2026-03-01 00:05 -0500"},
		{":MM on a leap day", ":00", "2028-02-29T23", time.UTC, "2028-03-01 00:00 +0000"},
		{":MM before the gap", ":30", "2026-03-08T01", newYork, "2026-03-08 03:30 -0400"},
		{":MM for the skipped hour", ":30", "2026-03-08T02", newYork, "2026-03-08 03:30 -0400"},
		{":MM for the repeated hour counts from its end", ":30", "2026-11-01T01", newYork, "2026-11-01 02:30 -0500"},
		{":MM for the hour before the overlap", ":30", "2026-11-01T00", newYork, "2026-11-01 01:30 -0400"},
		{":MM london repeated hour", ":15", "2026-10-25T01", london, "2026-10-25 02:15 +0000"},
		{":MM zone hour, not utc hour", ":30", "2026-07-01T10", london, "2026-07-01 11:30 +0100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseDeadline(c.deadline)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Resolve(mustPeriod(t, c.period), c.loc)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if s := show(got, c.loc); s != c.want {
				t.Fatalf("%s for %s = %s, want %s", c.deadline, c.period, s, c.want)
			}
		})
	}
}

func TestDeadlineResolveErrors(t *testing.T) {
	d, _ := ParseDeadline(":30")
	if _, err := d.Resolve(mustPeriod(t, "2026-03-10"), time.UTC); !errors.Is(err, ErrGranularity) {
		t.Fatalf(":MM with a daily period: err = %v, want ErrGranularity", err)
	}
	if _, err := (Deadline{}).Resolve(mustPeriod(t, "2026-03-10"), time.UTC); err == nil {
		t.Fatal("the zero Deadline resolved")
	}
}

func TestWarningAndRelativeBreach(t *testing.T) {
	breach := at(t, time.UTC, "2026-03-10 00:30")
	if got := WarningAt(breach, 45*time.Minute); !got.Equal(at(t, time.UTC, "2026-03-09 23:45")) {
		t.Fatalf("WarningAt = %s, want the previous day 23:45", got)
	}
	first := at(t, time.UTC, "2026-03-10 22:00")
	if got := RelativeBreach(first, 4*time.Hour); !got.Equal(at(t, time.UTC, "2026-03-11 02:00")) {
		t.Fatalf("RelativeBreach = %s", got)
	}
}
