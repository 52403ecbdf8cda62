package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

type runBrief struct {
	State      string    `json:"state"`
	Outcome    string    `json:"outcome"`
	Attempt    int       `json:"attempt"`
	Generation int       `json:"generation"`
	Cause      string    `json:"cause"`
	StateSince time.Time `json:"stateSince"`
}

type pipelineView struct {
	ID            string     `json:"id"`
	Owner         string     `json:"owner"`
	Description   string     `json:"description"`
	ScheduleID    string     `json:"scheduleId"`
	Timezone      string     `json:"timezone"`
	DryRun        bool       `json:"dryRun"`
	Paused        bool       `json:"paused"`
	PausedUntil   *time.Time `json:"pausedUntil"`
	ConfigVersion int64      `json:"configVersion"`
	CurrentPeriod string     `json:"currentPeriod"`
	Run           *runBrief  `json:"run"`
	SLA           *struct {
		Deadline string     `json:"deadline"`
		Warning  *time.Time `json:"warningAt"`
		Breach   time.Time  `json:"breachAt"`
	} `json:"sla"`
	NextTick *time.Time `json:"nextTick"`
}

type runList struct {
	PipelineID string `json:"pipelineId"`
	Runs       []struct {
		PipelineID string    `json:"pipelineId"`
		ScheduleID string    `json:"scheduleId"`
		Period     string    `json:"period"`
		State      string    `json:"state"`
		Cause      string    `json:"cause"`
		Attempt    int       `json:"attempt"`
		CreatedAt  time.Time `json:"createdAt"`
	} `json:"runs"`
}

func TestGetPipeline(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	orders := want[pipelineView](t, f.do(t, "GET", "/v1/pipelines/orders", "", ""), http.StatusOK)
	if orders.ID != "orders" || orders.Owner != "sales" || orders.Description != "order intake" || orders.ScheduleID != "stream" ||
		orders.Timezone != "UTC" || orders.Paused || orders.ConfigVersion != 1 || orders.CurrentPeriod != "2026-03-10" || orders.Run != nil || orders.NextTick != nil {
		t.Fatalf("orders %+v", orders)
	}
	if orders.SLA == nil || orders.SLA.Deadline != "10:00" || !orders.SLA.Breach.Equal(t0.Add(2*time.Hour)) ||
		orders.SLA.Warning == nil || !orders.SLA.Warning.Equal(t0.Add(90*time.Minute)) {
		t.Fatalf("orders SLA %+v", orders.SLA)
	}

	// 04:00 in New York: today's 06:00 EDT tick is 10:00 UTC.
	nightly := want[pipelineView](t, f.do(t, "GET", "/v1/pipelines/nightly", "", ""), http.StatusOK)
	if nightly.ScheduleID != "cron" || nightly.Timezone != "America/New_York" || nightly.CurrentPeriod != "2026-03-10" || nightly.SLA != nil ||
		nightly.NextTick == nil || !nightly.NextTick.Equal(time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("nightly %+v", nightly)
	}

	wantError(t, f.do(t, "GET", "/v1/pipelines/nope", "", ""), 404, "unknown_pipeline")
	wantError(t, f.do(t, "GET", "/v1/pipelines/orders?verbose=1", "", ""), 400, "bad_request")
}

func TestListPipelines(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	got := want[struct {
		Pipelines []pipelineView `json:"pipelines"`
	}](t, f.do(t, "GET", "/v1/pipelines", "", ""), http.StatusOK)
	if len(got.Pipelines) != 2 || got.Pipelines[0].ID != "nightly" || got.Pipelines[1].ID != "orders" {
		t.Fatalf("pipelines %+v", got.Pipelines)
	}
	if got.Pipelines[1].SLA == nil || got.Pipelines[0].NextTick == nil {
		t.Fatalf("list views lack what the single view has: %+v", got.Pipelines)
	}
}

