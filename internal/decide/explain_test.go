package decide

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// slaTriggerDoc is triggerDoc with an SLA in place of its post-run rules
// (the manual-rerun budget its tests read is the default one).
var slaTriggerDoc = strings.Replace(triggerDoc,
	"postRun:\n  rules: [{key: audit, check: exists}]\n",
	"sla: {deadline: '08:15', expectedDuration: 30m}\n", 1)

func TestExplain(t *testing.T) {
	now := runtest.T0
	p := runtest.Pipeline(t, slaTriggerDoc)
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	arrived := now.Add(-30 * time.Minute)
	full := func(w world) world {
		w.sensors = []store.Sensor{{PipelineID: "p1", Key: "ready", ChangedAt: arrived, Version: 1},
			{PipelineID: "p1", Key: "landed", ChangedAt: now.Add(-time.Minute), Version: 1}}
		w.runs = []run.Run{{Key: key, State: run.Triggering, TriggerInFlight: true, Version: 3}}
		w.markers = []store.Marker{{Key: key, Kind: run.MarkerFirstArrival, At: arrived}}
		w.timers = []store.Timer{{Key: StepTimerKey(key), Kind: string(run.StepTrigger), Run: key, DueAt: now.Add(time.Minute)}}
		w.ledger = []store.LedgerEntry{{Key: key, Seq: 1, Reason: run.ReasonManual}}
		return w
	}
	explain := func(t *testing.T, w world, period string) (Explanation, error) {
		t.Helper()
		f := w.rounds(func(*Facts) needs.Set { return ExplainNeeds(w.configs, "p1", period, now) })
		var x Explanation
		err := w.decide(t, f, func(f *Facts) (err error) {
			x, err = Explain(ExplainIn{PipelineID: "p1", Period: period, Rules: rulesOpt, Findable: func(string) bool { return false }}, f, now)
			return err
		})
		return x, err
	}
	t.Run("a period triggered, its call in flight", func(t *testing.T) {
		w := full(newWorld(t, slaTriggerDoc))
		x, err := explain(t, w, "")
		if err != nil {
			t.Fatal(err)
		}
		if x.Period != "2026-03-10" || !x.Validation.Passed || len(x.Validation.Rules) != 1 || x.Validation.Rules[0].SensorAge != "1m0s" {
			t.Fatalf("period %s validation %+v, want today's, passed on landed a minute old", x.Period, x.Validation)
		}
		if x.Trigger == nil || !x.Trigger.Passed || x.Trigger.SensorKey != "ready" {
			t.Fatalf("trigger %+v, want passed on ready", x.Trigger)
		}
		if x.Run == nil || x.Run.State != run.Triggering || x.Run.TriggerCall == "" {
			t.Fatalf("run %+v, want triggering with its call's status", x.Run)
		}
		d := x.Deadlines
		if d.SLABreach == nil || !d.SLABreach.Equal(time.Date(2026, 3, 10, 8, 15, 0, 0, time.UTC)) || d.SLAWarning == nil || d.FirstTriggerSensor == nil || !d.FirstTriggerSensor.Equal(arrived) || d.SLABreachBeforeLoad {
			t.Fatalf("deadlines %+v, want the 08:15 breach, its warning and the first arrival", d)
		}
		i := slices.IndexFunc(x.Budgets, func(b BudgetUsed) bool { return b.Name == "maxManualReruns (reason manual)" })
		if i < 0 || x.Budgets[i].Used != 1 {
			t.Fatalf("budgets %+v, want one manual rerun used", x.Budgets)
		}
	})
	t.Run("a past period: nothing stored for it, today's plain flag not its own", func(t *testing.T) {
		w := newWorld(t, slaTriggerDoc)
		w.sensors = []store.Sensor{{PipelineID: "p1", Key: "landed", ChangedAt: now.Add(-time.Minute), Version: 1}}
		x, err := explain(t, w, "2026-03-09")
		if err != nil {
			t.Fatal(err)
		}
		if x.Run != nil || x.Validation.Passed || x.Trigger == nil || x.Trigger.Reason != "no trigger sensor for this period" || x.Deadlines.FirstTriggerSensor != nil {
			t.Fatalf("explanation %+v, want no run, failing rules, no trigger sensor", x)
		}
	})
	t.Run("loaded after the deadline", func(t *testing.T) {
		w := newWorld(t, slaTriggerDoc)
		row := w.rows["p1"]
		row.FirstLoadedAt = now
		w.rows["p1"] = row
		x, err := explain(t, w, "")
		if err != nil || !x.Deadlines.SLAWarningBeforeLoad || x.Deadlines.LoadedAt == nil {
			t.Fatalf("deadlines %+v err %v, want the warning before the load", x.Deadlines, err)
		}
	})
	for _, c := range []struct{ name, period string }{{"not a period", "someday"}} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := explain(t, newWorld(t, slaTriggerDoc), c.period); !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("err = %v, want an invalid request", err)
			}
		})
	}
	t.Run("the last job's output is the period's job-end events'", func(t *testing.T) {
		w := full(newWorld(t, slaTriggerDoc))
		f := w.rounds(func(*Facts) needs.Set { return ExplainNeeds(w.configs, "p1", "", now) })
		out := func(s string) sensor.Object {
			return sensor.NewObject(map[string]sensor.Value{run.DetailOutput: sensor.StringValue(s)})
		}
		f.Events = map[needs.EventRange]store.EventPage{needs.JobOutputEvents(key): {Events: []event.Event{
			{Type: event.JobFailed, ScheduleID: key.ScheduleID, Detail: out("first")},
			{Type: event.JobCompleted, ScheduleID: key.ScheduleID, Detail: out("last")},
		}}}
		x, err := Explain(ExplainIn{PipelineID: "p1", Rules: rulesOpt, Findable: func(string) bool { return false }}, f, now)
		if err != nil {
			t.Fatal(err)
		}
		if x.Run == nil || x.Run.LastOutput == nil || x.Run.LastOutput.Output != "last" || x.Run.LastOutput.Event != event.JobCompleted {
			t.Fatalf("run %+v, want the last job's output", x.Run)
		}
	})
	t.Run("missing", func(t *testing.T) {
		w := full(newWorld(t, slaTriggerDoc))
		asked := w.rounds(func(*Facts) needs.Set { return ExplainNeeds(w.configs, "p1", "", now) }).Asked
		for what, drop := range map[string]func(*needs.Set){
			"the pipeline":        func(n *needs.Set) { n.Pipelines = nil },
			"the rule's sensors":  func(n *needs.Set) { n.Sensors = nil },
			"the trigger sensors": func(n *needs.Set) { n.Prefixes = nil },
			"the run":             func(n *needs.Set) { n.Runs = nil },
			"the markers":         func(n *needs.Set) { n.MarkersOf = nil },
			"the step timer":      func(n *needs.Set) { n.Timers = nil },
			"the ledger":          func(n *needs.Set) { n.Ledgers = nil },
			"the job's output":    func(n *needs.Set) { n.Events = nil },
		} {
			n := asked
			drop(&n)
			f := w.facts(n)
			f.Configs = map[string]*Pipeline{"p1": {P: w.pipes["p1"], Row: w.rows["p1"]}}
			if _, err := Explain(ExplainIn{PipelineID: "p1", Rules: rulesOpt}, f, now); !isMissing(err, func(*Missing) bool { return true }) {
				t.Errorf("without %s: err = %v, want it missing", what, err)
			}
		}
	})
}
