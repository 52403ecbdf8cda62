package decide

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/store"
)

// inFlight is a run of triggerDoc's p1 whose trigger call (attempt 1) is
// in flight, its step timer (the call's lease) due at lease.
func inFlight(w world, lease time.Time) (run.Run, store.Timer) {
	p := w.pipes["p1"]
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	r := run.Run{Key: key, State: run.Triggering, TriggerInFlight: true, Version: 3, Generation: 1}
	t := store.Timer{Key: StepTimerKey(key), Kind: string(run.StepTrigger), Run: key, DueAt: lease}
	return r, t
}

func findable(yes bool) Findable { return func(string) bool { return yes } }

func recoveryOf(r run.Run, since, giveUp time.Time, lookups int) store.Marker {
	c := run.CallRecovery{Generation: r.Generation, Attempt: r.Attempt + 1, Since: since, GiveUpAt: giveUp, Lookups: lookups}
	return store.Marker{Key: r.Key, Kind: run.MarkerTriggerOutcome, At: since, Detail: c.Detail()}
}

func TestInterrupted(t *testing.T) {
	now := runtest.T0
	for _, c := range []struct {
		name       string
		findable   bool
		recorded   bool // the call's recovery is stored already
		unreadable bool // a marker that is not a recovery is stored
		notCalling bool
		wantEvents []event.Type
		wantDueNow bool // the trigger step made due now, for a lookup
		ifAbsent   bool // the marker's write is conditioned on its absence
	}{
		{name: "a findable call: announced, looked up now", findable: true,
			wantEvents: []event.Type{event.TriggerOutcomeUnknown}, wantDueNow: true, ifAbsent: true},
		{name: "a call that cannot be looked up: announced, waits for its lease",
			wantEvents: []event.Type{event.TriggerOutcomeUnknown}, ifAbsent: true},
		{name: "a call found before: nothing", findable: true, recorded: true},
		{name: "an unreadable marker is replaced, not conditioned on absence", findable: true, unreadable: true,
			wantEvents: []event.Type{event.TriggerOutcomeUnknown}, wantDueNow: true},
		{name: "a run whose call was answered meanwhile: nothing", findable: true, notCalling: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, triggerDoc)
			r, lease := inFlight(w, now.Add(10*time.Minute))
			if c.notCalling {
				r.TriggerInFlight = false
			}
			w.runs, w.timers = []run.Run{r}, []store.Timer{lease}
			if c.recorded {
				w.markers = []store.Marker{recoveryOf(r, now.Add(-time.Minute), now.Add(time.Hour), 0)}
			}
			if c.unreadable {
				w.markers = []store.Marker{{Key: r.Key, Kind: run.MarkerTriggerOutcome, At: now}}
			}
			f := w.facts(needs.Interrupted(r.Key))
			var o *Outcome
			err := w.decide(t, f, func(f *Facts) (err error) {
				o, err = Interrupted(InterruptedIn{Run: r.Key, Findable: findable(c.findable), Env: Env{NewID: ids()}}, f, now)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := types(o.C.Events); !slices.Equal(got, c.wantEvents) {
				t.Fatalf("events %v, want %v", got, c.wantEvents)
			}
			if len(c.wantEvents) == 0 {
				if !o.C.Empty() {
					t.Fatalf("outcome %+v, want nothing", o.C)
				}
				return
			}
			i := slices.IndexFunc(o.C.Markers, func(m store.MarkerWrite) bool { return m.Marker.Kind == run.MarkerTriggerOutcome })
			if i < 0 || o.C.Markers[i].IfAbsent != c.ifAbsent {
				t.Fatalf("markers %+v, want the recovery's (if absent %v)", o.C.Markers, c.ifAbsent)
			}
			j := slices.IndexFunc(o.C.Timers, func(w store.TimerWrite) bool { return w.Timer.Key == lease.Key })
			if j < 0 || o.C.Timers[j].ExpectDueAt == nil || !o.C.Timers[j].ExpectDueAt.Equal(lease.DueAt) {
				t.Fatalf("timers %+v, want the step timer's, on its due time", o.C.Timers)
			}
			if dueNow := o.C.Timers[j].Timer.DueAt.Equal(now); dueNow != c.wantDueNow {
				t.Fatalf("step due %v, want due now %v", o.C.Timers[j].Timer.DueAt, c.wantDueNow)
			}
			warned := slices.ContainsFunc(o.Logs, func(l Log) bool { return strings.Contains(l.Msg, "unreadable trigger recovery marker") })
			if warned != c.unreadable {
				t.Fatalf("logs %+v, want the unreadable marker's warning %v", o.Logs, c.unreadable)
			}
		})
	}
}

