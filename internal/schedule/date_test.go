package schedule

import (
	"errors"
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	cases := []struct {
		in   string
		want Date
	}{
		{"2026-03-10", Date{2026, time.March, 10}},
		{"20260310", Date{2026, time.March, 10}},
		{"2028-02-29", Date{2028, time.February, 29}},
		{"20280229", Date{2028, time.February, 29}},
		{"2000-02-29", Date{2000, time.February, 29}},
		{"2026-12-31", Date{2026, time.December, 31}},
		{"0001-01-01", Date{1, time.January, 1}},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseDate(c.in)
			if err != nil {
				t.Fatalf("ParseDate(%q): %v", c.in, err)
			}
			if got != c.want {
				t.Fatalf("ParseDate(%q) = %v, want %v", c.in, got, c.want)
			}
		})
	}
}

func TestParseDateErrors(t *testing.T) {
	for _, in := range []string{
		"", "2026-02-29", "2026-02-30", "2100-02-29", "2026-13-01", "2026-00-10",
		"2026-04-31", "2026-01-00", "0000-01-01", "2026-3-10", "2026/03/10",
		"202603100", "2026-03-10T07", "+026-03-10", "2026-+3-10", " 2026-03-10",
		"2026031", "abcdefgh", "2026-03-1a",
	} {
		t.Run(in, func(t *testing.T) {
			if d, err := ParseDate(in); !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseDate(%q) = %v, %v; want ErrSyntax", in, d, err)
			}
		})
	}
}

func TestDateFormatting(t *testing.T) {
	d := Date{2026, time.March, 3}
	if got := d.String(); got != "2026-03-03" {
		t.Errorf("String() = %q", got)
	}
	if got := d.Compact(); got != "20260303" {
		t.Errorf("Compact() = %q", got)
	}
}

func TestDateAddDays(t *testing.T) {
	cases := []struct {
		name string
		from string
		n    int
		want string
	}{
		{"month end", "2026-01-31", 1, "2026-02-01"},
		{"year end", "2026-12-31", 1, "2027-01-01"},
		{"into leap day", "2028-02-28", 1, "2028-02-29"},
		{"over leap day", "2028-02-28", 2, "2028-03-01"},
		{"no leap day", "2026-02-28", 1, "2026-03-01"},
		{"backwards over year", "2027-01-01", -1, "2026-12-31"},
		{"zero", "2026-05-05", 0, "2026-05-05"},
		{"a year", "2026-03-10", 365, "2027-03-10"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mustDate(t, c.from).AddDays(c.n).String(); got != c.want {
				t.Fatalf("%s.AddDays(%d) = %s, want %s", c.from, c.n, got, c.want)
			}
		})
	}
}

func TestDateWeekdayAndOrder(t *testing.T) {
	if got := mustDate(t, "2026-03-08").Weekday(); got != time.Sunday {
		t.Errorf("2026-03-08 is a %v, want Sunday", got)
	}
	if got := mustDate(t, "2028-02-29").Weekday(); got != time.Tuesday {
		t.Errorf("2028-02-29 is a %v, want Tuesday", got)
	}
	a, b := mustDate(t, "2026-12-31"), mustDate(t, "2027-01-01")
	if !a.Before(b) || b.Before(a) || a.Before(a) {
		t.Errorf("Before is wrong for %v and %v", a, b)
	}
	if !b.After(a) || a.Compare(a) != 0 || mustDate(t, "2026-02-01").Compare(mustDate(t, "2026-01-31")) != 1 {
		t.Errorf("Compare/After wrong")
	}
}

func TestDateMidnightAndDateOf(t *testing.T) {
	cases := []struct {
		name string
		loc  *time.Location
		date string
		want string
	}{
		{"new york spring-forward day", newYork, "2026-03-08", "2026-03-08 00:00 -0500"},
		{"new york fall-back day", newYork, "2026-11-01", "2026-11-01 00:00 -0400"},
		{"london summer", london, "2026-07-01", "2026-07-01 00:00 +0100"},
		// Chile springs forward at midnight: 2026-09-06 starts at 01:00.
		{"santiago midnight skipped", santiago, "2026-09-06", "2026-09-06 01:00 -0300"},
		{"nil location is UTC", nil, "2026-03-08", "2026-03-08 00:00 +0000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := mustDate(t, c.date)
			got := d.Midnight(c.loc)
			if s := show(got, orUTC(c.loc)); s != c.want {
				t.Fatalf("Midnight = %s, want %s", s, c.want)
			}
			if back := DateOf(got, c.loc); back != d {
				t.Fatalf("DateOf(Midnight) = %v, want %v", back, d)
			}
			if prev := DateOf(got.Add(-time.Nanosecond), c.loc); prev != d.AddDays(-1) {
				t.Fatalf("the instant before Midnight is on %v, want the previous date", prev)
			}
		})
	}
}

func TestDateOfUsesTheZoneNotUTC(t *testing.T) {
	// 03:30 UTC on the 10th is still the 9th in New York.
	instant := time.Date(2026, time.March, 10, 3, 30, 0, 0, time.UTC)
	if got := DateOf(instant, newYork).String(); got != "2026-03-09" {
		t.Fatalf("DateOf = %s, want 2026-03-09", got)
	}
	if got := DateOf(instant, time.UTC).String(); got != "2026-03-10" {
		t.Fatalf("DateOf UTC = %s", got)
	}
}
