package sla

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// slaDoc is a trigger pipeline with an absolute deadline at 10:00 UTC
// (warning 09:00) and, with rel, a relative SLA of 2h (warning 1h before).
func slaDoc(extra string, rel bool) string {
	sla := `sla: {deadline: "10:00", expectedDuration: 1h}`
	if rel {
		sla = `sla: {deadline: "10:00", expectedDuration: 1h, maxDuration: 2h}`
	}
	return "pipeline: {id: p1}\n" + extra + "schedule:\n  trigger: {key: ready, check: exists}\n" + sla + "\njob: {type: glue, config: {jobName: j}}\n"
}

// timersString renders SLA timers as "TYPE@HH:MM" in order.
func timersString(ts []Timer) string {
	var out []string
	for _, t := range ts {
		s := fmt.Sprintf("%s@%s", t.Alert, t.At.UTC().Format("15:04"))
		if t.Breach {
			s += "!"
		}
		if t.Relative {
			s += "r"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestSLATimersFor(t *testing.T) {
	cases := []struct {
		name        string
		doc         string
		per         schedule.Period
		marks       Marks
		firstLoaded time.Time
		now         time.Time
		want        string
	}{
		{"both instants ahead", slaDoc("", false), runtest.Day, Marks{}, runtest.HM(0, 0), runtest.HM(8, 0), "SLA_WARNING@09:00 SLA_BREACH@10:00!"},
		{"after the warning time: the warning is still set before the breach", slaDoc("", false), runtest.Day, Marks{}, runtest.HM(0, 0), runtest.HM(9, 30), "SLA_WARNING@09:00 SLA_BREACH@10:00!"},
		{"at the breach time: no warning", slaDoc("", false), runtest.Day, Marks{}, runtest.HM(0, 0), runtest.HM(10, 0), "SLA_BREACH@10:00!"},
		{"loaded after the warning: breach only (forward-only)", slaDoc("", false), runtest.Day, Marks{}, runtest.HM(9, 30), runtest.HM(9, 30), "SLA_BREACH@10:00!"},
		{"loaded after the breach: nothing (forward-only)", slaDoc("", false), runtest.Day, Marks{}, runtest.HM(10, 30), runtest.HM(10, 30), ""},
		{"warning sent: breach only", slaDoc("", false), runtest.Day, Marks{Warning: true}, runtest.HM(0, 0), runtest.HM(8, 0), "SLA_BREACH@10:00!"},
		{"breach sent: nothing", slaDoc("", false), runtest.Day, Marks{Breach: true}, runtest.HM(0, 0), runtest.HM(8, 0), ""},
		{"verdict given: nothing", slaDoc("", false), runtest.Day, Marks{Verdict: true}, runtest.HM(0, 0), runtest.HM(8, 0), ""},
		{"observed by dry-run: nothing", slaDoc("", false), runtest.Day, Marks{DryRunObserved: true}, runtest.HM(0, 0), runtest.HM(8, 0), ""},
		{"dry-run pipeline: nothing", slaDoc("dryRun: true\n", false), runtest.Day, Marks{}, runtest.HM(0, 0), runtest.HM(8, 0), ""},
		{"excluded date: nothing", strings.Replace(slaDoc("", false), "check: exists}\n", "check: exists}\n  exclude: {dates: [\"2026-03-10\"]}\n", 1), runtest.Day, Marks{}, runtest.HM(0, 0), runtest.HM(8, 0), ""},
		{"relative SLA without an arrival: the absolute only", slaDoc("", true), runtest.Day, Marks{}, runtest.HM(0, 0), runtest.HM(8, 0), "SLA_WARNING@09:00 SLA_BREACH@10:00!"},
		{"relative SLA from the first arrival", slaDoc("", true), runtest.Day, Marks{FirstArrival: runtest.HM(7, 0)}, runtest.HM(0, 0), runtest.HM(8, 0),
			"SLA_WARNING@09:00 SLA_BREACH@10:00! RELATIVE_SLA_WARNING@08:00r RELATIVE_SLA_BREACH@09:00!r"},
		{"relative breach sent: the absolute SLA only", slaDoc("", true), runtest.Day, Marks{FirstArrival: runtest.HM(7, 0), RelBreach: true}, runtest.HM(0, 0), runtest.HM(8, 0), "SLA_WARNING@09:00 SLA_BREACH@10:00!"},
		{"relative warning sent: its breach stays", slaDoc("", true), runtest.Day, Marks{FirstArrival: runtest.HM(7, 0), RelWarning: true}, runtest.HM(0, 0), runtest.HM(8, 0),
			"SLA_WARNING@09:00 SLA_BREACH@10:00! RELATIVE_SLA_BREACH@09:00!r"},
		{"absolute breach sent: the relative SLA stays", slaDoc("", true), runtest.Day, Marks{FirstArrival: runtest.HM(7, 0), Breach: true}, runtest.HM(0, 0), runtest.HM(8, 0),
			"RELATIVE_SLA_WARNING@08:00r RELATIVE_SLA_BREACH@09:00!r"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TimersFor(runtest.Pipeline(t, c.doc), c.per, c.marks, c.firstLoaded, c.now)
			if err != nil {
				t.Fatal(err)
			}
			if s := timersString(got); s != c.want {
				t.Fatalf("timers %q, want %q", s, c.want)
			}
		})
	}
}

func TestSLATimerDetailRoundTrip(t *testing.T) {
	p := runtest.Pipeline(t, slaDoc("", true))
	ts, err := TimersFor(p, runtest.Day, Marks{FirstArrival: runtest.HM(7, 0)}, runtest.HM(0, 0), runtest.HM(8, 0))
	if err != nil || len(ts) != 4 {
		t.Fatalf("timers %v, %v", timersString(ts), err)
	}
	for _, tm := range ts {
		f := ParseTimer(tm.Detail, tm.Breach, time.Time{})
		wantBreach, wantDeadline := runtest.HM(10, 0), "10:00"
		if tm.Relative {
			wantBreach, wantDeadline = runtest.HM(9, 0), "+2h0m0s"
		}
		if f.Alert != tm.Alert || !f.BreachAt.Equal(wantBreach) || f.Deadline != wantDeadline || f.Breach != tm.Breach {
			t.Errorf("%s: parsed %+v", tm.Alert, f)
		}
	}
	rel := ts[3].Detail
	if v, _ := rel.Get("sensorArrivalAt"); v.String() != sensor.StringValue(runtest.HM(7, 0).Format(time.RFC3339)).String() {
		t.Errorf("relative breach detail sensorArrivalAt = %v", v)
	}
	if f := ParseTimer(sensor.Object{}, true, runtest.HM(11, 0)); !f.BreachAt.Equal(runtest.HM(11, 0)) {
		t.Errorf("no breachAt in the detail: %v, want the due time", f.BreachAt)
	}
}

func TestLoadAndPeriodStartSLATimers(t *testing.T) {
	p := runtest.Pipeline(t, slaDoc("", false))
	abs, _, _ := ResolveAbsolute(p, runtest.Day)
	a := Arm{Period: runtest.Day, Times: abs, Warning: true, Breach: true}
	cases := []struct {
		name  string
		a     Arm
		ended bool
		marks Marks
		want  string
	}{
		{"both as selected", a, false, Marks{}, "SLA_WARNING@09:00 SLA_BREACH@10:00!"},
		{"breach only as selected", Arm{Period: runtest.Day, Times: abs, Breach: true}, false, Marks{}, "SLA_BREACH@10:00!"},
		{"the run ended", a, true, Marks{}, ""},
		{"verdict given", a, false, Marks{Verdict: true}, ""},
		{"observed by dry-run", a, false, Marks{DryRunObserved: true}, ""},
		{"warning sent", a, false, Marks{Warning: true}, "SLA_BREACH@10:00!"},
		{"breach sent", a, false, Marks{Breach: true}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if s := timersString(LoadTimers(c.a, true, c.ended, c.marks)); s != c.want {
				t.Fatalf("LoadTimers %q, want %q", s, c.want)
			}
			if !c.a.Warning {
				return // PeriodStartTimers decides the instants itself
			}
			got, _ := PeriodStartTimers(p, runtest.Day, c.ended, c.marks, runtest.HM(0, 0), runtest.HM(8, 0))
			if s := timersString(got); s != c.want {
				t.Fatalf("PeriodStartTimers %q, want %q", s, c.want)
			}
		})
	}
}

func TestSLAAlert(t *testing.T) {
	abs := slaDoc("", false)
	warn := AlertFacts{Alert: event.SLAWarning, BreachAt: runtest.HM(10, 0), Deadline: "10:00"}
	breach := AlertFacts{Alert: event.SLABreach, BreachAt: runtest.HM(10, 0), Deadline: "10:00", Breach: true}
	relWarn := AlertFacts{Alert: event.RelativeSLAWarning, BreachAt: runtest.HM(9, 0), Deadline: "+2h0m0s"}
	running := &run.Run{State: run.Running}
	cases := []struct {
		name     string
		doc      string
		f        AlertFacts
		marks    Marks
		existing *run.Run
		now      time.Time
		want     string // "TYPE marker: message", "" for nothing
	}{
		{"warning, no run", abs, warn, Marks{}, nil, runtest.HM(9, 0), "SLA_WARNING sla-warning: SLA deadline 10:00 is due (2026-03-10T10:00:00Z); period 2026-03-10 is not started"},
		{"breach while running", abs, breach, Marks{}, running, runtest.HM(10, 0), "SLA_BREACH sla-breach: SLA deadline 10:00 passed (2026-03-10T10:00:00Z); period 2026-03-10 is RUNNING"},
		{"warning at the breach time", abs, warn, Marks{}, nil, runtest.HM(10, 0), ""},
		{"warning after the breach was reported", abs, warn, Marks{Breach: true}, nil, runtest.HM(9, 0), ""},
		{"warning sent", abs, warn, Marks{Warning: true}, nil, runtest.HM(9, 0), ""},
		{"breach sent", abs, breach, Marks{Breach: true}, nil, runtest.HM(10, 0), ""},
		{"completed period", abs, breach, Marks{}, &run.Run{State: run.Completed}, runtest.HM(10, 0), ""},
		{"observed by dry-run", abs, breach, Marks{DryRunObserved: true}, nil, runtest.HM(10, 0), ""},
		{"the SLA was removed from the config", "pipeline: {id: p1}\nschedule:\n  trigger: {key: ready, check: exists}\njob: {type: glue, config: {jobName: j}}\n", breach, Marks{}, nil, runtest.HM(10, 0), ""},
		{"relative warning; the absolute breach does not silence it", slaDoc("", true), relWarn, Marks{Breach: true}, running, runtest.HM(8, 0), "RELATIVE_SLA_WARNING relative-sla-warning: SLA deadline +2h0m0s is due (2026-03-10T09:00:00Z); period 2026-03-10 is RUNNING"},
		{"relative warning after the relative breach", slaDoc("", true), relWarn, Marks{RelBreach: true}, running, runtest.HM(8, 0), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			note, marker, ok := Alert(runtest.Pipeline(t, c.doc), runtest.Day, c.f, c.marks, c.existing, c.now)
			got := ""
			if ok {
				got = fmt.Sprintf("%s %s: %s", note.Type, marker, note.Message)
			}
			if got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestSLAVerdictAtSuccess(t *testing.T) {
	abs := slaDoc("", false)
	relOnly := "pipeline: {id: p1}\nschedule:\n  trigger: {key: ready, check: exists}\nsla: {maxDuration: 2h}\njob: {type: glue, config: {jobName: j}}\n"
	cases := []struct {
		name        string
		doc         string
		marks       Marks
		firstLoaded time.Time
		now         time.Time
		want        string // "TYPE [marker kinds] margin", "" for no verdict
	}{
		{"met", abs, Marks{}, runtest.HM(0, 0), runtest.HM(9, 59), "SLA_MET [sla-verdict] 60"},
		{"breach at the deadline", abs, Marks{}, runtest.HM(0, 0), runtest.HM(10, 0), "SLA_BREACH [sla-verdict sla-breach] 0"},
		{"breach after", abs, Marks{}, runtest.HM(0, 0), runtest.HM(10, 30), "SLA_BREACH [sla-verdict sla-breach] -1800"},
		{"breach already reported by the timer", abs, Marks{Breach: true}, runtest.HM(0, 0), runtest.HM(10, 30), ""},
		{"verdict already given (a rerun)", abs, Marks{Verdict: true}, runtest.HM(0, 0), runtest.HM(9, 0), ""},
		{"deadline before the first load (forward-only)", abs, Marks{}, runtest.HM(10, 1), runtest.HM(10, 30), ""},
		{"loaded between warning and deadline: judged", abs, Marks{}, runtest.HM(9, 30), runtest.HM(9, 45), "SLA_MET [sla-verdict] 900"},
		{"dry-run pipeline", slaDoc("dryRun: true\n", false), Marks{}, runtest.HM(0, 0), runtest.HM(9, 0), ""},
		{"relative from the first arrival", relOnly, Marks{FirstArrival: runtest.HM(7, 0)}, runtest.HM(0, 0), runtest.HM(9, 30), "SLA_BREACH [sla-verdict relative-sla-breach] -1800"},
		{"relative breach reported", relOnly, Marks{FirstArrival: runtest.HM(7, 0), RelBreach: true}, runtest.HM(0, 0), runtest.HM(9, 30), ""},
		{"relative, an absolute breach marker does not count", relOnly, Marks{FirstArrival: runtest.HM(7, 0), Breach: true}, runtest.HM(0, 0), runtest.HM(8, 30), "SLA_MET [sla-verdict] 1800"},
		{"relative without an arrival: no SLA", relOnly, Marks{}, runtest.HM(0, 0), runtest.HM(9, 30), ""},
		{"absolute and relative: judged on the absolute", slaDoc("", true), Marks{FirstArrival: runtest.HM(7, 0)}, runtest.HM(0, 0), runtest.HM(9, 30), "SLA_MET [sla-verdict] 1800"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			note, marks, ok, err := VerdictAtSuccess(runtest.Pipeline(t, c.doc), runtest.Day, c.marks, c.firstLoaded, c.now)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if ok {
				var kinds []string
				for _, m := range marks {
					kinds = append(kinds, m.Kind)
				}
				margin, _ := note.Detail.Get("marginSeconds")
				got = fmt.Sprintf("%s %v %v", note.Type, kinds, margin)
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestSLAMarks(t *testing.T) {
	for _, kind := range []string{run.MarkerDryRunSeen, run.MarkerDryRun, run.MarkerSLAVerdict, run.MarkerFirstArrival, run.MarkerBackfill,
		run.MarkerSLAWarning, run.MarkerSLABreach, run.MarkerRelWarning, run.MarkerRelBreach} {
		var m Marks
		m.Set(kind, runtest.HM(7, 0))
		if m == (Marks{}) {
			t.Errorf("Set(%q) recorded nothing", kind)
		}
	}
	for _, typ := range []event.Type{event.SLAWarning, event.SLABreach, event.RelativeSLAWarning, event.RelativeSLABreach} {
		var m Marks
		m.Set(markerOf(typ), runtest.HM(7, 0))
		for _, other := range []event.Type{event.SLAWarning, event.SLABreach, event.RelativeSLAWarning, event.RelativeSLABreach} {
			if got := m.Sent(other); got != (other == typ) {
				t.Errorf("marker of %s: Sent(%s) = %v", typ, other, got)
			}
		}
	}
	// The markers as stored: each alert's own kind, read back into its own field.
	for _, c := range []struct {
		typ    event.Type
		marker string
		want   Marks
	}{
		{event.SLAWarning, run.MarkerSLAWarning, Marks{Warning: true}},
		{event.SLABreach, run.MarkerSLABreach, Marks{Breach: true}},
		{event.RelativeSLAWarning, run.MarkerRelWarning, Marks{RelWarning: true}},
		{event.RelativeSLABreach, run.MarkerRelBreach, Marks{RelBreach: true}},
	} {
		var m Marks
		if m.Set(c.marker, runtest.HM(7, 0)); m != c.want || markerOf(c.typ) != c.marker {
			t.Errorf("%s: Set(%q) = %+v, want %+v; markerOf = %q", c.typ, c.marker, m, c.want, markerOf(c.typ))
		}
	}
	for typ, want := range map[event.Type]event.Type{event.SLAWarning: event.SLABreach, event.SLABreach: event.SLABreach,
		event.RelativeSLAWarning: event.RelativeSLABreach, event.RelativeSLABreach: event.RelativeSLABreach} {
		if got := BreachOf(typ); got != want {
			t.Errorf("BreachOf(%s) = %s, want %s", typ, got, want)
		}
	}
}

func TestDayRun(t *testing.T) {
	hour := func(h int, s run.State) run.Run {
		return run.Run{Key: run.Key{PipelineID: "p1", ScheduleID: "stream", Period: fmt.Sprintf("2026-03-10T%02d", h)}, State: s}
	}
	own := run.Run{Key: run.Key{PipelineID: "p1", ScheduleID: "stream", Period: "2026-03-10"}, State: run.Completed}
	nextDay := run.Run{Key: run.Key{PipelineID: "p1", ScheduleID: "stream", Period: "2026-03-11T01"}, State: run.Running}
	cases := []struct {
		name    string
		per     schedule.Period
		own     *run.Run
		sameDay []run.Run
		want    string
	}{
		{"its own run", runtest.Day, &own, []run.Run{hour(3, run.Running)}, "2026-03-10"},
		{"no run at all", runtest.Day, nil, nil, ""},
		{"an hourly period has no stand-in", schedule.HourlyPeriod(runtest.Day.Date, 5), nil, []run.Run{hour(3, run.Running)}, ""},
		{"the latest of ended hours", runtest.Day, nil, []run.Run{hour(3, run.Completed), hour(7, run.FailedFinal), hour(5, run.Completed)}, "2026-03-10T07"},
		{"a running hour before later ended ones", runtest.Day, nil, []run.Run{hour(9, run.Completed), hour(4, run.Running), hour(8, run.FailedFinal)}, "2026-03-10T04"},
		{"the latest of running hours", runtest.Day, nil, []run.Run{hour(4, run.Evaluating), hour(6, run.Running), hour(9, run.Completed)}, "2026-03-10T06"},
		{"another day's hours do not count", runtest.Day, nil, []run.Run{nextDay}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if r := DayRun(c.per, c.own, c.sameDay); r != nil {
				got = r.Period
			}
			if got != c.want {
				t.Fatalf("DayRun = %q, want %q", got, c.want)
			}
		})
	}
}

func TestCaptureBaseline(t *testing.T) {
	rec := func(k string, n int) sensor.Record { return sensor.Record{Key: k, Data: run.Detail("count", n)} }
	sensors := map[string]sensor.Record{"b": rec("b", 2), "a": rec("a", 1), "other": rec("other", 3)}
	cases := []struct {
		name string
		keys []string
		want string
	}{
		{"no post-run rules", nil, "none"},
		{"no rule key has data", []string{"x"}, "drop"},
		{"the keys with data, sorted", []string{"b", "x", "a"}, "put a, b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, ok := run.CaptureBaseline(c.keys, sensors)
			got := "none"
			switch {
			case !ok:
			case b.Drop:
				got = "drop"
				if b.Sensors != nil {
					t.Error("drop with sensors")
				}
			default:
				v, _ := b.Note.Detail.Get("sensorKeys")
				s, _ := v.Str()
				got = "put " + s
				if len(b.Sensors) != strings.Count(s, ",")+1 || b.Note.Type != event.PostRunBaselineCaptured {
					t.Errorf("baseline %v, note %v", b.Sensors, b.Note.Type)
				}
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestSLATimersOnArrival(t *testing.T) {
	m := Marks{FirstArrival: runtest.HM(7, 0)}
	if got, _ := TimersOnArrival(runtest.Pipeline(t, slaDoc("", false)), runtest.Day, m, runtest.HM(0, 0), runtest.HM(7, 0)); len(got) != 0 {
		t.Errorf("an absolute SLA only: %s, want none (its timers do not depend on the arrival)", timersString(got))
	}
	got, _ := TimersOnArrival(runtest.Pipeline(t, slaDoc("", true)), runtest.Day, m, runtest.HM(0, 0), runtest.HM(7, 0))
	if s := timersString(got); s != "SLA_WARNING@09:00 SLA_BREACH@10:00! RELATIVE_SLA_WARNING@08:00r RELATIVE_SLA_BREACH@09:00!r" {
		t.Errorf("with a relative SLA: %s", s)
	}
}

// TestBackfillSLAExempt: a backfilled period raises no SLA alert for a
// deadline already past when the backfill was requested, at any of the
// SLA decisions (timers, a timer that fires, the verdict at success), and
// keeps a deadline still ahead.
func TestBackfillSLAExempt(t *testing.T) {
	requested := runtest.HM(11, 0) // after the 10:00 breach of `day`
	if !BackfillExempt(runtest.HM(10, 0), requested) || !BackfillExempt(runtest.HM(11, 0), requested) {
		t.Fatal("a breach at or before the request is not exempt")
	}
	if BackfillExempt(runtest.HM(11, 1), requested) || BackfillExempt(runtest.HM(10, 0), time.Time{}) {
		t.Fatal("a later breach, or a period no backfill started, is exempt")
	}
	p := runtest.Pipeline(t, slaDoc("", true))
	past := Marks{BackfilledAt: requested, FirstArrival: runtest.HM(7, 0)} // relative breach 09:00, absolute 10:00: both past
	if ts, _ := TimersFor(p, runtest.Day, past, runtest.HM(0, 0), runtest.HM(11, 5)); len(ts) != 0 {
		t.Fatalf("TimersFor set %s for past deadlines", timersString(ts))
	}
	ahead := Marks{BackfilledAt: runtest.HM(8, 0)}
	if ts, _ := TimersFor(p, runtest.Day, ahead, runtest.HM(0, 0), runtest.HM(8, 5)); timersString(ts) != "SLA_WARNING@09:00 SLA_BREACH@10:00!" {
		t.Fatalf("TimersFor for a deadline ahead of the request = %s", timersString(ts))
	}
	f := AlertFacts{Alert: event.SLABreach, BreachAt: runtest.HM(10, 0), Deadline: "10:00", Breach: true}
	if _, _, ok := Alert(p, runtest.Day, f, past, &run.Run{State: run.Running}, runtest.HM(11, 5)); ok {
		t.Fatal("Alert alerted a backfilled period's past deadline")
	}
	if _, _, ok := Alert(p, runtest.Day, f, Marks{}, &run.Run{State: run.Running}, runtest.HM(11, 5)); !ok {
		t.Fatal("Alert stays silent for a period no backfill started")
	}
	if _, _, ok, _ := VerdictAtSuccess(p, runtest.Day, Marks{BackfilledAt: requested}, runtest.HM(0, 0), runtest.HM(12, 0)); ok {
		t.Fatal("VerdictAtSuccess gave a verdict on a backfilled period's past deadline")
	}
	if _, _, ok, _ := VerdictAtSuccess(p, runtest.Day, Marks{}, runtest.HM(0, 0), runtest.HM(12, 0)); !ok {
		t.Fatal("VerdictAtSuccess gave no verdict without a backfill")
	}
	arm := Arm{Period: runtest.Day, Times: Times{Breach: runtest.HM(10, 0), Warning: runtest.HM(9, 0)}, Breach: true}
	if ts := LoadTimers(arm, true, false, past); len(ts) != 0 {
		t.Fatalf("LoadTimers set %s", timersString(ts))
	}
	var m Marks
	m.Set(run.MarkerBackfill, requested)
	if !m.BackfilledAt.Equal(requested) {
		t.Fatal("Marks.Set ignores the backfill marker")
	}
}
