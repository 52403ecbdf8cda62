package run

import (
	"slices"

	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run/runtest"
)

const boardSLA = runtest.DailySLA

const boardRelative = `
pipeline: {id: p1}
schedule:
  trigger: {key: ready, check: exists}
sla: {maxDuration: 2h}
job: {type: glue, config: {jobName: j}}
`

func boardRun(st State, endedAt time.Time) *Run {
	return &Run{Key: Key{PipelineID: "p1", ScheduleID: "stream", Period: day.String()}, State: st, EndedAt: endedAt, Generation: 2}
}

func callInFlight(r *Run) *Run {
	r.TriggerInFlight = true
	return r
}

func TestBoardStateOf(t *testing.T) {
	p := mustPipeline(t, boardSLA)
	dry := mustPipeline(t, boardSLA+"dryRun: true\n")
	rel := mustPipeline(t, boardRelative)
	saturday := day
	saturday.Date = saturday.Date.AddDays(4)
	loadedEarly := hm(0, 0)
	cases := []struct {
		name string
		p    int // 0 p, 1 dry, 2 rel
		per  bool
		f    BoardFacts
		now  time.Time
		want BoardState
	}{
		{name: "no run before the warning: waiting", f: BoardFacts{FirstLoaded: loadedEarly}, now: hm(8, 0), want: BoardWaiting},
		{name: "no run after the warning: at risk", f: BoardFacts{FirstLoaded: loadedEarly}, now: hm(9, 0), want: BoardAtRisk},
		{name: "no run at the breach: breached", f: BoardFacts{FirstLoaded: loadedEarly}, now: hm(10, 0), want: BoardBreached},
		{name: "loaded after the breach time: no SLA state", f: BoardFacts{FirstLoaded: hm(10, 30)}, now: hm(11, 0), want: BoardWaiting},
		{name: "loaded after the warning time: no warning", f: BoardFacts{FirstLoaded: hm(9, 30)}, now: hm(9, 45), want: BoardWaiting},
		{name: "evaluating", f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(Evaluating, time.Time{})}, now: hm(8, 0), want: BoardEvaluating},
		{name: "triggering", f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(Triggering, time.Time{})}, now: hm(8, 0), want: BoardTriggering},
		{name: "running", f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(Running, time.Time{})}, now: hm(8, 0), want: BoardRunning},
		{name: "a trigger call in flight runs the job (a synchronous command)", f: BoardFacts{FirstLoaded: loadedEarly, Run: callInFlight(boardRun(Triggering, time.Time{}))}, now: hm(8, 0), want: BoardRunning},
		{name: "a call in flight past the warning: at risk", f: BoardFacts{FirstLoaded: loadedEarly, Run: callInFlight(boardRun(Triggering, time.Time{}))}, now: hm(9, 30), want: BoardAtRisk},
		{name: "running past the warning: at risk", f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(Running, time.Time{})}, now: hm(9, 30), want: BoardAtRisk},
		{name: "succeeded", f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(Completed, hm(7, 0))}, now: hm(8, 0), want: BoardSucceeded},
		{name: "succeeded late is succeeded (the grid shows the verdict)", f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(Completed, hm(10, 30))}, now: hm(11, 0), want: BoardSucceeded},
		{name: "failed before the warning", f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(FailedFinal, hm(7, 0))}, now: hm(8, 0), want: BoardFailed},
		{name: "failed beats at risk", f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(FailedFinal, hm(7, 0))}, now: hm(9, 30), want: BoardFailed},
		{name: "breached beats failed", f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(FailedFinal, hm(7, 0))}, now: hm(10, 30), want: BoardBreached},
		{name: "breach reported (marker) even if loaded after", f: BoardFacts{FirstLoaded: hm(10, 30), Marks: SLAMarks{Breach: true}}, now: hm(11, 0), want: BoardBreached},
		{name: "paused, nothing wrong", f: BoardFacts{Paused: true, FirstLoaded: loadedEarly}, now: hm(8, 0), want: BoardPaused},
		{name: "paused and succeeded: paused", f: BoardFacts{Paused: true, FirstLoaded: loadedEarly, Run: boardRun(Completed, hm(7, 0))}, now: hm(8, 0), want: BoardPaused},
		{name: "paused and breached: breached", f: BoardFacts{Paused: true, FirstLoaded: loadedEarly}, now: hm(10, 30), want: BoardBreached},
		{name: "paused and failed: failed", f: BoardFacts{Paused: true, FirstLoaded: loadedEarly, Run: boardRun(FailedFinal, hm(7, 0))}, now: hm(8, 0), want: BoardFailed},
		{name: "dry-run whatever the time", p: 1, f: BoardFacts{FirstLoaded: loadedEarly}, now: hm(11, 0), want: BoardDryRun},
		{name: "excluded day without a run", per: true, f: BoardFacts{FirstLoaded: loadedEarly}, now: hm(11, 0).AddDate(0, 0, 4), want: BoardExcluded},
		{name: "excluded day with a run shows the run", per: true, f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(Running, time.Time{})}, now: hm(8, 0).AddDate(0, 0, 4), want: BoardRunning},
		{name: "relative SLA without arrival: waiting", p: 2, f: BoardFacts{FirstLoaded: loadedEarly}, now: hm(11, 0), want: BoardWaiting},
		{name: "relative SLA 2h after arrival: breached", p: 2, f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(Running, time.Time{}), Marks: SLAMarks{FirstArrival: hm(8, 0)}}, now: hm(10, 0), want: BoardBreached},
		{name: "relative SLA at 75%: at risk", p: 2, f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(Running, time.Time{}), Marks: SLAMarks{FirstArrival: hm(8, 0)}}, now: hm(9, 31), want: BoardAtRisk},
		{name: "relative SLA early: running", p: 2, f: BoardFacts{FirstLoaded: loadedEarly, Run: boardRun(Running, time.Time{}), Marks: SLAMarks{FirstArrival: hm(8, 0)}}, now: hm(9, 0), want: BoardRunning},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pp := []*pipeline.Pipeline{p, dry, rel}[c.p]
			per := day
			if c.per {
				per = saturday
			}
			got := BoardStateOf(pp, per, c.f, c.now)
			if got != c.want {
				t.Fatalf("BoardStateOf = %s, want %s", got, c.want)
			}
		})
	}
}

