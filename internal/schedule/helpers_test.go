package schedule

import (
	"testing"
	"time"
	_ "time/tzdata" // the DST tests must not depend on the host's zoneinfo
)

var (
	newYork = mustZone("America/New_York")
	london  = mustZone("Europe/London")
	// Santiago skips and repeats around midnight, not 02:00.
	santiago = mustZone("America/Santiago")
)

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// at reads a wall time in loc ("2026-03-08 03:00") with an explicit offset
// when the reading is ambiguous ("2026-11-01 01:30 -0400").
func at(t *testing.T, loc *time.Location, s string) time.Time {
	t.Helper()
	layout := "2006-01-02 15:04"
	if len(s) > len(layout) {
		layout += " -0700"
	}
	v, err := time.ParseInLocation(layout, s, loc)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return v
}

func mustDate(t testing.TB, s string) Date {
	t.Helper()
	d, err := ParseDate(s)
	if err != nil {
		t.Fatalf("ParseDate(%q): %v", s, err)
	}
	return d
}

func mustPeriod(t testing.TB, s string) Period {
	t.Helper()
	p, err := ParsePeriod(s)
	if err != nil {
		t.Fatalf("ParsePeriod(%q): %v", s, err)
	}
	return p
}

func mustCron(t testing.TB, s string) Cron {
	t.Helper()
	c, err := ParseCron(s)
	if err != nil {
		t.Fatalf("ParseCron(%q): %v", s, err)
	}
	return c
}

// show renders an instant on loc's clock with its offset, which is what
// tells the two passes of a repeated hour apart.
func show(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "zero"
	}
	return t.In(loc).Format("2006-01-02 15:04 -0700")
}