// TestSensorWriteThatStartsARunShowsInRuns: the trigger sensor starts the
// period's run in the write's commit; /runs and the pipeline view see it.
func TestSensorWriteThatStartsARunShowsInRuns(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	empty := want[runList](t, f.do(t, "GET", "/v1/pipelines/orders/runs", "", ""), http.StatusOK)
	if empty.Runs == nil || len(empty.Runs) != 0 {
		t.Fatalf("runs before any write: %+v (want an empty list)", empty)
	}
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed", "", `{"date": "2026-03-09"}`), http.StatusOK)
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed", "", `{"date": "2026-03-10"}`), http.StatusOK)

	runs := want[runList](t, f.do(t, "GET", "/v1/pipelines/orders/runs", "", ""), http.StatusOK)
	if len(runs.Runs) != 2 || runs.Runs[0].Period != "2026-03-10" || runs.Runs[1].Period != "2026-03-09" {
		t.Fatalf("runs %+v (want newest period first)", runs.Runs)
	}
	r := runs.Runs[0]
	if r.PipelineID != "orders" || r.ScheduleID != "stream" || r.State != "TRIGGERING" || r.Cause != "sensor" || !r.CreatedAt.Equal(t0) {
		t.Fatalf("run %+v", r)
	}

	one := want[runList](t, f.do(t, "GET", "/v1/pipelines/orders/runs?period=20260309", "", ""), http.StatusOK)
	if len(one.Runs) != 1 || one.Runs[0].Period != "2026-03-09" {
		t.Fatalf("?period=20260309: %+v", one.Runs)
	}
	limited := want[runList](t, f.do(t, "GET", "/v1/pipelines/orders/runs?limit=1", "", ""), http.StatusOK)
	if len(limited.Runs) != 1 || limited.Runs[0].Period != "2026-03-10" {
		t.Fatalf("?limit=1: %+v", limited.Runs)
	}

	view := want[pipelineView](t, f.do(t, "GET", "/v1/pipelines/orders", "", ""), http.StatusOK)
	if view.Run == nil || view.Run.State != "TRIGGERING" || view.Run.Cause != "sensor" {
		t.Fatalf("current run in the view: %+v", view.Run)
	}

	for _, tc := range []struct{ query, mentions string }{
		{"?period=2026-02-30", "2026-02-30"},
		{"?period=2026-03-10T7", "hour"},
		{"?limit=0", "limit"},
		{"?limit=ten", "limit"},
		{"?limit=1&limit=2", "once"},
		{"?state=RUNNING", `"state"`},
	} {
		msg := wantError(t, f.do(t, "GET", "/v1/pipelines/orders/runs"+tc.query, "", ""), 400, "bad_request")
		if !strings.Contains(msg, tc.mentions) {
			t.Errorf("%s: message %q does not mention %q", tc.query, msg, tc.mentions)
		}
	}
	wantError(t, f.do(t, "GET", "/v1/pipelines/nope/runs", "", ""), 404, "unknown_pipeline")
}

type explanation struct {
	PipelineID string `json:"pipelineId"`
	Period     string `json:"period"`
	Validation struct {
		Passed bool `json:"passed"`
	} `json:"validation"`
}

func TestExplain(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	x := want[explanation](t, f.do(t, "GET", "/v1/pipelines/orders/explain", "", ""), http.StatusOK)
	if x.PipelineID != "orders" || x.Period != "2026-03-10" || x.Validation.Passed {
		t.Fatalf("explain %+v", x)
	}
	y := want[explanation](t, f.do(t, "GET", "/v1/pipelines/orders/explain?period=2026-03-09", "", ""), http.StatusOK)
	if y.Period != "2026-03-09" {
		t.Fatalf("explain ?period=2026-03-09: %+v", y)
	}
	wantError(t, f.do(t, "GET", "/v1/pipelines/orders/explain?period=tuesday", "", ""), 400, "bad_request")
	wantError(t, f.do(t, "GET", "/v1/pipelines/nope/explain", "", ""), 404, "unknown_pipeline")
}
