package board

import (
	"slices"

	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/sla"
)

const boardRelative = `
pipeline: {id: p1}
schedule:
  trigger: {key: ready, check: exists}
sla: {maxDuration: 2h}
job: {type: glue, config: {jobName: j}}
`

func boardRun(st run.State, endedAt time.Time) *run.Run {
	return &run.Run{Key: run.Key{PipelineID: "p1", ScheduleID: "stream", Period: runtest.Day.String()}, State: st, EndedAt: endedAt, Generation: 2}
}

func callInFlight(r *run.Run) *run.Run {
	r.TriggerInFlight = true
	return r
}

func TestBoardStateOf(t *testing.T) {
	p := runtest.Pipeline(t, runtest.DailySLA)
	dry := runtest.Pipeline(t, runtest.DailySLA+"dryRun: true\n")
	rel := runtest.Pipeline(t, boardRelative)
	saturday := runtest.Day
	saturday.Date = saturday.Date.AddDays(4)
	loadedEarly := runtest.HM(0, 0)
	cases := []struct {
		name string
		p    int // 0 p, 1 dry, 2 rel
		per  bool
		f    Facts
		now  time.Time
		want State
	}{
		{name: "no run before the warning: waiting", f: Facts{FirstLoaded: loadedEarly}, now: runtest.HM(8, 0), want: Waiting},
		{name: "no run after the warning: at risk", f: Facts{FirstLoaded: loadedEarly}, now: runtest.HM(9, 0), want: AtRisk},
		{name: "no run at the breach: breached", f: Facts{FirstLoaded: loadedEarly}, now: runtest.HM(10, 0), want: Breached},
		{name: "loaded after the breach time: no SLA state", f: Facts{FirstLoaded: runtest.HM(10, 30)}, now: runtest.HM(11, 0), want: Waiting},
		{name: "loaded after the warning time: no warning", f: Facts{FirstLoaded: runtest.HM(9, 30)}, now: runtest.HM(9, 45), want: Waiting},
		{name: "evaluating", f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.Evaluating, time.Time{})}, now: runtest.HM(8, 0), want: Evaluating},
		{name: "triggering", f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.Triggering, time.Time{})}, now: runtest.HM(8, 0), want: Triggering},
		{name: "running", f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.Running, time.Time{})}, now: runtest.HM(8, 0), want: Running},
		{name: "a trigger call in flight runs the job (a synchronous command)", f: Facts{FirstLoaded: loadedEarly, Run: callInFlight(boardRun(run.Triggering, time.Time{}))}, now: runtest.HM(8, 0), want: Running},
		{name: "a call in flight past the warning: at risk", f: Facts{FirstLoaded: loadedEarly, Run: callInFlight(boardRun(run.Triggering, time.Time{}))}, now: runtest.HM(9, 30), want: AtRisk},
		{name: "running past the warning: at risk", f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.Running, time.Time{})}, now: runtest.HM(9, 30), want: AtRisk},
		{name: "succeeded", f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.Completed, runtest.HM(7, 0))}, now: runtest.HM(8, 0), want: Succeeded},
		{name: "succeeded late is succeeded (the grid shows the verdict)", f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.Completed, runtest.HM(10, 30))}, now: runtest.HM(11, 0), want: Succeeded},
		{name: "failed before the warning", f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.FailedFinal, runtest.HM(7, 0))}, now: runtest.HM(8, 0), want: Failed},
		{name: "failed beats at risk", f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.FailedFinal, runtest.HM(7, 0))}, now: runtest.HM(9, 30), want: Failed},
		{name: "breached beats failed", f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.FailedFinal, runtest.HM(7, 0))}, now: runtest.HM(10, 30), want: Breached},
		{name: "breach reported (marker) even if loaded after", f: Facts{FirstLoaded: runtest.HM(10, 30), Marks: sla.Marks{Breach: true}}, now: runtest.HM(11, 0), want: Breached},
		{name: "paused, nothing wrong", f: Facts{Paused: true, FirstLoaded: loadedEarly}, now: runtest.HM(8, 0), want: Paused},
		{name: "paused and succeeded: paused", f: Facts{Paused: true, FirstLoaded: loadedEarly, Run: boardRun(run.Completed, runtest.HM(7, 0))}, now: runtest.HM(8, 0), want: Paused},
		{name: "paused and breached: breached", f: Facts{Paused: true, FirstLoaded: loadedEarly}, now: runtest.HM(10, 30), want: Breached},
		{name: "paused and failed: failed", f: Facts{Paused: true, FirstLoaded: loadedEarly, Run: boardRun(run.FailedFinal, runtest.HM(7, 0))}, now: runtest.HM(8, 0), want: Failed},
		{name: "dry-run whatever the time", p: 1, f: Facts{FirstLoaded: loadedEarly}, now: runtest.HM(11, 0), want: DryRun},
		{name: "excluded day without a run", per: true, f: Facts{FirstLoaded: loadedEarly}, now: runtest.HM(11, 0).AddDate(0, 0, 4), want: Excluded},
		{name: "excluded day with a run shows the run", per: true, f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.Running, time.Time{})}, now: runtest.HM(8, 0).AddDate(0, 0, 4), want: Running},
		{name: "relative SLA without arrival: waiting", p: 2, f: Facts{FirstLoaded: loadedEarly}, now: runtest.HM(11, 0), want: Waiting},
		{name: "relative SLA 2h after arrival: breached", p: 2, f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.Running, time.Time{}), Marks: sla.Marks{FirstArrival: runtest.HM(8, 0)}}, now: runtest.HM(10, 0), want: Breached},
		{name: "relative SLA at 75%: at risk", p: 2, f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.Running, time.Time{}), Marks: sla.Marks{FirstArrival: runtest.HM(8, 0)}}, now: runtest.HM(9, 31), want: AtRisk},
		{name: "relative SLA early: running", p: 2, f: Facts{FirstLoaded: loadedEarly, Run: boardRun(run.Running, time.Time{}), Marks: sla.Marks{FirstArrival: runtest.HM(8, 0)}}, now: runtest.HM(9, 0), want: Running},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pp := []*pipeline.Pipeline{p, dry, rel}[c.p]
			per := runtest.Day
			if c.per {
				per = saturday
			}
			got := StateOf(pp, per, c.f, c.now)
			if got != c.want {
				t.Fatalf("StateOf = %s, want %s", got, c.want)
			}
		})
	}
}

