package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseCron(t *testing.T) {
	cases := []struct {
		in, str  string
		subDaily bool
	}{
		{"30 2 * * *", "30 2 * * *", false},
		{"  30   2 * *  * ", "30 2 * * *", false},
		{"0 * * * *", "0 * * * *", true},
		{"*/15 * * * *", "*/15 * * * *", true},
		{"0 0,12 * * *", "0 0,12 * * *", true},
		{"0 6 * * mon-fri", "0 6 * * mon-fri", false},
		{"0 6 1 jan *", "0 6 1 jan *", false},
		{"0 0 29 2 *", "0 0 29 2 *", false},
		{"0 0 31 2 mon", "0 0 31 2 mon", false}, // day-of-month OR day-of-week: Mondays in February
		{"@hourly", "@hourly", true},
		{"@daily", "@daily", false},
		{"@DAILY", "@daily", false},
		{"@midnight", "@midnight", false},
		{"@weekly", "@weekly", false},
		{"@monthly", "@monthly", false},
		{"@yearly", "@yearly", false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseCron(c.in)
			if err != nil {
				t.Fatalf("ParseCron(%q): %v", c.in, err)
			}
			if got.String() != c.str {
				t.Errorf("String() = %q, want %q", got.String(), c.str)
			}
			if got.SubDaily() != c.subDaily {
				t.Errorf("SubDaily() = %v, want %v", got.SubDaily(), c.subDaily)
			}
			again, err := ParseCron(got.String())
			if err != nil || again != got {
				t.Errorf("String() does not round-trip: %v, %v", again, err)
			}
		})
	}
}

func TestParseCronErrors(t *testing.T) {
	cases := []struct {
		in, mention string
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"* * * *", "4 fields"},
		{"0 0 0 * * *", "seconds"},
		{"* * * * * * *", "7 fields"},
		{"60 * * * *", "minute field"},
		{"0 24 * * *", "hour field"},
		{"0 0 0 * *", "day-of-month field"},
		{"0 0 32 * *", "day-of-month field"},
		{"0 0 * 13 *", "month field"},
		{"0 0 * * 8", "day-of-week field"},
		{"0 0 * * funday", "day-of-week field"},
		{"*/0 * * * *", "minute field"},
		{"5-1 * * * *", "minute field"},
		{"1-2-3 * * * *", "minute field"},
		{", * * * *", "matches no value"},
		{"-1 * * * *", "minute field"},
		{"0 0 30 2 *", "no date matches"},
		{"0 0 31 4,6,9,11 *", "no date matches"},
		{"@every 1h", "@every"},
		{"@reboot", "unknown descriptor"},
		{"@daily 5", "unexpected text"},
		{"CRON_TZ=UTC 0 0 * * *", "time zone"},
		{"TZ=UTC", "time zone"},
		{"TZ=Europe/London 0 0 * * *", "time zone"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseCron(c.in)
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseCron(%q) = %v, %v; want ErrSyntax", c.in, got, err)
			}
			if !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("ParseCron(%q) error %q does not mention %q", c.in, err, c.mention)
			}
		})
	}
}

func TestZeroCron(t *testing.T) {
	var c Cron
	now := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	if !c.IsZero() || !c.Next(now, nil).IsZero() || c.Ticks(now, now.Add(48*time.Hour), nil, 10) != nil {
		t.Fatal("the zero Cron must never fire")
	}
	if _, ok := c.Prev(now, nil); ok {
		t.Fatal("the zero Cron has no previous tick")
	}
}

func TestCronPeriodOf(t *testing.T) {
	cases := []struct {
		name, cron string
		loc        *time.Location
		tick       string
		want       string
	}{
		{"daily uses the zone date", "30 22 * * *", newYork, "2026-03-10 02:30 +0000", "2026-03-09"},
		{"hourly uses the zone hour", "0 * * * *", newYork, "2026-03-10 02:00 +0000", "2026-03-09T22"},
		{"twice a day is sub-daily", "0 0,12 * * *", london, "2026-07-01 11:00 +0000", "2026-07-01T12"},
		{"repeated hour, first pass", "0 * * * *", newYork, "2026-11-01 01:00 -0400", "2026-11-01T01"},
		{"repeated hour, second pass", "0 * * * *", newYork, "2026-11-01 01:00 -0500", "2026-11-01T01"},
		{"year end", "@daily", time.UTC, "2027-01-01 00:00 +0000", "2027-01-01"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mustCron(t, c.cron).PeriodOf(at(t, time.UTC, c.tick), c.loc)
			if got.String() != c.want {
				t.Fatalf("PeriodOf = %s, want %s", got, c.want)
			}
		})
	}
}
