package schedule

import (
	"errors"
	"testing"
	"time"
)

func TestParsePeriod(t *testing.T) {
	cases := []struct {
		in   string
		want Period
		str  string
	}{
		{"2026-03-10", Daily(Date{2026, time.March, 10}), "2026-03-10"},
		{"20260310", Daily(Date{2026, time.March, 10}), "2026-03-10"},
		{"2026-03-10T07", HourlyPeriod(Date{2026, time.March, 10}, 7), "2026-03-10T07"},
		{"20260310T07", HourlyPeriod(Date{2026, time.March, 10}, 7), "2026-03-10T07"},
		{"2026-03-10T00", HourlyPeriod(Date{2026, time.March, 10}, 0), "2026-03-10T00"},
		{"2028-02-29T23", HourlyPeriod(Date{2028, time.February, 29}, 23), "2028-02-29T23"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParsePeriod(c.in)
			if err != nil {
				t.Fatalf("ParsePeriod(%q): %v", c.in, err)
			}
			if got != c.want || got.String() != c.str {
				t.Fatalf("ParsePeriod(%q) = %#v (%s), want %s", c.in, got, got, c.str)
			}
		})
	}
	for _, in := range []string{
		"", "2026-03-10T", "2026-03-10T7", "2026-03-10T24", "2026-03-10T007", "2026-03-10 07",
		"2026-03-10T07:00", "2026-02-29", "2026-02-29T01", "T07", "2026-03-10t07", "2026-03-10T-1",
	} {
		t.Run("invalid "+in, func(t *testing.T) {
			if p, err := ParsePeriod(in); !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParsePeriod(%q) = %v, %v; want ErrSyntax", in, p, err)
			}
		})
	}
}

func TestPeriodCompactAndNext(t *testing.T) {
	cases := []struct {
		in, compact, next string
	}{
		{"2026-03-10", "20260310", "2026-03-11"},
		{"2026-03-10T07", "20260310T07", "2026-03-10T08"},
		{"2026-12-31T23", "20261231T23", "2027-01-01T00"},
		{"2026-12-31", "20261231", "2027-01-01"},
		{"2028-02-28T23", "20280228T23", "2028-02-29T00"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			p := mustPeriod(t, c.in)
			if got := p.Compact(); got != c.compact {
				t.Errorf("Compact() = %s, want %s", got, c.compact)
			}
			if got := p.Next().String(); got != c.next {
				t.Errorf("Next() = %s, want %s", got, c.next)
			}
			if got := mustPeriod(t, c.next).Prev(); got != p {
				t.Errorf("Prev() of %s = %s, want %s", c.next, got, c.in)
			}
		})
	}
}

func TestHourlyPeriodNormalises(t *testing.T) {
	d := Date{2026, time.December, 31}
	cases := []struct {
		hour int
		want string
	}{{24, "2027-01-01T00"}, {25, "2027-01-01T01"}, {-1, "2026-12-30T23"}, {-24, "2026-12-30T00"}, {-25, "2026-12-29T23"}, {23, "2026-12-31T23"}}
	for _, c := range cases {
		if got := HourlyPeriod(d, c.hour).String(); got != c.want {
			t.Errorf("HourlyPeriod(%v, %d) = %s, want %s", d, c.hour, got, c.want)
		}
	}
}

