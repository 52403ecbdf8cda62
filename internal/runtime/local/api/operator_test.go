package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

type rerunAnswer struct {
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason"`
	Period   string `json:"period"`
}

func TestRerun(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	// A period with no run can be run.
	got := want[rerunAnswer](t, f.do(t, "POST", "/v1/pipelines/orders/reruns", adminSecret, `{"period": "20260309", "reason": "reprocess"}`), http.StatusOK)
	if !got.Accepted || got.Period != "2026-03-09" || got.Reason != "" {
		t.Fatalf("rerun of an empty period: %+v", got)
	}
	// A period whose run is going is not: a verdict, not an error.
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed", writerSecret, `{}`), http.StatusOK)
	got = want[rerunAnswer](t, f.do(t, "POST", "/v1/pipelines/orders/reruns", adminSecret, `{"period": "2026-03-10"}`), http.StatusOK)
	if got.Accepted || !strings.Contains(got.Reason, "in progress") || got.Period != "2026-03-10" {
		t.Fatalf("rerun of a running period: %+v", got)
	}
	if evs, _ := f.st.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.RerunAccepted, event.RerunRejected}}); len(evs.Events) != 2 {
		t.Fatalf("rerun events %v, want one accepted and one rejected", evs)
	}

	for _, tc := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"no body", ``, 400, "invalid_json"},
		{"no period", `{"reason": "x"}`, 400, "bad_request"},
		{"bad period", `{"period": "2026-02-30"}`, 400, "bad_request"},
		{"unknown field", `{"period": "2026-03-10", "force": true}`, 400, "invalid_json"},
		{"wrong type", `{"period": 20260310}`, 400, "invalid_json"},
		{"not an object", `["2026-03-10"]`, 400, "invalid_json"},
		{"control characters in reason", `{"period": "2026-03-10", "reason": "a\u0000b"}`, 400, "bad_request"},
		{"reason too long", `{"period": "2026-03-10", "reason": "` + strings.Repeat("r", 501) + `"}`, 400, "bad_request"},
		{"over maxBodyBytes", `{"period": "2026-03-10", "reason": "` + strings.Repeat("r", 1100) + `"}`, 413, "body_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, f.do(t, "POST", "/v1/pipelines/orders/reruns", adminSecret, tc.body), tc.status, tc.code)
		})
	}
	wantError(t, f.do(t, "POST", "/v1/pipelines/nope/reruns", adminSecret, `{"period": "2026-03-10"}`), 404, "unknown_pipeline")
}

func TestPauseAndResume(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	v := want[pipelineView](t, f.do(t, "POST", "/v1/pipelines/orders/pause", adminSecret, ""), http.StatusOK)
	if !v.Paused || v.PausedUntil != nil {
		t.Fatalf("paused until resumed: %+v", v)
	}
	until := t0.Add(3 * time.Hour)
	v = want[pipelineView](t, f.do(t, "POST", "/v1/pipelines/orders/pause", adminSecret, `{"until": "2026-03-10T11:00:00Z"}`), http.StatusOK)
	if !v.Paused || v.PausedUntil == nil || !v.PausedUntil.Equal(until) {
		t.Fatalf("paused until 11:00: %+v", v)
	}
	// A paused pipeline records a trigger sensor but starts nothing.
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed", writerSecret, `{}`), http.StatusOK)
	if runs := want[runList](t, f.do(t, "GET", "/v1/pipelines/orders/runs", readerSecret, ""), http.StatusOK); len(runs.Runs) != 0 {
		t.Fatalf("a paused pipeline started %+v", runs.Runs)
	}

	for _, tc := range []struct{ name, body, code string }{
		{"until in the past", `{"until": "2026-03-10T07:00:00Z"}`, "bad_request"},
		{"until not a time", `{"until": "tomorrow"}`, "bad_request"},
		{"unknown field", `{"for": "2h"}`, "invalid_json"},
		{"until now", `{"until": "2026-03-10T08:00:00Z"}`, "bad_request"},
		{"trailing content", `{} x`, "invalid_json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, f.do(t, "POST", "/v1/pipelines/orders/pause", adminSecret, tc.body), 400, tc.code)
		})
	}

	v = want[pipelineView](t, f.do(t, "POST", "/v1/pipelines/orders/resume", adminSecret, ""), http.StatusOK)
	if v.Paused || v.PausedUntil != nil {
		t.Fatalf("resumed: %+v", v)
	}
	// Resume treats the data that came during the pause as just arrived.
	if v.Run == nil || v.Run.Cause != "sensor" {
		t.Fatalf("resume did not start the period held by the pause: %+v", v.Run)
	}
	// Resuming again changes nothing.
	want[pipelineView](t, f.do(t, "POST", "/v1/pipelines/orders/resume", adminSecret, "{}"), http.StatusOK)
	wantError(t, f.do(t, "POST", "/v1/pipelines/orders/resume", adminSecret, `{"now": true}`), 400, "invalid_json")

	for typ, n := range map[event.Type]int{event.PipelinePaused: 2, event.PipelineResumed: 1} {
		evsPage, err := f.st.EventList(t.Context(), store.EventListParams{Types: []event.Type{typ}})
		evs := evsPage.Events
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != n {
			t.Fatalf("%d %s events, want %d", len(evs), typ, n)
		}
		byV, _ := evs[0].Detail.Get("by")
		if by, _ := byV.Str(); by != "api:ops" {
			t.Fatalf("%s by %v, want the token's name", typ, byV)
		}
	}
	wantError(t, f.do(t, "POST", "/v1/pipelines/nope/pause", adminSecret, ""), 404, "unknown_pipeline")
	wantError(t, f.do(t, "POST", "/v1/pipelines/nope/resume", adminSecret, ""), 404, "unknown_pipeline")
}