func TestBoardUrgency(t *testing.T) {
	// The order is the decision: what needs someone first, then what is
	// under way, then what is quiet.
	want := []State{Breached, Failed, AtRisk, Triggering, Evaluating, Running,
		Waiting, Paused, Succeeded, DryRun, Excluded}
	if !slices.Equal(States(), want) {
		t.Fatalf("States = %v, want %v", States(), want)
	}
	for i := 1; i < len(want); i++ {
		if Urgency(want[i-1]) >= Urgency(want[i]) {
			t.Fatalf("%s should come before %s", want[i-1], want[i])
		}
	}
	if Urgency("nonsense") <= Urgency(Excluded) {
		t.Fatal("an unknown state should come last")
	}
}

func TestNextDeadline(t *testing.T) {
	p := runtest.Pipeline(t, runtest.DailySLA)
	cron := runtest.Pipeline(t, `
pipeline: {id: c1}
schedule: {cron: "0 6 * * *", timezone: America/New_York}
validation: {rules: [{key: landed, check: exists}]}
job: {type: glue, config: {jobName: j}}
`)
	deadlined := runtest.Pipeline(t, `
pipeline: {id: d1}
schedule:
  trigger: {key: ready, check: exists, deadline: "09:30"}
job: {type: glue, config: {jobName: j}}
`)
	cronSLA := runtest.Pipeline(t, `
pipeline: {id: cs}
schedule: {cron: "0 9 * * *"}
sla: {deadline: "10:00", expectedDuration: 30m}
job: {type: glue, config: {jobName: j}}
`)
	early := runtest.HM(0, 0)
	cases := []struct {
		name   string
		p      *pipeline.Pipeline
		f      Facts
		now    time.Time
		want   time.Time
		what   string
		wantOK bool
	}{
		{name: "the warning first", p: p, f: Facts{FirstLoaded: early}, now: runtest.HM(8, 0), want: runtest.HM(9, 0), what: "SLA warning", wantOK: true},
		{name: "then the breach", p: p, f: Facts{FirstLoaded: early}, now: runtest.HM(9, 0), want: runtest.HM(10, 0), what: "SLA breach", wantOK: true},
		{name: "nothing ahead without cron", p: p, f: Facts{FirstLoaded: early}, now: runtest.HM(10, 0), wantOK: false},
		{name: "succeeded: nothing (no cron)", p: p, f: Facts{FirstLoaded: early, Run: boardRun(run.Completed, runtest.HM(7, 0))}, now: runtest.HM(8, 0), wantOK: false},
		{name: "the evaluation window when sooner", p: p, f: Facts{FirstLoaded: early, Run: &run.Run{State: run.Evaluating, EvalDeadline: runtest.HM(8, 30)}}, now: runtest.HM(8, 0), want: runtest.HM(8, 30), what: "evaluation window", wantOK: true},
		{name: "the poll window when sooner", p: p, f: Facts{FirstLoaded: early, Run: &run.Run{State: run.Running, PollDeadline: runtest.HM(8, 20)}}, now: runtest.HM(8, 0), want: runtest.HM(8, 20), what: "poll window", wantOK: true},
		{name: "loaded after the warning: the breach", p: p, f: Facts{FirstLoaded: runtest.HM(9, 30)}, now: runtest.HM(8, 0), want: runtest.HM(10, 0), what: "SLA breach", wantOK: true},
		{name: "cron: the next tick", p: cron, f: Facts{FirstLoaded: early}, now: runtest.HM(8, 0), want: runtest.HM(10, 0), what: "next tick", wantOK: true},
		{name: "an open period counts down to its SLA before the next tick", p: cronSLA, f: Facts{FirstLoaded: early}, now: runtest.HM(8, 0), want: runtest.HM(9, 30), what: "SLA warning", wantOK: true},
		{name: "a succeeded period counts down to the next tick", p: cronSLA, f: Facts{FirstLoaded: early, Run: boardRun(run.Completed, runtest.HM(7, 0))}, now: runtest.HM(8, 0), want: runtest.HM(9, 0), what: "next tick", wantOK: true},
		{name: "trigger deadline without a run", p: deadlined, f: Facts{FirstLoaded: early}, now: runtest.HM(8, 0), want: runtest.HM(9, 30), what: "trigger deadline", wantOK: true},
		{name: "no trigger deadline once a run exists", p: deadlined, f: Facts{FirstLoaded: early, Run: &run.Run{State: run.Triggering}}, now: runtest.HM(8, 0), wantOK: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, ok := NextDeadline(c.p, runtest.Day, c.f, c.now)
			if ok != c.wantOK {
				t.Fatalf("ok = %v (%v), want %v", ok, d, c.wantOK)
			}
			if ok && (!d.At.Equal(c.want) || d.What != c.what) {
				t.Fatalf("NextDeadline = %s %s, want %s %s", d.At.UTC().Format(time.RFC3339), d.What, c.want.Format(time.RFC3339), c.what)
			}
		})
	}
}

