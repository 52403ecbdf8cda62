package schedule

import (
	"slices"
	"testing"
	"time"
)

func TestCronTicks(t *testing.T) {
	cases := []struct {
		name     string
		cron     string
		loc      *time.Location
		from, to string // wall times in loc
		want     []string
	}{
		{
			name: "new york daily in the spring gap fires once, after the gap",
			cron: "30 2 * * *", loc: newYork, from: "2026-03-07 00:00", to: "2026-03-10 00:00",
			want: []string{"2026-03-07 02:30 -0500", "2026-03-08 03:00 -0400", "2026-03-09 02:30 -0400"},
		},
		{
			name: "new york daily at the gap start",
			cron: "0 2 * * *", loc: newYork, from: "2026-03-08 00:00", to: "2026-03-09 00:00",
			want: []string{"2026-03-08 03:00 -0400"},
		},
		{
			name: "new york daily in the overlap fires once, first pass",
			cron: "30 1 * * *", loc: newYork, from: "2026-10-31 00:00", to: "2026-11-03 00:00",
			want: []string{"2026-10-31 01:30 -0400", "2026-11-01 01:30 -0400", "2026-11-02 01:30 -0500"},
		},
		{
			name: "new york hourly across the gap",
			cron: "0 * * * *", loc: newYork, from: "2026-03-08 00:00", to: "2026-03-08 05:00",
			want: []string{"2026-03-08 01:00 -0500", "2026-03-08 03:00 -0400", "2026-03-08 04:00 -0400", "2026-03-08 05:00 -0400"},
		},
		{
			name: "new york hourly fires in both passes of the repeated hour",
			cron: "0 * * * *", loc: newYork, from: "2026-10-31 23:30", to: "2026-11-01 03:00",
			want: []string{"2026-11-01 00:00 -0400", "2026-11-01 01:00 -0400", "2026-11-01 01:00 -0500", "2026-11-01 02:00 -0500", "2026-11-01 03:00 -0500"},
		},
		{
			name: "new york every 30 minutes through the overlap",
			cron: "*/30 * * * *", loc: newYork, from: "2026-11-01 00:45", to: "2026-11-01 02:00",
			want: []string{"2026-11-01 01:00 -0400", "2026-11-01 01:30 -0400", "2026-11-01 01:00 -0500", "2026-11-01 01:30 -0500", "2026-11-01 02:00 -0500"},
		},
		{
			name: "fixed hours fire once in the overlap",
			cron: "0 1-3 * * *", loc: newYork, from: "2026-11-01 00:00", to: "2026-11-01 04:00",
			want: []string{"2026-11-01 01:00 -0400", "2026-11-01 02:00 -0500", "2026-11-01 03:00 -0500"},
		},
		{
			name: "minutes in the gap collapse into one tick",
			cron: "*/20 1-3 * * *", loc: newYork, from: "2026-03-08 01:30", to: "2026-03-08 03:30",
			want: []string{"2026-03-08 01:40 -0500", "2026-03-08 03:00 -0400", "2026-03-08 03:20 -0400"},
		},
		{
			name: "london daily in the spring gap",
			cron: "30 1 * * *", loc: london, from: "2026-03-28 00:00", to: "2026-03-31 00:00",
			want: []string{"2026-03-28 01:30 +0000", "2026-03-29 02:00 +0100", "2026-03-30 01:30 +0100"},
		},
		{
			name: "london daily in the autumn overlap",
			cron: "30 1 * * *", loc: london, from: "2026-10-24 12:00", to: "2026-10-26 12:00",
			want: []string{"2026-10-25 01:30 +0100", "2026-10-26 01:30 +0000"},
		},
		{
			name: "london hourly across the spring gap",
			cron: "@hourly", loc: london, from: "2026-03-28 23:30", to: "2026-03-29 03:00",
			want: []string{"2026-03-29 00:00 +0000", "2026-03-29 02:00 +0100", "2026-03-29 03:00 +0100"},
		},
		{
			name: "london hourly across the autumn overlap",
			cron: "@hourly", loc: london, from: "2026-10-24 23:30", to: "2026-10-25 02:00",
			want: []string{"2026-10-25 00:00 +0100", "2026-10-25 01:00 +0100", "2026-10-25 01:00 +0000", "2026-10-25 02:00 +0000"},
		},
		{
			name: "santiago midnight skipped",
			cron: "@daily", loc: santiago, from: "2026-09-04 12:00", to: "2026-09-07 12:00",
			want: []string{"2026-09-05 00:00 -0400", "2026-09-06 01:00 -0300", "2026-09-07 00:00 -0300"},
		},
		{
			name: "santiago repeated 23:xx fires once",
			cron: "30 23 * * *", loc: santiago, from: "2026-04-04 12:00", to: "2026-04-05 12:00",
			want: []string{"2026-04-04 23:30 -0300"},
		},
		{
			name: "day 31 skips short months",
			cron: "0 0 31 * *", loc: time.UTC, from: "2026-01-01 00:00", to: "2026-06-01 00:00",
			want: []string{"2026-01-31 00:00 +0000", "2026-03-31 00:00 +0000", "2026-05-31 00:00 +0000"},
		},
		{
			name: "year end",
			cron: "59 23 31 12 *", loc: time.UTC, from: "2026-12-01 00:00", to: "2027-12-31 23:58",
			want: []string{"2026-12-31 23:59 +0000"},
		},
		{
			name: "yearly",
			cron: "@yearly", loc: newYork, from: "2026-06-01 00:00", to: "2028-01-01 00:00",
			want: []string{"2027-01-01 00:00 -0500", "2028-01-01 00:00 -0500"},
		},
		{
			name: "weekdays skip the weekend",
			cron: "0 6 * * mon-fri", loc: london, from: "2026-03-06 07:00", to: "2026-03-10 00:00",
			want: []string{"2026-03-09 06:00 +0000"},
		},
		{
			name: "day of month or day of week when both are restricted",
			cron: "0 12 1 * mon", loc: time.UTC, from: "2026-03-01 00:00", to: "2026-03-10 00:00",
			want: []string{"2026-03-01 12:00 +0000", "2026-03-02 12:00 +0000", "2026-03-09 12:00 +0000"},
		},
		{
			name: "from is exclusive, to inclusive",
			cron: "@daily", loc: time.UTC, from: "2026-03-01 00:00", to: "2026-03-03 00:00",
			want: []string{"2026-03-02 00:00 +0000", "2026-03-03 00:00 +0000"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ticks := mustCron(t, c.cron).Ticks(at(t, c.loc, c.from), at(t, c.loc, c.to), c.loc, 100)
			var got []string
			for _, x := range ticks {
				got = append(got, show(x, c.loc))
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("ticks\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestCronNextLeapDay(t *testing.T) {
	c := mustCron(t, "0 0 29 2 *")
	got := c.Next(at(t, time.UTC, "2026-01-01 00:00"), time.UTC)
	if s := show(got, time.UTC); s != "2028-02-29 00:00 +0000" {
		t.Fatalf("Next = %s", s)
	}
	// 2100 is not a leap year: the next 29 February after 2096 is in 2104.
	got = c.Next(at(t, time.UTC, "2096-03-01 00:00"), time.UTC)
	if s := show(got, time.UTC); s != "2104-02-29 00:00 +0000" {
		t.Fatalf("Next after 2096 = %s", s)
	}
}

func TestCronTicksLimit(t *testing.T) {
	c := mustCron(t, "* * * * *")
	from := at(t, time.UTC, "2026-03-03 00:00")
	if got := c.Ticks(from, from.Add(24*time.Hour), time.UTC, 5); len(got) != 5 {
		t.Fatalf("got %d ticks, want the limit 5", len(got))
	}
	if got := c.Ticks(from, from.Add(24*time.Hour), time.UTC, 0); len(got) != 0 {
		t.Fatalf("limit 0 gave %d ticks", len(got))
	}
}

// dstZones are the zones the properties below are checked in. Lord Howe
// moves its clocks by half an hour.
var dstZones = []*time.Location{newYork, london, santiago, mustZone("Australia/Sydney"), mustZone("Australia/Lord_Howe")}

// A daily cron fires exactly once per local date, on that date, never
// before its wall time, whatever the zone does to its clocks.
func TestDailyCronOncePerDate(t *testing.T) {
	times := []string{"00:00", "00:30", "01:00", "01:30", "02:00", "02:30", "03:00", "12:00", "23:30", "23:59"}
	for _, loc := range dstZones {
		for _, hm := range times {
			t.Run(loc.String()+" "+hm, func(t *testing.T) {
				ct, _ := ParseClockTime(hm)
				c := mustCron(t, fmtCron(ct))
				first, last := mustDate(t, "2026-01-01"), mustDate(t, "2027-01-01")
				ticks := c.Ticks(first.Midnight(loc).Add(-time.Nanosecond), last.Midnight(loc).Add(-time.Nanosecond), loc, 1000)
				if len(ticks) != 365 {
					t.Fatalf("%d ticks in 2026, want 365", len(ticks))
				}
				for i, x := range ticks {
					want := first.AddDays(i)
					if got := c.PeriodOf(x, loc); got != Daily(want) {
						t.Fatalf("tick %d at %s is for %s, want %s", i, show(x, loc), got, want)
					}
					if wallOf(x, loc).Before(naiveWall(want, ct.Hour, ct.Minute)) {
						t.Fatalf("tick %s fires before %s", show(x, loc), hm)
					}
					if !x.Equal(ct.On(want, loc)) {
						t.Fatalf("tick %s differs from ClockTime.On %s", show(x, loc), show(ct.On(want, loc), loc))
					}
				}
			})
		}
	}
}

func fmtCron(c ClockTime) string {
	return time.Date(2000, 1, 1, c.Hour, c.Minute, 0, 0, time.UTC).Format("4 15") + " * * *"
}

// oracleTicks lists a cron's ticks on the given dates the slow way: every
// matching reading, resolved, deduplicated.
func oracleTicks(c Cron, loc *time.Location, first Date, days int) []time.Time {
	var out []time.Time
	for i := range days {
		d := first.AddDays(i)
		if !c.dayMatches(d) {
			continue
		}
		for h := range 24 {
			for m := range 60 {
				if c.hour&(1<<uint(h)) == 0 || c.minute&(1<<uint(m)) == 0 {
					continue
				}
				a, b, repeated := resolveWall(naiveWall(d, h, m), loc)
				out = append(out, a)
				if repeated && c.everyHour() {
					out = append(out, b)
				}
			}
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return slices.CompactFunc(out, time.Time.Equal)
}

// Next and Prev agree with the slow enumeration at every point around
// each change, including points inside repeated hours.
func TestCronNextPrevMatchOracle(t *testing.T) {
	crons := []string{"0 * * * *", "*/20 * * * *", "30 1 * * *", "30 2 * * *", "15 0-3 * * *", "0 0 * * *", "45 23 * * *", "*/7 1,2 * * *"}
	changes := []struct {
		loc  *time.Location
		date string
	}{
		{newYork, "2026-03-08"}, {newYork, "2026-11-01"}, {london, "2026-03-29"}, {london, "2026-10-25"},
		{santiago, "2026-04-05"}, {santiago, "2026-09-06"}, {mustZone("Australia/Lord_Howe"), "2026-04-05"},
	}
	for _, ch := range changes {
		for _, expr := range crons {
			t.Run(ch.loc.String()+" "+ch.date+" "+expr, func(t *testing.T) {
				c := mustCron(t, expr)
				day := mustDate(t, ch.date)
				all := oracleTicks(c, ch.loc, day.AddDays(-2), 5)
				lo, hi := day.AddDays(-1).Midnight(ch.loc), day.AddDays(2).Midnight(ch.loc)
				for x := lo; x.Before(hi); x = x.Add(5*time.Minute + 7*time.Second) {
					for _, p := range []time.Time{x, x.Truncate(time.Minute)} {
						i, _ := slices.BinarySearchFunc(all, p, func(a, b time.Time) int {
							if a.After(b) {
								return 1
							}
							return -1
						})
						if i >= len(all) {
							continue
						}
						if got := c.Next(p, ch.loc); !got.Equal(all[i]) {
							t.Fatalf("Next(%s) = %s, want %s", show(p, ch.loc), show(got, ch.loc), show(all[i], ch.loc))
						}
						if i == 0 {
							continue
						}
						got, ok := c.Prev(p, ch.loc)
						if !ok || !got.Equal(all[i-1]) {
							t.Fatalf("Prev(%s) = %s, %v; want %s", show(p, ch.loc), show(got, ch.loc), ok, show(all[i-1], ch.loc))
						}
					}
				}
			})
		}
	}
}

func TestCronPrev(t *testing.T) {
	cases := []struct {
		name, cron string
		loc        *time.Location
		at         string
		want       string // "" for none
	}{
		{"at a tick is that tick", "30 2 * * *", newYork, "2026-03-09 02:30", "2026-03-09 02:30 -0400"},
		{"gap tick", "30 2 * * *", newYork, "2026-03-08 12:00", "2026-03-08 03:00 -0400"},
		{"second pass", "0 * * * *", newYork, "2026-11-01 01:30 -0500", "2026-11-01 01:00 -0500"},
		{"first pass", "0 * * * *", newYork, "2026-11-01 01:30 -0400", "2026-11-01 01:00 -0400"},
		{"daily in the second pass", "30 1 * * *", newYork, "2026-11-01 01:45 -0500", "2026-11-01 01:30 -0400"},
		{"yearly", "@yearly", time.UTC, "2026-12-31 23:59", "2026-01-01 00:00 +0000"},
		{"leap day within a year", "0 0 29 2 *", time.UTC, "2028-12-31 00:00", "2028-02-29 00:00 +0000"},
		{"leap day beyond the bound", "0 0 29 2 *", time.UTC, "2027-06-01 00:00", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := mustCron(t, c.cron).Prev(at(t, c.loc, c.at), c.loc)
			if c.want == "" {
				if ok {
					t.Fatalf("Prev = %s, want none", show(got, c.loc))
				}
				return
			}
			if s := show(got, c.loc); !ok || s != c.want {
				t.Fatalf("Prev = %s, %v; want %s", s, ok, c.want)
			}
		})
	}
}

// A dense schedule that last fired months ago is found without walking
// every tick in between.
func TestCronPrevDenseButDistant(t *testing.T) {
	c := mustCron(t, "* * * 1 *")
	got, ok := c.Prev(at(t, newYork, "2026-12-31 12:00"), newYork)
	if s := show(got, newYork); !ok || s != "2026-01-31 23:59 -0500" {
		t.Fatalf("Prev = %s, %v", s, ok)
	}
}

func BenchmarkCronNextPrev(b *testing.B) {
	crons := []Cron{mustCron(b, "30 2 * * *"), mustCron(b, "*/5 * * * *"), mustCron(b, "0 6 * * mon-fri")}
	for _, bc := range []struct {
		name string
		now  time.Time
	}{
		{"ordinary", time.Date(2026, time.June, 10, 15, 7, 0, 0, time.UTC)},
		{"inside the repeated hour", time.Date(2026, time.November, 1, 5, 30, 0, 0, time.UTC)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				for _, c := range crons {
					_ = c.Next(bc.now, newYork)
					_, _ = c.Prev(bc.now, newYork)
				}
			}
		})
	}
}

// BenchmarkCronNext is Next alone, as the watchdog's missed-schedules
// check calls it for every cron pipeline in a pass: daily, hourly and
// every-15-minutes crons, late in the day (the readings before the
// reference are many) and next to a fall-back change.
func BenchmarkCronNext(b *testing.B) {
	crons := []Cron{mustCron(b, "0 6 * * *"), mustCron(b, "5 * * * *"), mustCron(b, "*/15 * * * *")}
	for _, bc := range []struct {
		name string
		now  time.Time
	}{
		{"late in the day", time.Date(2026, time.June, 10, 22, 50, 0, 0, newYork)},
		{"inside the repeated hour", time.Date(2026, time.November, 1, 5, 30, 0, 0, time.UTC)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				for _, c := range crons {
					_ = c.Next(bc.now, newYork)
				}
			}
		})
	}
}

// BenchmarkClockTimeOn is a period's start and a clock time on a date,
// as the checks resolve them for every pipeline in a pass.
func BenchmarkClockTimeOn(b *testing.B) {
	d := Date{Year: 2026, Month: time.June, Day: 10}
	for b.Loop() {
		_ = ClockTime{Hour: 9}.On(d, newYork)
		_ = Daily(d).Start(newYork)
		_ = HourlyPeriod(d, 7).End(time.UTC)
	}
}