func TestRecovered(t *testing.T) {
	now := runtest.T0
	lease := now.Add(-time.Minute) // the lease ended: the step is due
	for _, c := range []struct {
		name       string
		findable   bool
		lookup     *run.Lookup
		recorded   bool
		wantAction run.RecoveryAction
		wantState  run.State
		wantMarker string // "put", "delete" or ""
		wantEvent  event.Type
	}{
		{name: "a job found is adopted", findable: true, recorded: true, lookup: &run.Lookup{Found: true, JobRunID: "j-7"},
			wantAction: run.RecoveryAdopt, wantState: run.Running, wantMarker: "delete", wantEvent: event.JobTriggered},
		{name: "no job found: the call is made again", findable: true, recorded: true, lookup: &run.Lookup{},
			wantAction: run.RecoveryRetry, wantState: run.Triggering, wantMarker: "delete"},
		{name: "a failed lookup looks again", findable: true, recorded: true, lookup: &run.Lookup{Err: "down"},
			wantAction: run.RecoveryLookAgain, wantState: run.Triggering, wantMarker: "put"},
		{name: "a lease ended with nothing to ask gives up", lookup: nil,
			wantAction: run.RecoveryGiveUp, wantState: run.FailedFinal},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, triggerDoc)
			r, step := inFlight(w, lease)
			w.runs, w.timers = []run.Run{r}, []store.Timer{step}
			if c.recorded {
				w.markers = []store.Marker{recoveryOf(r, now.Add(-5*time.Minute), now.Add(time.Hour), 0)}
			}
			f := w.facts(needs.Step(run.StepTrigger, w.pipes["p1"], w.configs, func(run.Key) (*run.Run, bool) { return &r, true }, r.Key))
			var o *Outcome
			var d RecoveryDecided
			in := RecoveredIn{Run: r.Key, Due: lease, Lookup: c.lookup, Findable: findable(c.findable), Env: Env{NewID: ids()}}
			err := w.decide(t, f, func(f *Facts) (err error) {
				o, d, err = Recovered(in, f, now)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != c.wantAction {
				t.Fatalf("action %q, want %q", d.Action, c.wantAction)
			}
			if len(o.C.Runs) != 1 || o.C.Runs[0].Run.State != c.wantState || o.C.Runs[0].ExpectVersion != r.Version {
				t.Fatalf("runs %+v, want one %s on version %d", o.C.Runs, c.wantState, r.Version)
			}
			put := slices.ContainsFunc(o.C.Markers, func(m store.MarkerWrite) bool { return m.Marker.Kind == run.MarkerTriggerOutcome })
			deleted := slices.ContainsFunc(o.C.MarkerDeletes, func(m store.MarkerDelete) bool { return m.Kind == run.MarkerTriggerOutcome })
			if put != (c.wantMarker == "put") || deleted != (c.wantMarker == "delete") {
				t.Fatalf("marker put %v deleted %v, want %q", put, deleted, c.wantMarker)
			}
			if c.wantEvent != "" && !slices.Contains(types(o.C.Events), c.wantEvent) {
				t.Fatalf("events %v, want one %s", types(o.C.Events), c.wantEvent)
			}
			touched := slices.ContainsFunc(o.C.Timers, func(w store.TimerWrite) bool {
				return w.Timer.Key == step.Key && w.ExpectDueAt != nil && w.ExpectDueAt.Equal(lease)
			}) || slices.ContainsFunc(o.C.TimerDeletes, func(d store.TimerDelete) bool {
				return d.Key == step.Key && d.ExpectDueAt != nil && d.ExpectDueAt.Equal(lease)
			})
			if !touched {
				t.Fatalf("timers %+v deletes %+v, want the step timer moved or removed on its due time", o.C.Timers, o.C.TimerDeletes)
			}
		})
	}
}