func TestBoardCellOf(t *testing.T) {
	p := runtest.Pipeline(t, runtest.DailySLA)
	dry := runtest.Pipeline(t, runtest.DailySLA+"dryRun: true\n")
	early := runtest.HM(0, 0)
	saturday := runtest.Day
	saturday.Date = saturday.Date.AddDays(4)
	cases := []struct {
		name string
		p    *pipeline.Pipeline
		per  bool
		f    Facts
		now  time.Time
		want Cell
	}{
		{name: "met", p: p, f: Facts{FirstLoaded: early, Run: boardRun(run.Completed, runtest.HM(9, 59))}, now: runtest.HM(12, 0), want: Cell{State: Succeeded, SLA: SLAMet, Reruns: 2}},
		{name: "succeeded at the breach: breached", p: p, f: Facts{FirstLoaded: early, Run: boardRun(run.Completed, runtest.HM(10, 0))}, now: runtest.HM(12, 0), want: Cell{State: Succeeded, SLA: SLABreached, Reruns: 2}},
		{name: "failed past the breach: failed, breached", p: p, f: Facts{FirstLoaded: early, Run: boardRun(run.FailedFinal, runtest.HM(8, 0))}, now: runtest.HM(12, 0), want: Cell{State: Failed, SLA: SLABreached, Reruns: 2}},
		{name: "running before the breach: pending", p: p, f: Facts{FirstLoaded: early, Run: boardRun(run.Running, time.Time{})}, now: runtest.HM(9, 0), want: Cell{State: Running, SLA: SLAPending, Reruns: 2}},
		{name: "a call in flight: running, pending", p: p, f: Facts{FirstLoaded: early, Run: callInFlight(boardRun(run.Triggering, time.Time{}))}, now: runtest.HM(9, 0), want: Cell{State: Running, SLA: SLAPending, Reruns: 2}},
		{name: "no run past the breach: waiting, breached", p: p, f: Facts{FirstLoaded: early}, now: runtest.HM(12, 0), want: Cell{State: Waiting, SLA: SLABreached}},
		{name: "loaded after: no verdict", p: p, f: Facts{FirstLoaded: runtest.HM(11, 0)}, now: runtest.HM(12, 0), want: Cell{State: Waiting}},
		{name: "excluded: no SLA", p: p, per: true, f: Facts{FirstLoaded: early}, now: runtest.HM(12, 0).AddDate(0, 0, 4), want: Cell{State: Excluded}},
		{name: "dry-run: no SLA", p: dry, f: Facts{FirstLoaded: early}, now: runtest.HM(12, 0), want: Cell{State: DryRun}},
		{name: "a pause is not the cell's", p: p, f: Facts{Paused: true, FirstLoaded: early, Run: boardRun(run.Completed, runtest.HM(9, 0))}, now: runtest.HM(12, 0), want: Cell{State: Succeeded, SLA: SLAMet, Reruns: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			per := runtest.Day
			if c.per {
				per = saturday
			}
			if got := CellOf(c.p, per, c.f, c.now); got != c.want {
				t.Fatalf("CellOf = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestGridPeriods(t *testing.T) {
	daily := runtest.Pipeline(t, runtest.DailySLA)
	hourly := runtest.Pipeline(t, `
pipeline: {id: h1}
schedule: {cron: "5 * * * *", timezone: Europe/Paris}
validation: {rules: [{key: landed, check: exists}]}
job: {type: glue, config: {jobName: j}}
`)
	got := GridPeriods(daily, runtest.HM(8, 0), 30)
	if len(got) != 30 || got[29].String() != "2026-03-10" || got[0].String() != "2026-02-09" {
		t.Fatalf("daily grid = %v … %v (%d)", got[0], got[len(got)-1], len(got))
	}
	got = GridPeriods(hourly, runtest.HM(8, 0), 3)
	if len(got) != 3 || got[0].String() != "2026-03-10T07" || got[2].String() != "2026-03-10T09" {
		t.Fatalf("hourly grid in Paris = %v", got)
	}
	if GridPeriods(daily, runtest.HM(8, 0), 0) != nil {
		t.Fatal("no periods asked, some given")
	}
}

func TestCompareBoard(t *testing.T) {
	at := func(h int) time.Time { return runtest.HM(h, 0) }
	// Each rank comes before the next.
	order := []Rank{
		{State: Breached, ID: "z"},
		{State: Failed, Deadline: at(9), ID: "b"},
		{State: Failed, Deadline: at(10), ID: "a"},
		{State: Failed, ID: "a"},
		{State: Failed, ID: "b"},
		{State: AtRisk, Deadline: at(1), ID: "a"},
		{State: Waiting, Deadline: at(8), ID: "m"},
		{State: Waiting, Deadline: at(8), ID: "n"},
		{State: Excluded, ID: "a"},
	}
	for i := 1; i < len(order); i++ {
		if Compare(order[i-1], order[i]) >= 0 || Compare(order[i], order[i-1]) <= 0 {
			t.Fatalf("%+v should come before %+v", order[i-1], order[i])
		}
	}
	if Compare(order[0], order[0]) != 0 {
		t.Fatal("a rank equals itself")
	}
}
