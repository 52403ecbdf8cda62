package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

const loadsYAML = `
pipeline: {id: loads, owner: sales}
schedule:
  trigger: {key: orders-loaded, check: equals, field: eventType, value: COMPLETE}
validation:
  rules: [{key: orders-loaded, check: gte, field: rowCount, value: 1000}]
lineage:
  - {key: orders-loaded, job: {namespace: airflow-prod, name: orders_dag.load_orders}}
job: {type: glue, config: {jobName: loads}}
`

type lineageAccepted struct {
	Matched bool `json:"matched"`
	Writes  []struct {
		PipelineID string `json:"pipelineId"`
		Key        string `json:"key"`
		Period     string `json:"period"`
		Changed    bool   `json:"changed"`
		Stale      bool   `json:"stale"`
	} `json:"writes"`
}

// olEvent is a compact Airflow-shaped RunEvent (the fixture's body limit
// is 1 KiB).
func olEvent(typ, runID, job, at string, rows int) string {
	out := ""
	if rows >= 0 {
		out = fmt.Sprintf(`,"outputs":[{"namespace":"pg://w","name":"orders","outputFacets":{"outputStatistics":{"rowCount":%d}}}]`, rows)
	}
	return fmt.Sprintf(`{"eventType":%q,"eventTime":%q,"producer":"https://github.com/apache/airflow/tree/providers-openlineage/1.14.0",`+
		`"run":{"runId":%q,"facets":{"nominalTime":{"nominalStartTime":"2026-03-09T00:00:00Z"}}},"job":{"namespace":"airflow-prod","name":%q}%s}`,
		typ, at, runID, job, out)
}