func TestBoardUrgency(t *testing.T) {
	// The order is the decision: what needs someone first, then what is
	// under way, then what is quiet.
	want := []BoardState{BoardBreached, BoardFailed, BoardAtRisk, BoardTriggering, BoardEvaluating, BoardRunning,
		BoardWaiting, BoardPaused, BoardSucceeded, BoardDryRun, BoardExcluded}
	if !slices.Equal(BoardStates(), want) {
		t.Fatalf("BoardStates = %v, want %v", BoardStates(), want)
	}
	for i := 1; i < len(want); i++ {
		if BoardUrgency(want[i-1]) >= BoardUrgency(want[i]) {
			t.Fatalf("%s should come before %s", want[i-1], want[i])
		}
	}
	if BoardUrgency("nonsense") <= BoardUrgency(BoardExcluded) {
		t.Fatal("an unknown state should come last")
	}
}

func TestNextDeadline(t *testing.T) {
	p := mustPipeline(t, boardSLA)
	cron := mustPipeline(t, `
pipeline: {id: c1}
schedule: {cron: "0 6 * * *", timezone: America/New_York}
validation: {rules: [{key: landed, check: exists}]}
job: {type: glue, config: {jobName: j}}
`)
	deadlined := mustPipeline(t, `
pipeline: {id: d1}
schedule:
  trigger: {key: ready, check: exists, deadline: "09:30"}
job: {type: glue, config: {jobName: j}}
`)
	cronSLA := mustPipeline(t, `
pipeline: {id: cs}
schedule: {cron: "0 9 * * *"}
sla: {deadline: "10:00", expectedDuration: 30m}
job: {type: glue, config: {jobName: j}}
`)
	early := hm(0, 0)
	cases := []struct {
		name   string
		p      *pipeline.Pipeline
		f      BoardFacts
		now    time.Time
		want   time.Time
		what   string
		wantOK bool
	}{
		{name: "the warning first", p: p, f: BoardFacts{FirstLoaded: early}, now: hm(8, 0), want: hm(9, 0), what: "SLA warning", wantOK: true},
		{name: "then the breach", p: p, f: BoardFacts{FirstLoaded: early}, now: hm(9, 0), want: hm(10, 0), what: "SLA breach", wantOK: true},
		{name: "nothing ahead without cron", p: p, f: BoardFacts{FirstLoaded: early}, now: hm(10, 0), wantOK: false},
		{name: "succeeded: nothing (no cron)", p: p, f: BoardFacts{FirstLoaded: early, Run: boardRun(Completed, hm(7, 0))}, now: hm(8, 0), wantOK: false},
		{name: "the evaluation window when sooner", p: p, f: BoardFacts{FirstLoaded: early, Run: &Run{State: Evaluating, EvalDeadline: hm(8, 30)}}, now: hm(8, 0), want: hm(8, 30), what: "evaluation window", wantOK: true},
		{name: "the poll window when sooner", p: p, f: BoardFacts{FirstLoaded: early, Run: &Run{State: Running, PollDeadline: hm(8, 20)}}, now: hm(8, 0), want: hm(8, 20), what: "poll window", wantOK: true},
		{name: "loaded after the warning: the breach", p: p, f: BoardFacts{FirstLoaded: hm(9, 30)}, now: hm(8, 0), want: hm(10, 0), what: "SLA breach", wantOK: true},
		{name: "cron: the next tick", p: cron, f: BoardFacts{FirstLoaded: early}, now: hm(8, 0), want: hm(10, 0), what: "next tick", wantOK: true},
		{name: "an open period counts down to its SLA before the next tick", p: cronSLA, f: BoardFacts{FirstLoaded: early}, now: hm(8, 0), want: hm(9, 30), what: "SLA warning", wantOK: true},
		{name: "a succeeded period counts down to the next tick", p: cronSLA, f: BoardFacts{FirstLoaded: early, Run: boardRun(Completed, hm(7, 0))}, now: hm(8, 0), want: hm(9, 0), what: "next tick", wantOK: true},
		{name: "trigger deadline without a run", p: deadlined, f: BoardFacts{FirstLoaded: early}, now: hm(8, 0), want: hm(9, 30), what: "trigger deadline", wantOK: true},
		{name: "no trigger deadline once a run exists", p: deadlined, f: BoardFacts{FirstLoaded: early, Run: &Run{State: Triggering}}, now: hm(8, 0), wantOK: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, ok := NextDeadline(c.p, day, c.f, c.now)
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
	p := mustPipeline(t, boardSLA)
	dry := mustPipeline(t, boardSLA+"dryRun: true\n")
	early := hm(0, 0)
	saturday := day
	saturday.Date = saturday.Date.AddDays(4)
	cases := []struct {
		name string
		p    *pipeline.Pipeline
		per  bool
		f    BoardFacts
		now  time.Time
		want BoardCell
	}{
		{name: "met", p: p, f: BoardFacts{FirstLoaded: early, Run: boardRun(Completed, hm(9, 59))}, now: hm(12, 0), want: BoardCell{State: BoardSucceeded, SLA: SLAMet, Reruns: 2}},
		{name: "succeeded at the breach: breached", p: p, f: BoardFacts{FirstLoaded: early, Run: boardRun(Completed, hm(10, 0))}, now: hm(12, 0), want: BoardCell{State: BoardSucceeded, SLA: SLABreached, Reruns: 2}},
		{name: "failed past the breach: failed, breached", p: p, f: BoardFacts{FirstLoaded: early, Run: boardRun(FailedFinal, hm(8, 0))}, now: hm(12, 0), want: BoardCell{State: BoardFailed, SLA: SLABreached, Reruns: 2}},
		{name: "running before the breach: pending", p: p, f: BoardFacts{FirstLoaded: early, Run: boardRun(Running, time.Time{})}, now: hm(9, 0), want: BoardCell{State: BoardRunning, SLA: SLAPending, Reruns: 2}},
		{name: "a call in flight: running, pending", p: p, f: BoardFacts{FirstLoaded: early, Run: callInFlight(boardRun(Triggering, time.Time{}))}, now: hm(9, 0), want: BoardCell{State: BoardRunning, SLA: SLAPending, Reruns: 2}},
		{name: "no run past the breach: waiting, breached", p: p, f: BoardFacts{FirstLoaded: early}, now: hm(12, 0), want: BoardCell{State: BoardWaiting, SLA: SLABreached}},
		{name: "loaded after: no verdict", p: p, f: BoardFacts{FirstLoaded: hm(11, 0)}, now: hm(12, 0), want: BoardCell{State: BoardWaiting}},
		{name: "excluded: no SLA", p: p, per: true, f: BoardFacts{FirstLoaded: early}, now: hm(12, 0).AddDate(0, 0, 4), want: BoardCell{State: BoardExcluded}},
		{name: "dry-run: no SLA", p: dry, f: BoardFacts{FirstLoaded: early}, now: hm(12, 0), want: BoardCell{State: BoardDryRun}},
		{name: "a pause is not the cell's", p: p, f: BoardFacts{Paused: true, FirstLoaded: early, Run: boardRun(Completed, hm(9, 0))}, now: hm(12, 0), want: BoardCell{State: BoardSucceeded, SLA: SLAMet, Reruns: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			per := day
			if c.per {
				per = saturday
			}
			if got := BoardCellOf(c.p, per, c.f, c.now); got != c.want {
				t.Fatalf("BoardCellOf = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestGridPeriods(t *testing.T) {
	daily := mustPipeline(t, boardSLA)
	hourly := mustPipeline(t, `
pipeline: {id: h1}
schedule: {cron: "5 * * * *", timezone: Europe/Paris}
validation: {rules: [{key: landed, check: exists}]}
job: {type: glue, config: {jobName: j}}
`)
	got := GridPeriods(daily, hm(8, 0), 30)
	if len(got) != 30 || got[29].String() != "2026-03-10" || got[0].String() != "2026-02-09" {
		t.Fatalf("daily grid = %v … %v (%d)", got[0], got[len(got)-1], len(got))
	}
	got = GridPeriods(hourly, hm(8, 0), 3)
	if len(got) != 3 || got[0].String() != "2026-03-10T07" || got[2].String() != "2026-03-10T09" {
		t.Fatalf("hourly grid in Paris = %v", got)
	}
	if GridPeriods(daily, hm(8, 0), 0) != nil {
		t.Fatal("no periods asked, some given")
	}
}

func TestCompareBoard(t *testing.T) {
	at := func(h int) time.Time { return hm(h, 0) }
	// Each rank comes before the next.
	order := []BoardRank{
		{State: BoardBreached, ID: "z"},
		{State: BoardFailed, Deadline: at(9), ID: "b"},
		{State: BoardFailed, Deadline: at(10), ID: "a"},
		{State: BoardFailed, ID: "a"},
		{State: BoardFailed, ID: "b"},
		{State: BoardAtRisk, Deadline: at(1), ID: "a"},
		{State: BoardWaiting, Deadline: at(8), ID: "m"},
		{State: BoardWaiting, Deadline: at(8), ID: "n"},
		{State: BoardExcluded, ID: "a"},
	}
	for i := 1; i < len(order); i++ {
		if CompareBoard(order[i-1], order[i]) >= 0 || CompareBoard(order[i], order[i-1]) <= 0 {
			t.Fatalf("%+v should come before %+v", order[i-1], order[i])
		}
	}
	if CompareBoard(order[0], order[0]) != 0 {
		t.Fatal("a rank equals itself")
	}
}