func TestPeriodStartEnd(t *testing.T) {
	cases := []struct {
		name       string
		loc        *time.Location
		period     string
		start, end string
		length     time.Duration
	}{
		{"ordinary day", newYork, "2026-03-07", "2026-03-07 00:00 -0500", "2026-03-08 00:00 -0500", 24 * time.Hour},
		{"new york spring day is 23h", newYork, "2026-03-08", "2026-03-08 00:00 -0500", "2026-03-09 00:00 -0400", 23 * time.Hour},
		{"new york fall day is 25h", newYork, "2026-11-01", "2026-11-01 00:00 -0400", "2026-11-02 00:00 -0500", 25 * time.Hour},
		{"london spring day is 23h", london, "2026-03-29", "2026-03-29 00:00 +0000", "2026-03-30 00:00 +0100", 23 * time.Hour},
		{"london autumn day is 25h", london, "2026-10-25", "2026-10-25 00:00 +0100", "2026-10-26 00:00 +0000", 25 * time.Hour},
		{"santiago day without midnight", santiago, "2026-09-06", "2026-09-06 01:00 -0300", "2026-09-07 00:00 -0300", 23 * time.Hour},
		{"year end", time.UTC, "2026-12-31", "2026-12-31 00:00 +0000", "2027-01-01 00:00 +0000", 24 * time.Hour},

		{"new york hour before the gap", newYork, "2026-03-08T01", "2026-03-08 01:00 -0500", "2026-03-08 03:00 -0400", time.Hour},
		{"new york skipped hour is empty", newYork, "2026-03-08T02", "2026-03-08 03:00 -0400", "2026-03-08 03:00 -0400", 0},
		{"new york hour after the gap", newYork, "2026-03-08T03", "2026-03-08 03:00 -0400", "2026-03-08 04:00 -0400", time.Hour},
		{"new york repeated hour is 2h", newYork, "2026-11-01T01", "2026-11-01 01:00 -0400", "2026-11-01 02:00 -0500", 2 * time.Hour},
		{"new york hour after the overlap", newYork, "2026-11-01T02", "2026-11-01 02:00 -0500", "2026-11-01 03:00 -0500", time.Hour},
		{"london skipped hour is empty", london, "2026-03-29T01", "2026-03-29 02:00 +0100", "2026-03-29 02:00 +0100", 0},
		{"london hour before the gap", london, "2026-03-29T00", "2026-03-29 00:00 +0000", "2026-03-29 02:00 +0100", time.Hour},
		{"london repeated hour is 2h", london, "2026-10-25T01", "2026-10-25 01:00 +0100", "2026-10-25 02:00 +0000", 2 * time.Hour},
		{"last hour of the year", time.UTC, "2026-12-31T23", "2026-12-31 23:00 +0000", "2027-01-01 00:00 +0000", time.Hour},
		{"leap day last hour", time.UTC, "2028-02-29T23", "2028-02-29 23:00 +0000", "2028-03-01 00:00 +0000", time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustPeriod(t, c.period)
			start, end := p.Start(c.loc), p.End(c.loc)
			if got := show(start, c.loc); got != c.start {
				t.Errorf("Start = %s, want %s", got, c.start)
			}
			if got := show(end, c.loc); got != c.end {
				t.Errorf("End = %s, want %s", got, c.end)
			}
			if got := end.Sub(start); got != c.length {
				t.Errorf("length = %v, want %v", got, c.length)
			}
		})
	}
}

// Hourly periods tile their day exactly, and every instant of the day maps
// back (PeriodAt) to the hour whose [Start, End) holds it.
func TestPeriodsTileTheDay(t *testing.T) {
	days := []struct {
		loc  *time.Location
		date string
	}{
		{newYork, "2026-03-08"}, {newYork, "2026-11-01"}, {newYork, "2026-06-15"},
		{london, "2026-03-29"}, {london, "2026-10-25"},
		{santiago, "2026-04-04"}, {santiago, "2026-09-06"},
	}
	for _, c := range days {
		t.Run(c.loc.String()+" "+c.date, func(t *testing.T) {
			day := Daily(mustDate(t, c.date))
			var sum time.Duration
			for h := 0; h < 24; h++ {
				p := HourlyPeriod(day.Date, h)
				if h == 0 && !p.Start(c.loc).Equal(day.Start(c.loc)) {
					t.Fatalf("T00 starts at %s, the day at %s", show(p.Start(c.loc), c.loc), show(day.Start(c.loc), c.loc))
				}
				sum += p.End(c.loc).Sub(p.Start(c.loc))
			}
			if want := day.End(c.loc).Sub(day.Start(c.loc)); sum != want {
				t.Fatalf("hours add up to %v, the day lasts %v", sum, want)
			}
			for x := day.Start(c.loc); x.Before(day.End(c.loc)); x = x.Add(7 * time.Minute) {
				p := PeriodAt(x, c.loc, true)
				if x.Before(p.Start(c.loc)) || !x.Before(p.End(c.loc)) {
					t.Fatalf("%s maps to %s = [%s, %s)", show(x, c.loc), p, show(p.Start(c.loc), c.loc), show(p.End(c.loc), c.loc))
				}
				if d := PeriodAt(x, c.loc, false); d != day {
					t.Fatalf("%s maps to day %s, want %s", show(x, c.loc), d, day)
				}
			}
		})
	}
}

func TestPeriodAt(t *testing.T) {
	cases := []struct {
		name    string
		loc     *time.Location
		instant string
		hourly  bool
		want    string
	}{
		{"zone date, not utc date", newYork, "2026-03-10 02:30 +0000", false, "2026-03-09"},
		{"first pass of repeated hour", newYork, "2026-11-01 01:30 -0400", true, "2026-11-01T01"},
		{"second pass of repeated hour", newYork, "2026-11-01 01:30 -0500", true, "2026-11-01T01"},
		{"after the gap", newYork, "2026-03-08 03:00 -0400", true, "2026-03-08T03"},
		{"nil location", nil, "2026-12-31 23:59 +0000", true, "2026-12-31T23"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := at(t, time.UTC, c.instant)
			if got := PeriodAt(x, c.loc, c.hourly).String(); got != c.want {
				t.Fatalf("PeriodAt = %s, want %s", got, c.want)
			}
		})
	}
}
