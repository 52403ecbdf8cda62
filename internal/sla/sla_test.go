package sla

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/schedule"
)

// armed renders TimersToArm's answer as "PERIOD w=HH:MM b=HH:MM" (UTC;
// "-" for an instant not armed), latest period first.
func armed(arms []Arm) string {
	var out []string
	for _, a := range arms {
		w, b := "-", "-"
		if a.Warning {
			w = a.Times.Warning.UTC().Format("01-02T15:04")
		}
		if a.Breach {
			b = a.Times.Breach.UTC().Format("01-02T15:04")
		}
		out = append(out, fmt.Sprintf("%s w=%s b=%s", a.Period, w, b))
	}
	return strings.Join(out, "; ")
}

func TestSLATimersToArm(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	const trigger = `
pipeline: {id: p1}
schedule:
  trigger: {key: ready, check: exists}
`
	const job = "job: {type: glue, config: {jobName: j}}\n"
	plusOne := trigger + `sla: {deadline: "+1d 06:00", expectedDuration: 1h}` + "\n" + job
	cases := []struct {
		name     string
		doc      string
		loadedAt string
		now      string // "" = loadedAt
		want     string
	}{
		{"+1d at midnight: yesterday's warning and breach are ahead", plusOne, "2026-03-11T00:00:00Z", "",
			"2026-03-11 w=03-12T05:00 b=03-12T06:00; 2026-03-10 w=03-11T05:00 b=03-11T06:00"},
		{"+1d after yesterday's warning time: its breach only", plusOne, "2026-03-11T05:30:00Z", "",
			"2026-03-11 w=03-12T05:00 b=03-12T06:00; 2026-03-10 w=- b=03-11T06:00"},
		{"+1d at yesterday's breach instant: the breach is still armed", plusOne, "2026-03-11T06:00:00Z", "",
			"2026-03-11 w=03-12T05:00 b=03-12T06:00; 2026-03-10 w=- b=03-11T06:00"},
		{"+1d after yesterday's breach: today only", plusOne, "2026-03-11T07:00:00Z", "",
			"2026-03-11 w=03-12T05:00 b=03-12T06:00"},
		{"+2d reaches back two days", trigger + `sla: {deadline: "+2d 06:00", expectedDuration: 1h}` + "\n" + job, "2026-03-12T00:00:00Z", "",
			"2026-03-12 w=03-14T05:00 b=03-14T06:00; 2026-03-11 w=03-13T05:00 b=03-13T06:00; 2026-03-10 w=03-12T05:00 b=03-12T06:00"},
		{"+1d in New York: the SLA zone's date", trigger + "  timezone: America/New_York\n" + `sla: {deadline: "+1d 02:00", expectedDuration: 1h}` + "\n" + job,
			"2026-03-11T04:00:00Z", "", // 00:00 EDT on the 11th
			"2026-03-11 w=03-12T05:00 b=03-12T06:00; 2026-03-10 w=03-11T05:00 b=03-11T06:00"},
		{"+1d: an excluded yesterday gets nothing", strings.Replace(plusOne, "check: exists}\n", "check: exists}\n  exclude: {dates: [\"2026-03-10\"]}\n", 1), "2026-03-11T00:00:00Z", "",
			"2026-03-11 w=03-12T05:00 b=03-12T06:00"},
		{"+1d: a weekend yesterday gets nothing", strings.Replace(plusOne, "check: exists}\n", "check: exists}\n  exclude: {weekends: true}\n", 1), "2026-03-16T00:00:00Z", "",
			"2026-03-16 w=03-17T05:00 b=03-17T06:00"},
		{":MM at 10:15: the previous hour's deadline is ahead", trigger + `sla: {deadline: ":30", expectedDuration: 10m}` + "\n" + job, "2026-03-10T10:15:00Z", "",
			"2026-03-10T10 w=03-10T11:20 b=03-10T11:30; 2026-03-10T09 w=03-10T10:20 b=03-10T10:30"},
		{":MM at 10:25: the previous hour's breach only", trigger + `sla: {deadline: ":30", expectedDuration: 10m}` + "\n" + job, "2026-03-10T10:25:00Z", "",
			"2026-03-10T10 w=03-10T11:20 b=03-10T11:30; 2026-03-10T09 w=- b=03-10T10:30"},
		{":MM at 10:45: the current hour only", trigger + `sla: {deadline: ":30", expectedDuration: 10m}` + "\n" + job, "2026-03-10T10:45:00Z", "",
			"2026-03-10T10 w=03-10T11:20 b=03-10T11:30"},
		{"HH:MM after the deadline: nothing (forward-only)", trigger + `sla: {deadline: "10:00", expectedDuration: 30m}` + "\n" + job, "2026-03-10T12:00:00Z", "",
			""},
		{"HH:MM after the warning time: the breach only", trigger + `sla: {deadline: "10:00", expectedDuration: 30m}` + "\n" + job, "2026-03-10T09:45:00Z", "",
			"2026-03-10 w=- b=03-10T10:00"},
		{"HH:MM without expectedDuration: no warning", trigger + `sla: {deadline: "10:00"}` + "\n" + job, "2026-03-10T08:00:00Z", "",
			"2026-03-10 w=- b=03-10T10:00"},
		{"HH:MM on hourly periods: the earlier hours of the day", "pipeline: {id: p1}\nschedule: {cron: \"0 7-9 * * *\"}\n" + `sla: {deadline: "18:00"}` + "\n" + job, "2026-03-10T09:20:00Z", "",
			"2026-03-10T09 w=- b=03-10T18:00; 2026-03-10T08 w=- b=03-10T18:00; 2026-03-10T07 w=- b=03-10T18:00"},
		{"a reload: an earlier period's instant between the load and now is not armed again", plusOne, "2026-03-01T00:00:00Z", "2026-03-11T05:30:00Z",
			"2026-03-11 w=03-12T05:00 b=03-12T06:00; 2026-03-10 w=- b=03-11T06:00"},
		{"a reload after the current deadline: its breach is armed (the store says whether it was reported)", trigger + `sla: {deadline: "10:00", expectedDuration: 30m}` + "\n" + job, "2026-03-01T00:00:00Z", "2026-03-10T12:00:00Z",
			"2026-03-10 w=- b=03-10T10:00"},
		{"dry-run: nothing", strings.Replace(plusOne, "pipeline: {id: p1}\n", "pipeline: {id: p1}\ndryRun: true\n", 1), "2026-03-11T00:00:00Z", "",
			""},
		{"relative SLA only: nothing at load", trigger + `sla: {maxDuration: 2h}` + "\n" + job, "2026-03-11T00:00:00Z", "",
			""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := runtest.Pipeline(t, c.doc)
			loaded := at(c.loadedAt)
			now := loaded
			if c.now != "" {
				now = at(c.now)
			}
			if got := armed(TimersToArm(p, loaded, now)); got != c.want {
				t.Fatalf("armed\n  %s\nwant\n  %s", got, c.want)
			}
		})
	}
}