// TestLineageEventsAreSensorWrites: POST /api/v1/lineage writes a run
// event as the pipeline's per-period sensor, through the engine's sensor
// decision: START does not pass the trigger, COMPLETE starts the run; a
// replay changes nothing; an unmatched event is acknowledged and counted;
// invalid and oversized events are refused; the route needs a writer.
func TestLineageEventsAreSensorWrites(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	if _, err := f.eng.ApplyConfig(t.Context(), "loads.yaml", []byte(loadsYAML)); err != nil {
		t.Fatal(err)
	}
	const job = "orders_dag.load_orders"
	start := olEvent("START", "run-1", job, "2026-03-10T02:00:00Z", -1)
	complete := olEvent("COMPLETE", "run-1", job, "2026-03-10T02:09:00Z", 15230)

	wantError(t, f.do(t, "POST", "/api/v1/lineage", "", start), http.StatusUnauthorized, "unauthorized")
	wantError(t, f.do(t, "POST", "/api/v1/lineage", readerSecret, start), http.StatusForbidden, "forbidden")

	got := want[lineageAccepted](t, f.do(t, "POST", "/api/v1/lineage", writerSecret, start), http.StatusOK)
	if !got.Matched || len(got.Writes) != 1 || got.Writes[0].Key != "orders-loaded#2026-03-09" || got.Writes[0].Period != "2026-03-09" || !got.Writes[0].Changed {
		t.Fatalf("START: %+v", got)
	}
	if runs := want[runList](t, f.do(t, "GET", "/v1/pipelines/loads/runs", readerSecret, ""), http.StatusOK); len(runs.Runs) != 0 {
		t.Fatalf("START started a run: %+v", runs.Runs)
	}
	got = want[lineageAccepted](t, f.do(t, "POST", "/api/v1/lineage", writerSecret, complete), http.StatusOK)
	if len(got.Writes) != 1 || !got.Writes[0].Changed || got.Writes[0].Stale {
		t.Fatalf("COMPLETE: %+v", got)
	}
	runs := want[runList](t, f.do(t, "GET", "/v1/pipelines/loads/runs", readerSecret, ""), http.StatusOK)
	if len(runs.Runs) != 1 || runs.Runs[0].Period != "2026-03-09" || runs.Runs[0].State != "TRIGGERING" {
		t.Fatalf("COMPLETE with 15230 rows: runs %+v, want the period's run triggering", runs.Runs)
	}
	// explain names the event that satisfied each rule.
	x := want[struct {
		Trigger struct {
			SensorKey string `json:"sensorKey"`
			Lineage   *struct {
				EventType, RunID, Job, Producer string
			} `json:"lineage"`
		} `json:"trigger"`
		Validation struct {
			Rules []struct {
				Passed  bool `json:"passed"`
				Lineage *struct {
					EventType string `json:"eventType"`
					RunID     string `json:"runId"`
					Job       string `json:"job"`
				} `json:"lineage"`
			} `json:"rules"`
		} `json:"validation"`
	}](t, f.do(t, "GET", "/v1/pipelines/loads/explain?period=2026-03-09", readerSecret, ""), http.StatusOK)
	if r := x.Validation.Rules; len(r) != 1 || !r[0].Passed || r[0].Lineage == nil || r[0].Lineage.RunID != "run-1" || r[0].Lineage.EventType != "COMPLETE" || r[0].Lineage.Job != "airflow-prod/"+job {
		t.Fatalf("explain rules %+v, want the COMPLETE of run-1 named", r)
	}
	if x.Trigger.Lineage == nil || x.Trigger.SensorKey != "orders-loaded#2026-03-09" {
		t.Fatalf("explain trigger %+v, want the lineage event named", x.Trigger)
	}
	events := f.do(t, "GET", "/v1/events?pipeline=loads&limit=1000", readerSecret, "").Body.String()

	// Replays, and the run's START arriving after its COMPLETE, change
	// nothing: no write, no event.
	for _, body := range []string{complete, start} {
		again := want[lineageAccepted](t, f.do(t, "POST", "/api/v1/lineage", writerSecret, body), http.StatusOK)
		if len(again.Writes) != 1 || again.Writes[0].Changed || !again.Writes[0].Stale {
			t.Fatalf("replay: %+v, want stale and unchanged", again)
		}
	}
	list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/loads/sensors", readerSecret, ""), http.StatusOK)
	if len(list.Sensors) != 1 || !strings.Contains(string(list.Sensors[0].Data), `"eventType":"COMPLETE"`) || list.Sensors[0].Version != 2 {
		t.Fatalf("after the replays the sensor is %+v, want the COMPLETE at version 2", list.Sensors)
	}
	if after := f.do(t, "GET", "/v1/events?pipeline=loads&limit=1000", readerSecret, "").Body.String(); after != events {
		t.Fatalf("a replay recorded events:\nbefore %s\nafter  %s", events, after)
	}

	// No pipeline listens: acknowledged, not stored, counted.
	other := want[lineageAccepted](t, f.do(t, "POST", "/api/v1/lineage", writerSecret, olEvent("COMPLETE", "run-9", "other_dag.task", "2026-03-10T02:00:00Z", 5)), http.StatusAccepted)
	if other.Matched || len(other.Writes) != 0 {
		t.Fatalf("unmatched: %+v", other)
	}

	// Invalid and oversized events.
	msg := wantError(t, f.do(t, "POST", "/api/v1/lineage", writerSecret, strings.Replace(complete, `"runId":"run-1"`, `"runId":""`, 1)), http.StatusBadRequest, "invalid_lineage_event")
	if !strings.Contains(msg, "run.runId") {
		t.Fatalf("message %q does not name run.runId", msg)
	}
	wantError(t, f.do(t, "POST", "/api/v1/lineage", writerSecret, `{"eventType":"COMPLETE"`), http.StatusBadRequest, "invalid_lineage_event")
	wantError(t, f.do(t, "POST", "/api/v1/lineage", writerSecret, `{"pad":"`+strings.Repeat("x", 2048)+`"}`), http.StatusRequestEntityTooLarge, "body_too_large")
	// A nominal time far ahead names a period no sensor may: 400 too.
	far := strings.Replace(complete, "2026-03-09T00:00:00Z", "2027-03-09T00:00:00Z", 1)
	if msg := wantError(t, f.do(t, "POST", "/api/v1/lineage", writerSecret, far), http.StatusBadRequest, "invalid_sensor"); !strings.Contains(msg, "loads") {
		t.Fatalf("far-ahead period: %q does not name the pipeline", msg)
	}

	metrics := f.do(t, "GET", "/metrics", readerSecret, "").Body.String()
	for _, line := range []string{
		`interlock_lineage_events_total{outcome="written"} 2`,
		`interlock_lineage_events_total{outcome="unchanged"} 2`,
		`interlock_lineage_events_total{outcome="unmatched"} 1`,
		`interlock_lineage_events_total{outcome="invalid"} 3`,
	} {
		if !strings.Contains(metrics, line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}
}
