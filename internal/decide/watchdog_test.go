package decide

import (
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// slaDailyDoc is a daily cron pipeline with an SLA: a period the
// watchdog can start, close, time out and arm.
const slaDailyDoc = "pipeline: {id: s1}\nschedule: {cron: '0 6 * * *'}\nsla: {deadline: '09:00'}\njob: {type: command, config: {command: /bin/true}}\n"

// findingFacts are the facts needs.Finding names for fd, read in rounds
// as the engine reads them.
func (w world) findingFacts(fd watchdog.Finding) *Facts {
	f := w.facts(needs.Set{})
	for range 4 {
		n := needs.Finding(w.configs(fd.Key.PipelineID), w.configs, fd)
		if n.Minus(f.Asked).Empty() {
			break
		}
		f = w.facts(n)
	}
	return f
}

func TestFinding(t *testing.T) {
	now := runtest.T0
	key := run.Key{PipelineID: "s1", ScheduleID: "daily", Period: "2026-03-10"}
	stuck := run.Run{Key: key, State: run.Running, Version: 4, JobRunID: "j1", ExpiresAt: now.Add(-time.Hour)}
	moved := stuck
	moved.Version = 5
	const dedup = "watchdog:test"
	for _, c := range []struct {
		name       string
		fd         watchdog.Finding
		id         string // the pipeline in the world: "" for s1
		runs       []run.Run
		markers    []store.Marker
		wantEvents []event.Type
		wantRuns   []run.State
		wantMarker bool
		repaired   bool
	}{
		{name: "a finding with no action raises its event once, with its marker",
			fd:         watchdog.Finding{Key: key, Event: event.WatchdogDegraded, Message: "m", Marker: dedup, Action: watchdog.ActionNone},
			wantEvents: []event.Type{event.WatchdogDegraded}, wantMarker: true},
		{name: "a finding whose marker exists was raised: nothing",
			fd:      watchdog.Finding{Key: key, Event: event.WatchdogDegraded, Message: "m", Marker: dedup, Action: watchdog.ActionNone},
			markers: []store.Marker{{Key: key, Kind: dedup, At: now.Add(-time.Hour)}}},
		{name: "a stuck run that did not move is timed out",
			fd:   watchdog.Finding{Key: key, Event: event.SFNTimeout, Message: "stuck", Action: watchdog.ActionFailRun, Run: &stuck},
			runs: []run.Run{stuck}, wantEvents: []event.Type{event.SFNTimeout}, wantRuns: []run.State{run.FailedFinal}},
		{name: "a stuck run that moved since the snapshot is left alone",
			fd:   watchdog.Finding{Key: key, Event: event.SFNTimeout, Message: "stuck", Action: watchdog.ActionFailRun, Run: &stuck},
			runs: []run.Run{moved}},
		{name: "a period with no run is closed",
			fd:         watchdog.Finding{Key: key, Event: event.ScheduleMissed, Message: "missed", Action: watchdog.ActionClosePeriod},
			wantEvents: []event.Type{event.ScheduleMissed}, wantRuns: []run.State{run.FailedFinal}},
		{name: "a period whose run showed up is not closed",
			fd:   watchdog.Finding{Key: key, Event: event.ScheduleMissed, Message: "missed", Action: watchdog.ActionClosePeriod},
			runs: []run.Run{{Key: key, State: run.Evaluating, Version: 1}}},
		{name: "a missed period is started, its event first",
			fd:         watchdog.Finding{Key: key, Event: event.TriggerRecovered, Message: "recovered", Action: watchdog.ActionStartRun},
			wantEvents: []event.Type{event.TriggerRecovered}, wantRuns: []run.State{run.Triggering}},
		{name: "a period started meanwhile is not started again",
			fd:   watchdog.Finding{Key: key, Event: event.TriggerRecovered, Message: "recovered", Action: watchdog.ActionStartRun},
			runs: []run.Run{{Key: key, State: run.Evaluating, Version: 1}}},
		{name: "a lost SLA timer is armed again, silently",
			fd:       watchdog.Finding{Key: key, Action: watchdog.ActionArmSLA},
			repaired: true},
		{name: "a finding of a pipeline removed since the snapshot: nothing", id: "other",
			fd: watchdog.Finding{Key: key, Event: event.WatchdogDegraded, Marker: dedup, Action: watchdog.ActionNone}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, slaDailyDoc)
			if c.id != "" {
				w = newWorld(t, "pipeline: {id: other}\nschedule: {cron: '0 6 * * *'}\njob: {type: command, config: {command: /bin/true}}\n")
			}
			w.runs, w.markers = c.runs, c.markers
			f := w.findingFacts(c.fd)
			var o *Outcome
			var applied FindingApplied
			err := w.decide(t, f, func(f *Facts) (err error) {
				o, applied, err = Finding(FindingIn{Finding: c.fd, Env: Env{NewID: ids()}}, f, now)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			got := types(o.C.Events)
			if len(c.wantEvents) == 0 && len(got) > 0 || len(c.wantEvents) > 0 && (len(got) == 0 || got[0] != c.wantEvents[0]) {
				t.Fatalf("events %v, want %v first", got, c.wantEvents)
			}
			var states []run.State
			for _, r := range o.C.Runs {
				states = append(states, r.Run.State)
			}
			if !slices.Equal(states, c.wantRuns) {
				t.Fatalf("runs written %v, want %v", states, c.wantRuns)
			}
			marked := slices.ContainsFunc(o.C.Markers, func(m store.MarkerWrite) bool { return m.Marker.Kind == dedup && m.IfAbsent })
			if marked != c.wantMarker {
				t.Fatalf("dedup marker written (if absent) %v, want %v: %+v", marked, c.wantMarker, o.C.Markers)
			}
			if applied.Repaired != c.repaired || (c.repaired && len(o.C.Timers) == 0) {
				t.Fatalf("repaired %v with timers %+v, want %v", applied.Repaired, o.C.Timers, c.repaired)
			}
			if len(c.wantEvents)+len(c.wantRuns) == 0 && !c.repaired && !o.C.Empty() {
				t.Fatalf("outcome %+v, want nothing", o.C)
			}
		})
	}
}

// TestFindingMissing: each need of a finding, dropped, is named missing.
func TestFindingMissing(t *testing.T) {
	now := runtest.T0
	key := run.Key{PipelineID: "s1", ScheduleID: "daily", Period: "2026-03-10"}
	stuck := run.Run{Key: key, State: run.Running, Version: 4, JobRunID: "j1"}
	w := newWorld(t, slaDailyDoc)
	w.runs = []run.Run{stuck}
	fd := watchdog.Finding{Key: key, Event: event.SFNTimeout, Marker: "watchdog:test", Action: watchdog.ActionFailRun, Run: &stuck}
	full := w.findingFacts(fd)
	in := FindingIn{Finding: fd, Env: Env{NewID: ids()}}
	if _, _, err := Finding(in, full, now); err != nil {
		t.Fatalf("with every need: %v", err)
	}
	for _, c := range []struct {
		name string
		drop func(*needs.Set)
		want func(*Missing) bool
	}{
		{"the pipeline", func(n *needs.Set) { n.Pipelines = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.Pipelines, "s1") }},
		{"the period's markers", func(n *needs.Set) { n.MarkersOf = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.MarkersOf, key) }},
		{"the run", func(n *needs.Set) { n.Runs = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.Runs, key) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := full.Asked
			c.drop(&asked)
			_, _, err := Finding(in, w.facts(asked), now)
			if m, ok := AsMissing(err); !ok || !c.want(m) {
				t.Fatalf("err = %v, want the missing %s", err, c.name)
			}
		})
	}
}

