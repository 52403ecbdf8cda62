package schedule

import (
	"errors"
	"testing"
	"time"
)

func TestParseClockTime(t *testing.T) {
	cases := []struct {
		in   string
		want ClockTime
	}{
		{"00:00", ClockTime{0, 0}},
		{"23:59", ClockTime{23, 59}},
		{"09:30", ClockTime{9, 30}},
		{"9:30", ClockTime{9, 30}},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseClockTime(c.in)
			if err != nil || got != c.want {
				t.Fatalf("ParseClockTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
			if again, _ := ParseClockTime(got.String()); again != got {
				t.Fatalf("String() %q does not round-trip", got.String())
			}
		})
	}
	for _, in := range []string{"", "24:00", "12:60", "12", "12:5", "123:00", ":30", "12:30:00", "-1:30", "ab:cd", "12:+5"} {
		t.Run("invalid "+in, func(t *testing.T) {
			if got, err := ParseClockTime(in); !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseClockTime(%q) = %v, %v; want ErrSyntax", in, got, err)
			}
		})
	}
}

func TestClockTimeOn(t *testing.T) {
	cases := []struct {
		name  string
		loc   *time.Location
		date  string
		clock ClockTime
		want  string
	}{
		{"ordinary", newYork, "2026-03-07", ClockTime{2, 30}, "2026-03-07 02:30 -0500"},
		{"new york gap: first instant after it", newYork, "2026-03-08", ClockTime{2, 30}, "2026-03-08 03:00 -0400"},
		{"new york gap start", newYork, "2026-03-08", ClockTime{2, 0}, "2026-03-08 03:00 -0400"},
		{"new york just before the gap", newYork, "2026-03-08", ClockTime{1, 59}, "2026-03-08 01:59 -0500"},
		{"new york just after the gap", newYork, "2026-03-08", ClockTime{3, 0}, "2026-03-08 03:00 -0400"},
		{"new york overlap: first occurrence", newYork, "2026-11-01", ClockTime{1, 30}, "2026-11-01 01:30 -0400"},
		{"new york overlap start", newYork, "2026-11-01", ClockTime{1, 0}, "2026-11-01 01:00 -0400"},
		{"new york after the overlap", newYork, "2026-11-01", ClockTime{2, 0}, "2026-11-01 02:00 -0500"},
		{"london gap", london, "2026-03-29", ClockTime{1, 30}, "2026-03-29 02:00 +0100"},
		{"london overlap", london, "2026-10-25", ClockTime{1, 30}, "2026-10-25 01:30 +0100"},
		{"london winter", london, "2026-10-26", ClockTime{1, 30}, "2026-10-26 01:30 +0000"},
		{"santiago overlap before midnight", santiago, "2026-04-04", ClockTime{23, 30}, "2026-04-04 23:30 -0300"},
		{"utc", time.UTC, "2028-02-29", ClockTime{23, 59}, "2028-02-29 23:59 +0000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.clock.On(mustDate(t, c.date), c.loc)
			if s := show(got, c.loc); s != c.want {
				t.Fatalf("%v.On(%s) = %s, want %s", c.clock, c.date, s, c.want)
			}
		})
	}
}

// Every reading of every day in a year with two changes resolves to an
// instant on the same date, at or after the reading, and never later than
// the reading's own instant when the reading exists.
func TestClockTimeOnProperty(t *testing.T) {
	for _, loc := range []*time.Location{newYork, london, santiago} {
		t.Run(loc.String(), func(t *testing.T) {
			for d := mustDate(t, "2026-01-01"); d.Before(mustDate(t, "2027-01-01")); d = d.AddDays(1) {
				prev := time.Time{}
				for m := 0; m < 24*60; m += 10 {
					c := ClockTime{m / 60, m % 60}
					got := c.On(d, loc)
					if DateOf(got, loc) != d {
						t.Fatalf("%v on %v resolved to another date: %s", c, d, show(got, loc))
					}
					w := wallOf(got, loc)
					if w.Before(naiveWall(d, c.Hour, c.Minute)) {
						t.Fatalf("%v on %v resolved before its reading: %s", c, d, show(got, loc))
					}
					if got.Before(prev) {
						t.Fatalf("%v on %v resolved before an earlier reading did", c, d)
					}
					prev = got
				}
			}
		})
	}
}