// TestRecoveryMissing: each need of the recovery decisions, dropped, is
// named missing.
func TestRecoveryMissing(t *testing.T) {
	now := runtest.T0
	w := newWorld(t, triggerDoc)
	r, step := inFlight(w, now.Add(-time.Minute))
	w.runs, w.timers = []run.Run{r}, []store.Timer{step}
	full := needs.Interrupted(r.Key)
	for _, c := range []struct {
		name string
		drop func(*needs.Set)
		want func(*Missing) bool
	}{
		{"the run", func(n *needs.Set) { n.Runs = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.Runs, r.Key) }},
		{"the pipeline", func(n *needs.Set) { n.Pipelines = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.Pipelines, "p1") }},
		{"the period's markers", func(n *needs.Set) { n.MarkersOf = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.MarkersOf, r.Key) }},
		{"the step timer", func(n *needs.Set) { n.Timers = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.Timers, step.Key) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := full
			c.drop(&asked)
			_, err := Interrupted(InterruptedIn{Run: r.Key, Findable: findable(true), Env: Env{NewID: ids()}}, w.facts(asked), now)
			if m, ok := AsMissing(err); !ok || !c.want(m) {
				t.Fatalf("Interrupted: err = %v, want the missing %s", err, c.name)
			}
			_, _, err = Recovered(RecoveredIn{Run: r.Key, Due: step.DueAt, Findable: findable(true), Env: Env{NewID: ids()}}, w.facts(asked), now)
			if m, ok := AsMissing(err); !ok || !c.want(m) {
				t.Fatalf("Recovered: err = %v, want the missing %s", err, c.name)
			}
		})
	}
}

// TestStepAsksForALookup: a due trigger step of a call in flight is the
// recovery's, and asks for a lookup only of a type that can be asked.
func TestStepAsksForALookup(t *testing.T) {
	now := runtest.T0
	for _, yes := range []bool{true, false} {
		w := newWorld(t, triggerDoc)
		r, step := inFlight(w, now.Add(-time.Minute))
		w.runs, w.timers = []run.Run{r}, []store.Timer{step}
		f := w.facts(needs.Step(run.StepTrigger, w.pipes["p1"], w.configs, func(run.Key) (*run.Run, bool) { return &r, true }, r.Key))
		_, taken, err := Step(StepIn{Run: r.Key, Step: run.StepTrigger, Findable: findable(yes), Env: Env{NewID: ids()}}, f, now)
		if err != nil {
			t.Fatal(err)
		}
		if !taken.Recover || taken.Lookup != yes {
			t.Fatalf("findable %v: recover %v lookup %v, want a recovery with lookup %v", yes, taken.Recover, taken.Lookup, yes)
		}
	}
}

func TestCallStatus(t *testing.T) {
	now := runtest.T0
	w := newWorld(t, triggerDoc)
	r, step := inFlight(w, now.Add(10*time.Minute))
	w.runs, w.timers = []run.Run{r}, []store.Timer{step}
	f := w.facts(needs.Interrupted(r.Key))
	lp := &Pipeline{P: w.pipes["p1"], Row: w.rows["p1"]}
	got, err := CallStatus(f, lp, r, findable(true), now)
	if err != nil || got == "" {
		t.Fatalf("status %q, err %v: want a sentence about the call", got, err)
	}
	r.TriggerInFlight = false
	if got, err := CallStatus(f, lp, r, findable(true), now); err != nil || got != "" {
		t.Fatalf("no call in flight: status %q, err %v, want none", got, err)
	}
}
