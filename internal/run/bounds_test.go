package run

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// TestSensorWritePeriodBounds: a write may name a period from 1970-01-01
// to seven days after today, today being the date of now in the
// pipeline's time zone (not UTC's), whether the period comes from the key
// suffix or the date field; outside, the error names where it came from.
func TestSensorWritePeriodBounds(t *testing.T) {
	// Auckland is 13 hours ahead of UTC in March: at 2026-03-10T12:00Z it
	// is already the 11th there, so the 18th is within the bound there
	// and not in UTC.
	auckland := mustPipeline(t, `
pipeline: {id: nz}
schedule: {trigger: {key: ready, check: exists}, timezone: Pacific/Auckland}
job: {type: glue, config: {jobName: j}}
`)
	utc := mustPipeline(t, basePipeline)
	daily := mustPipeline(t, `
pipeline: {id: d}
schedule: {cron: "0 6 * * *", trigger: {key: ready, check: exists}}
job: {type: glue, config: {jobName: j}}
`)
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	date := func(d string) sensor.Object { return Detail("date", d) }
	for _, c := range []struct {
		name    string
		p       string
		key     string
		data    sensor.Object
		want    string // the period, when accepted
		wantErr string // what the refusal says, when refused
	}{
		{name: "today", key: "ready", data: date("2026-03-10"), want: "2026-03-10"},
		{name: "no date: the current period", key: "ready", want: "2026-03-10"},
		{name: "seven days ahead", key: "ready", data: date("2026-03-17"), want: "2026-03-17"},
		{name: "seven days ahead, last hour", key: "ready#20260317T23", want: "2026-03-17T23"},
		{name: "eight days ahead", key: "ready", data: date("2026-03-18"), wantErr: `field "date" names period 2026-03-18, more than 7 days ahead of today (2026-03-10 in UTC): the latest period a sensor may name now is 2026-03-17`},
		{name: "eight days ahead by suffix", key: "ready#20260318T00", wantErr: `key suffix #20260318T00 names period 2026-03-18T00, more than 7 days ahead`},
		{name: "year 2300", key: "ready", data: date("2300-01-01"), wantErr: `field "date" names period 2300-01-01`},
		{name: "year 9999 by suffix", key: "ready#99991231", wantErr: `key suffix #99991231 names period 9999-12-31`},
		{name: "a plain key (#eu) names no period", key: "ready#eu", want: "2026-03-10"},
		{name: "the epoch", key: "ready#19700101", want: "1970-01-01"},
		{name: "a backfill years back", key: "ready", data: date("2001-09-11"), want: "2001-09-11"},
		{name: "the day before the epoch", key: "ready#19691231", wantErr: `key suffix #19691231 names period 1969-12-31, before 1970-01-01`},
		{name: "year 1", key: "ready", data: date("0001-01-01"), wantErr: `field "date" names period 0001-01-01, before 1970-01-01`},
		{name: "in a zone ahead of UTC: its today", p: "nz", key: "ready", data: date("2026-03-18"), want: "2026-03-18"},
		{name: "in a zone ahead of UTC: one more day", p: "nz", key: "ready", data: date("2026-03-19"), wantErr: `more than 7 days ahead of today (2026-03-11 in Pacific/Auckland)`},
		{name: "a daily pipeline's day from an hour", p: "daily", key: "ready#20260317T09", want: "2026-03-17"},
		{name: "a bad suffix is refused, not today", key: "ready#20260230", wantErr: `#20260230 starts like a date but is not a period`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := utc
			switch c.p {
			case "nz":
				p = auckland
			case "daily":
				p = daily
			}
			got, err := SensorWritePeriod(p, c.key, c.data, now)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("SensorWritePeriod(%s, %v) = %v, %v; want an error mentioning %q", c.key, c.data, got, err, c.wantErr)
				}
				return
			}
			if err != nil || got.String() != c.want {
				t.Fatalf("SensorWritePeriod(%s, %v) = %v, %v; want %s", c.key, c.data, got, err, c.want)
			}
		})
	}
}

// TestStoredSensorsAreReadWithoutBounds: SensorPeriod, which reads stored
// records for the watchdog, resume and explain, applies no bound, so what
// was accepted once stays readable as time passes.
func TestStoredSensorsAreReadWithoutBounds(t *testing.T) {
	p := mustPipeline(t, basePipeline)
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	if per, err := SensorPeriod(p, "ready#20300101", sensor.Object{}, now); err != nil || per.String() != "2030-01-01" {
		t.Fatalf("SensorPeriod = %v, %v", per, err)
	}
}

func TestCheckPauseUntil(t *testing.T) {
	now := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		until   time.Time
		wantErr string
	}{
		{name: "the zero time is a time, not no end", until: time.Time{}, wantErr: "0001-01-01T00:00:00Z is not in the future"},
		{name: "in two hours", until: now.Add(2 * time.Hour)},
		{name: "a year ahead exactly", until: time.Date(2027, 3, 10, 8, 0, 0, 0, time.UTC)},
		{name: "a year and a second", until: time.Date(2027, 3, 10, 8, 0, 1, 0, time.UTC), wantErr: "2027-03-10T08:00:01Z is more than a year ahead (at most 2027-03-10T08:00:00Z)"},
		{name: "year 9999", until: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), wantErr: "more than a year ahead"},
		{name: "now", until: now, wantErr: "is not in the future"},
		{name: "the past", until: now.Add(-time.Hour), wantErr: "2026-03-10T07:00:00Z is not in the future"},
		{name: "in another zone", until: time.Date(2027, 3, 10, 9, 0, 0, 0, time.FixedZone("CET", 3600))},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckPauseUntil(c.until, now)
			if c.wantErr == "" && err != nil {
				t.Fatalf("CheckPauseUntil(%v): %v", c.until, err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("CheckPauseUntil(%v) = %v, want an error mentioning %q", c.until, err, c.wantErr)
			}
		})
	}
}

func TestRerunPeriodFloor(t *testing.T) {
	p := mustPipeline(t, basePipeline)
	// Its trigger sensors have named a day and an hour: it runs both.
	bothKinds := []sensor.Record{{Key: "ready", ReceivedAt: t0}, {Key: "ready#20260310T07", ReceivedAt: t0}}
	for _, c := range []struct {
		period string
		ok     bool
	}{
		{"1970-01-01", true},
		{"1970-01-01T00", true},
		{"1969-12-31T23", false},
		{"1600-01-01", false},
		{"0001-01-01", false},
	} {
		per, err := schedule.ParsePeriod(c.period)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckRerunPeriod(p, per, t0, bothKinds)
		if (err == nil) != c.ok {
			t.Errorf("CheckRerunPeriod(%s) = %v, want ok %v", c.period, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "before 1970-01-01") {
			t.Errorf("CheckRerunPeriod(%s) = %v, want it to name the earliest period", c.period, err)
		}
	}
}