func TestWatchdogPass(t *testing.T) {
	now := runtest.T0
	failing := watchdog.Result{Failed: []string{"stuck-runs"}}
	degraded := func(failed string) store.Marker {
		return store.Marker{Kind: run.MarkerWatchdogDegraded, At: now.Add(-time.Hour), Detail: run.Detail("failed", failed)}
	}
	for _, c := range []struct {
		name      string
		res       watchdog.Result
		markers   []store.Marker
		raise     bool
		ifAbsent  bool // the degraded marker's write is conditioned on its absence
		clear     bool
		wantError bool
	}{
		{name: "a clean pass records only when it ran"},
		{name: "a first failure raises, on the marker's absence", res: failing, raise: true, ifAbsent: true},
		{name: "the same failure again raises nothing", res: failing, markers: []store.Marker{degraded("stuck-runs")}},
		{name: "another failure raises again", res: watchdog.Result{Failed: []string{"timers"}}, markers: []store.Marker{degraded("stuck-runs")}, raise: true},
		{name: "a clean pass after a failure clears it", markers: []store.Marker{degraded("stuck-runs")}, clear: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.markers = c.markers
			o, err := WatchdogPass(PassIn{Result: c.res, Env: Env{NewID: ids()}}, w.facts(needs.WatchdogPass()), now)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(o.C.Markers, func(m store.MarkerWrite) bool {
				return m.Marker.Kind == run.MarkerWatchdogPass && m.Marker.At.Equal(now)
			}) {
				t.Fatalf("markers %+v, want the pass's", o.C.Markers)
			}
			if raised := slices.Contains(types(o.C.Events), event.WatchdogDegraded); raised != c.raise {
				t.Fatalf("raised %v, want %v", raised, c.raise)
			}
			i := slices.IndexFunc(o.C.Markers, func(m store.MarkerWrite) bool { return m.Marker.Kind == run.MarkerWatchdogDegraded })
			if (i >= 0) != c.raise || (i >= 0 && o.C.Markers[i].IfAbsent != c.ifAbsent) {
				t.Fatalf("degraded marker %+v, want written %v (if absent %v)", o.C.Markers, c.raise, c.ifAbsent)
			}
			if cleared := len(o.C.MarkerDeletes) == 1; cleared != c.clear {
				t.Fatalf("marker deletes %+v, want cleared %v", o.C.MarkerDeletes, c.clear)
			}
		})
	}
	t.Run("the degraded marker not read", func(t *testing.T) {
		_, err := WatchdogPass(PassIn{Env: Env{NewID: ids()}}, newWorld(t).facts(needs.Set{}), now)
		if m, ok := AsMissing(err); !ok || !slices.Contains(m.Needs.MarkersOf, run.Key{}) {
			t.Fatalf("err = %v, want the markers of no pipeline missing", err)
		}
	})
}
