package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/awsrt"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/testenv/sfnlocal"
)

// airflowRun is how a DAG run of the fake Airflow goes: it runs for a
// while of the virtual clock, then ends in a state.
type airflowRun struct {
	took  time.Duration
	state string // success, failed
}

// fakeAirflow speaks Airflow 2's stable REST API as the airflow job type
// calls it: POST /api/v1/dags/{dag}/dagRuns creates a run (409 for a
// dag_run_id it has), GET /api/v1/dags/{dag}/dagRuns/{id} reads its state
// — queued, then running until its time is up by the world's clock, then
// its plan's end state. Each DAG's runs follow its plan, in order.
type fakeAirflow struct {
	*httptest.Server
	clk *clock.Virtual

	mu    sync.Mutex
	plans map[string][]airflowRun
	runs  map[string]startedRun // by dag + "/" + id
	count map[string]int        // runs created, by dag
}

type startedRun struct {
	at   time.Time
	plan airflowRun
}

func newFakeAirflow(t *testing.T, clk *clock.Virtual, plans map[string][]airflowRun) *fakeAirflow {
	f := &fakeAirflow{clk: clk, plans: plans, runs: map[string]startedRun{}, count: map[string]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAirflow) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 5 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "dags" || parts[4] != "dagRuns" {
		http.Error(w, `{"title":"Not Found"}`, http.StatusNotFound)
		return
	}
	dag := parts[3]
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && len(parts) == 5:
		var body struct {
			DagRunID string `json:"dag_run_id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.DagRunID == "" {
			http.Error(w, `{"title":"Bad Request"}`, http.StatusBadRequest)
			return
		}
		id := dag + "/" + body.DagRunID
		if _, ok := f.runs[id]; ok {
			http.Error(w, `{"title":"Conflict"}`, http.StatusConflict)
			return
		}
		n := f.count[dag]
		f.count[dag]++
		plan := airflowRun{took: time.Minute, state: "success"}
		if ps := f.plans[dag]; n < len(ps) {
			plan = ps[n]
		}
		f.runs[id] = startedRun{at: f.clk.Now(), plan: plan}
		_ = json.NewEncoder(w).Encode(map[string]string{"dag_id": dag, "dag_run_id": body.DagRunID, "state": "queued"})
	case r.Method == http.MethodGet && len(parts) == 6:
		run, ok := f.runs[dag+"/"+parts[5]]
		if !ok {
			http.Error(w, `{"title":"DAGRun not found"}`, http.StatusNotFound)
			return
		}
		state := "running"
		if !f.clk.Now().Before(run.at.Add(run.plan.took)) {
			state = run.plan.state
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"dag_id": dag, "dag_run_id": parts[5], "state": state})
	default:
		http.Error(w, `{"title":"Method Not Allowed"}`, http.StatusMethodNotAllowed)
	}
}

func (f *fakeAirflow) created(dag string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[dag]
}

// e2ePipelines: gold and silver run when their upstream says ready, as
// Airflow DAGs; sales and ledger are daily cron pipelines whose data never
// comes (ledger's first tick also loses its schedule).
const e2ePipelines = `
pipeline: {id: gold, owner: analytics}
schedule:
  trigger: {key: upstream, check: equals, field: status, value: ready}
  evaluation: {window: 1h, interval: 5m}
sla: {deadline: "10:00", expectedDuration: 30m}
validation:
  rules: [{key: upstream, check: equals, field: status, value: ready}]
job: {type: airflow, config: {url: "%[1]s", dagId: gold}, pollInterval: 2m}
---
pipeline: {id: silver, owner: platform}
schedule:
  trigger: {key: upstream, check: exists}
validation:
  rules: [{key: upstream, check: exists}]
job: {type: airflow, config: {url: "%[1]s", dagId: silver}, pollInterval: 2m, maxRetries: 1}
---
pipeline: {id: sales, owner: finance}
schedule:
  cron: "0 6 * * *"
  evaluation: {window: 3h, interval: 10m}
sla: {deadline: "08:00"}
validation:
  rules: [{key: sales-landed, check: exists}]
job: {type: airflow, config: {url: "%[1]s", dagId: sales}}
---
pipeline: {id: ledger, owner: finance}
schedule:
  cron: "0 9 * * *"
  evaluation: {window: 30m, interval: 10m}
validation:
  rules: [{key: ledger-landed, check: exists}]
job: {type: airflow, config: {url: "%[1]s", dagId: ledger}}
`

// TestEndToEndOnEmulators is Interlock's AWS deployment at work, from
// sensors written with the SDK to the events on the bus: a run validated,
// triggered on Airflow (a fake speaking its REST API, called by the real
// airflow job type through the orchestrator's own runners, its SSRF
// allow-list from TRIGGER_ALLOW_ADDRESSES), completed and within its SLA;
// a failed DAG run retried; a cron period whose data never came, breached
// by its SLA schedule; and a cron tick whose schedule was deleted by hand,
// reported missed by the watchdog, taken by the watchdog's sweep, and
// reported recovered.
func TestEndToEndOnEmulators(t *testing.T) {
	sfnlocal.Driver(t)
	t.Parallel()
	start := time.Date(2026, 6, 1, 5, 0, 0, 0, time.UTC)
	day := "2026-06-01"
	w := newWorld(t, worldOptions{start: start, env: map[string]string{awsrt.EnvTriggerAllowAddresses: "127.0.0.1/32"}})
	air := newFakeAirflow(t, w.clk, map[string][]airflowRun{
		"gold":   {{took: 20 * time.Minute, state: "success"}},
		"silver": {{took: 10 * time.Minute, state: "failed"}, {took: 10 * time.Minute, state: "success"}},
	})
	docs := strings.Split(fmt.Sprintf(e2ePipelines, air.URL), "---\n")
	var deployed []scenario.Doc
	for i, d := range docs {
		deployed = append(deployed, scenario.Doc{File: fmt.Sprintf("pipelines-%d.yaml", i), Data: []byte(d)})
	}
	w.deploy(nil, deployed)
	w.settle()

	// ledger's first cron tick has its one-time schedule; delete it, as
	// someone cleaning the schedule group by hand would.
	sched := scheduler.NewFromConfig(awsfake.Config(w.sched.URL))
	deleted := ""
	for _, s := range w.sched.Schedules() {
		var in awsrt.Firing
		if json.Unmarshal([]byte(s.Input), &in) == nil && in.TimerKey == "cron/ledger" {
			if _, err := sched.DeleteSchedule(t.Context(), &scheduler.DeleteScheduleInput{Name: aws.String(s.Name), GroupName: aws.String(s.Group)}); err != nil {
				t.Fatal(err)
			}
			deleted = s.Name
		}
	}
	if deleted == "" {
		t.Fatalf("no schedule for ledger's cron tick among %v", w.sched.Schedules())
	}

	ready := sensor.NewObject(map[string]sensor.Value{"status": sensor.StringValue("ready")})
	w.play([]action{
		{at: start.Add(2 * time.Hour), do: func() { w.putSensor("gold", "upstream", ready) }},
		{at: start.Add(2 * time.Hour), do: func() { w.putSensor("silver", "upstream", ready) }},
	}, start.Add(7*time.Hour), 5*time.Minute)
	w.check()

	evs := w.events()
	for _, e := range evs {
		t.Logf("%s", eventLine(e))
	}
	at := func(h, m int) time.Time { return time.Date(2026, 6, 1, h, m, 0, 0, time.UTC) }
	expect := []struct {
		pipeline string
		typ      event.Type
		count    int
		from, to time.Time // the events' instants lie within [from, to]
	}{
		{"gold", event.ValidationPassed, 1, at(7, 0), at(7, 0)},
		{"gold", event.JobTriggered, 1, at(7, 0), at(7, 0)},
		{"gold", event.JobCompleted, 1, at(7, 20), at(7, 22)},
		{"gold", event.SLAMet, 1, at(7, 20), at(7, 22)},
		{"gold", event.SLAWarning, 0, time.Time{}, time.Time{}},
		{"gold", event.SLABreach, 0, time.Time{}, time.Time{}},
		{"gold", event.JobFailed, 0, time.Time{}, time.Time{}},
		{"silver", event.JobTriggered, 2, at(7, 0), at(7, 14)},
		{"silver", event.JobFailed, 1, at(7, 10), at(7, 12)},
		{"silver", event.JobCompleted, 1, at(7, 20), at(7, 26)},
		{"silver", event.RetryExhausted, 0, time.Time{}, time.Time{}},
		{"sales", event.ValidationExhausted, 1, at(9, 0), at(9, 0)},
		{"sales", event.SLABreach, 1, at(8, 0), at(8, 0)},
		{"sales", event.JobTriggered, 0, time.Time{}, time.Time{}},
		{"ledger", event.ScheduleMissed, 1, at(9, 5), at(9, 5)},      // the first pass after the tick and its grace
		{"ledger", event.ScheduleRecovered, 1, at(9, 10), at(9, 10)}, // the next: the sweep took the tick at 09:05
	}
	for _, x := range expect {
		var got []event.Event
		for _, e := range evs {
			if e.PipelineID == x.pipeline && e.Type == x.typ {
				got = append(got, e)
			}
		}
		if len(got) != x.count {
			t.Errorf("%s %s: %d events, want %d", x.pipeline, x.typ, len(got), x.count)
			continue
		}
		for _, e := range got {
			if e.Date != day {
				t.Errorf("%s: period %s, want %s", eventLine(e), e.Date, day)
			}
			if e.Time.Before(x.from) || e.Time.After(x.to) {
				t.Errorf("%s: at %s, want within [%s, %s]", eventLine(e), e.Time.Format(time.RFC3339), x.from.Format(time.RFC3339), x.to.Format(time.RFC3339))
			}
		}
	}
	// Each DAG run started once per trigger: the state machine's steps
	// made each call exactly once.
	if n := air.created("gold"); n != 1 {
		t.Errorf("gold: %d DAG runs created, want 1", n)
	}
	if n := air.created("silver"); n != 2 {
		t.Errorf("silver: %d DAG runs created, want 2 (the failed one and its retry)", n)
	}
	for _, typ := range []event.Type{event.SensorRejected, event.JobReportRejected, event.WatchdogDegraded} {
		for _, e := range evs {
			if e.Type == typ {
				t.Errorf("unexpected %s", eventLine(e))
			}
		}
	}
}
