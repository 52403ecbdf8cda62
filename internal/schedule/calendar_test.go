package schedule

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestParseWeekday(t *testing.T) {
	cases := []struct {
		in   string
		want time.Weekday
	}{
		{"saturday", time.Saturday}, {"Sunday", time.Sunday}, {"MONDAY", time.Monday},
		{"sat", time.Saturday}, {"Sun", time.Sunday}, {"wed", time.Wednesday},
		{" friday ", time.Friday}, {"thu", time.Thursday}, {"Tuesday", time.Tuesday},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseWeekday(c.in)
			if err != nil || got != c.want {
				t.Fatalf("ParseWeekday(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
		})
	}
	for _, in := range []string{"", "sa", "satur", "saturdays", "weekend", "6", "holiday"} {
		t.Run("invalid "+in, func(t *testing.T) {
			if _, err := ParseWeekday(in); !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseWeekday(%q) error = %v, want ErrSyntax", in, err)
			}
		})
	}
}

func TestDaySet(t *testing.T) {
	holidays := Calendar{
		Name:  "us-holidays",
		Days:  []time.Weekday{time.Sunday},
		Dates: []Date{{2026, time.December, 25}, {2027, time.January, 1}},
	}
	closures := Calendar{Name: "closures", Dates: []Date{{2026, time.July, 3}}}
	cases := []struct {
		name string
		set  DaySet
		in   []string
		out  []string
	}{
		{
			name: "weekends",
			set:  NewDaySet(Weekends(), nil),
			in:   []string{"2026-03-07", "2026-03-08"},
			out:  []string{"2026-03-06", "2026-03-09", "2026-12-25"},
		},
		{
			name: "inline lists merged with a calendar",
			set:  NewDaySet([]time.Weekday{time.Saturday}, []Date{{2026, time.March, 10}}, holidays),
			in:   []string{"2026-03-07", "2026-03-08", "2026-03-10", "2026-12-25", "2027-01-01"},
			out:  []string{"2026-03-09", "2026-03-11", "2026-12-24"},
		},
		{
			name: "several calendars",
			set:  NewDaySet(nil, nil, holidays, closures),
			in:   []string{"2026-07-03", "2026-12-25", "2026-03-08"},
			out:  []string{"2026-07-04", "2026-03-07"},
		},
		{
			name: "leap day",
			set:  NewDaySet(nil, []Date{{2028, time.February, 29}}),
			in:   []string{"2028-02-29"},
			out:  []string{"2028-02-28", "2028-03-01", "2029-03-01"},
		},
		{
			name: "out-of-range weekday ignored",
			set:  NewDaySet([]time.Weekday{9, -1}, nil),
			out:  []string{"2026-03-07", "2026-03-08", "2026-03-09"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, s := range c.in {
				if !c.set.Contains(mustDate(t, s)) {
					t.Errorf("%s should be in the set (%s)", s, c.set)
				}
			}
			for _, s := range c.out {
				if c.set.Contains(mustDate(t, s)) {
					t.Errorf("%s should not be in the set (%s)", s, c.set)
				}
			}
		})
	}
}

func TestDaySetEmptyAndListing(t *testing.T) {
	var zero DaySet
	if !zero.Empty() || zero.Contains(mustDate(t, "2026-03-07")) || zero.String() != "" {
		t.Fatal("the zero DaySet must be empty")
	}
	if !NewDaySet(nil, nil, Calendar{Name: "nothing"}).Empty() {
		t.Fatal("a set from an empty calendar must be empty")
	}
	s := NewDaySet([]time.Weekday{time.Sunday, time.Saturday, time.Sunday}, []Date{{2026, time.December, 25}, {2026, time.January, 1}})
	if s.Empty() {
		t.Fatal("set reported empty")
	}
	if got := s.String(); got != "sunday, saturday, 2026-01-01, 2026-12-25" {
		t.Fatalf("String() = %q", got)
	}
	if !slices.Equal(s.Weekdays(), []time.Weekday{time.Sunday, time.Saturday}) {
		t.Fatalf("Weekdays() = %v", s.Weekdays())
	}
}

// Exclusion is judged on the period's date, which is a date in the
// schedule's zone: Friday 22:00 in New York is Saturday in UTC, and is not
// excluded by weekends.
func TestExclusionUsesTheZoneDate(t *testing.T) {
	weekends := NewDaySet(Weekends(), nil)
	friNight := at(t, newYork, "2026-03-06 22:00")
	if p := PeriodAt(friNight, newYork, false); weekends.Contains(p.Date) {
		t.Fatalf("%s (period %s) excluded as a weekend", show(friNight, newYork), p)
	}
	if p := PeriodAt(friNight, time.UTC, false); !weekends.Contains(p.Date) {
		t.Fatalf("in UTC the same instant is Saturday %s", p)
	}
}