func TestSLABeforeLoad(t *testing.T) {
	tm := Times{Warning: runtest.T0.Add(-30 * time.Minute), Breach: runtest.T0}
	cases := []struct {
		name            string
		times           Times
		loadedAt        time.Time
		warning, breach bool
	}{
		{"loaded before both", tm, runtest.T0.Add(-time.Hour), false, false},
		{"loaded at the warning time", tm, runtest.T0.Add(-30 * time.Minute), false, false},
		{"loaded between", tm, runtest.T0.Add(-10 * time.Minute), true, false},
		{"loaded at the breach time", tm, runtest.T0, true, false},
		{"loaded after both", tm, runtest.T0.Add(time.Minute), true, true},
		{"no warning configured", Times{Breach: runtest.T0}, runtest.T0.Add(time.Minute), false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, b := BeforeLoad(c.times, c.loadedAt)
			if w != c.warning || b != c.breach {
				t.Fatalf("BeforeLoad = %v, %v; want %v, %v", w, b, c.warning, c.breach)
			}
		})
	}
}

// TestCouldStartAfter: a trigger sensor can start any period; a cron-only
// pipeline only the periods whose tick comes after the first load (a tick
// at the load instant itself was never fired).
func TestCouldStartAfter(t *testing.T) {
	cron := runtest.Pipeline(t, "pipeline: {id: c}\nschedule: {cron: \"0 * * * *\"}\njob: {type: glue, config: {jobName: c}}\n")
	both := runtest.Pipeline(t, "pipeline: {id: b}\nschedule: {cron: \"0 * * * *\", trigger: {key: k, check: exists}}\njob: {type: glue, config: {jobName: b}}\n")
	hour := func(h int) schedule.Period {
		return schedule.HourlyPeriod(schedule.DateOf(time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), time.UTC), h)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 3, 10, h, m, 0, 0, time.UTC) }
	for _, c := range []struct {
		name   string
		p      *pipeline.Pipeline
		per    schedule.Period
		loaded time.Time
		want   bool
	}{
		{"tick before the load", cron, hour(22), at(23, 5), false},
		{"tick of the current hour before the load", cron, hour(23), at(23, 5), false},
		{"tick at the load instant", cron, hour(23), at(23, 0), false},
		{"tick after the load", cron, hour(23), at(22, 59), true},
		{"a trigger can start it", both, hour(22), at(23, 5), true},
	} {
		if got := CouldStartAfter(c.p, c.per, c.loaded); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestResolveSLA(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	p := runtest.Pipeline(t, runtest.Base+`sla: {deadline: "10:00", expectedDuration: 30m, timezone: America/New_York}`)
	per := schedule.Daily(schedule.Date{Year: 2026, Month: 3, Day: 10})
	tm, ok, err := Resolve(p, per, time.Time{})
	if err != nil || !ok {
		t.Fatalf("Resolve: %v %v", ok, err)
	}
	if want := time.Date(2026, 3, 10, 10, 0, 0, 0, ny); !tm.Breach.Equal(want) || !tm.Warning.Equal(want.Add(-30*time.Minute)) || tm.Relative {
		t.Fatalf("absolute: %+v", tm)
	}
	rel := runtest.Pipeline(t, runtest.Base+`sla: {maxDuration: 2h}`)
	if _, ok, _ := Resolve(rel, per, time.Time{}); ok {
		t.Fatal("relative SLA resolved without a first arrival")
	}
	tm, ok, _ = Resolve(rel, per, runtest.T0)
	if !ok || !tm.Relative || !tm.Breach.Equal(runtest.T0.Add(2*time.Hour)) || !tm.Warning.Equal(runtest.T0.Add(90*time.Minute)) {
		t.Fatalf("relative: %+v", tm)
	}
	none := runtest.Pipeline(t, runtest.Base)
	if _, ok, _ := Resolve(none, per, runtest.T0); ok {
		t.Fatal("no SLA resolved")
	}
}

func TestSLAVerdictAndAlerts(t *testing.T) {
	tm := Times{Breach: runtest.T0}
	if v, ok := Verdict(tm, false, runtest.T0.Add(-time.Second)); !ok || v != event.SLAMet {
		t.Fatalf("before breach: %v %v", v, ok)
	}
	if v, ok := Verdict(tm, false, runtest.T0); !ok || v != event.SLABreach {
		t.Fatalf("at breach: %v %v", v, ok)
	}
	if _, ok := Verdict(tm, true, runtest.T0); ok {
		t.Fatal("verdict after a reported breach")
	}
	running := &run.Run{State: run.Running}
	done := &run.Run{State: run.Completed}
	failed := &run.Run{State: run.FailedFinal}
	cases := []struct {
		name     string
		kind     event.Type
		run      *run.Run
		sent     bool
		breached bool
		at       time.Time
		want     bool
	}{
		{"warning, no run yet", event.SLAWarning, nil, false, false, runtest.T0.Add(-time.Minute), true},
		{"warning while running", event.SLAWarning, running, false, false, runtest.T0.Add(-time.Minute), true},
		{"warning at breach time", event.SLAWarning, running, false, false, runtest.T0, false},
		{"warning after breach reported", event.SLAWarning, nil, false, true, runtest.T0.Add(-time.Minute), false},
		{"breach, no run", event.SLABreach, nil, false, false, runtest.T0, true},
		{"breach, completed period", event.SLABreach, done, false, false, runtest.T0, false},
		{"breach, failed period", event.SLABreach, failed, false, false, runtest.T0, false},
		{"already sent", event.SLABreach, nil, true, false, runtest.T0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := AlertDue(c.kind, c.run, runtest.T0, c.sent, c.breached, c.at); got != c.want {
				t.Fatalf("AlertDue = %v, want %v", got, c.want)
			}
		})
	}
}

func TestProjectSLA(t *testing.T) {
	per := schedule.Daily(schedule.Date{Year: 2026, Month: 3, Day: 10})
	p := runtest.Pipeline(t, runtest.Base+`sla: {deadline: "09:00", expectedDuration: 30m}`)
	cases := []struct {
		at     time.Time
		status string
		margin time.Duration
	}{
		{runtest.T0, "met", 30 * time.Minute},        // 08:00 + 30m = 08:30, before 09:00
		{runtest.T0.Add(30 * time.Minute), "met", 0}, // finishes exactly at the deadline
		{runtest.T0.Add(40 * time.Minute), "breach", -10 * time.Minute},
	}
	for _, c := range cases {
		pr, ok, err := Project(p, per, c.at)
		if err != nil || !ok || pr.Status != c.status || pr.Margin != c.margin {
			t.Errorf("at %v: %+v %v %v", c.at, pr, ok, err)
		}
	}
	if _, ok, _ := Project(runtest.Pipeline(t, runtest.Base+`sla: {deadline: "09:00"}`), per, runtest.T0); ok {
		t.Error("projected without expectedDuration")
	}
}
