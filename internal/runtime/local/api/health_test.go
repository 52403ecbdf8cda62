package api_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
)

func TestHealthAndReadiness(t *testing.T) {
	var notReady error = errors.New("store migrations pending")
	f := newFixture(t, fixtureOptions{tokens: testTokens(), ready: func() error { return notReady }})
	if got := want[map[string]string](t, f.do(t, "GET", "/healthz", "", ""), http.StatusOK); got["status"] != "ok" {
		t.Fatalf("healthz %v", got)
	}
	msg := wantError(t, f.do(t, "GET", "/readyz", "", ""), http.StatusServiceUnavailable, "not_ready")
	if !strings.Contains(msg, "store migrations pending") {
		t.Fatalf("readyz message %q does not give the reason", msg)
	}
	notReady = nil
	if got := want[map[string]string](t, f.do(t, "GET", "/readyz", "", ""), http.StatusOK); got["status"] != "ready" {
		t.Fatalf("readyz %v", got)
	}
}

// TestUnroutedRequestsAnswerJSON: the router's own 404 and 405 come in
// the API's error shape, 405 with its Allow header.
func TestUnroutedRequestsAnswerJSON(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	for _, tc := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"GET", "/v2/pipelines", 404, "not_found", ""},
		{"GET", "/", 404, "not_found", ""},
		{"GET", "/v1/pipelines/orders/sensors/k/extra", 404, "not_found", ""},
		{"DELETE", "/v1/pipelines", 405, "method_not_allowed", "GET, HEAD"},
		{"GET", "/v1/pipelines/orders/reruns", 405, "method_not_allowed", "POST"},
		{"POST", "/v1/pipelines/orders/sensors/k", 405, "method_not_allowed", "PUT"},
		{"PUT", "/healthz", 405, "method_not_allowed", "GET, HEAD"},
	} {
		rec := f.do(t, tc.method, tc.path, "", "")
		msg := wantError(t, rec, tc.status, tc.code)
		if tc.allow != "" && rec.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, rec.Header().Get("Allow"), tc.allow)
		}
		if tc.status == 405 && !strings.Contains(msg, tc.method) {
			t.Errorf("%s %s: message %q does not name the method", tc.method, tc.path, msg)
		}
	}
}

func TestMetrics(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed", writerSecret, `{}`), http.StatusOK)
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed", writerSecret, `{}`), http.StatusOK)
	f.do(t, "GET", "/v1/pipelines/nope", readerSecret, "")
	f.do(t, "GET", "/nowhere", "", "")
	f.metrics.CountEvents(event.Event{Type: event.SLABreach}, event.Event{Type: event.SLABreach})
	f.metrics.AlertDeliveryFailed("slack")
	if _, err := f.eng.WatchdogPass(t.Context(), 30*time.Minute); err != nil {
		t.Fatal(err)
	}

	wantError(t, f.do(t, "GET", "/metrics", "", ""), http.StatusUnauthorized, "unauthorized")
	rec := f.do(t, "GET", "/metrics", readerSecret, "")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	text := rec.Body.String()
	for _, line := range []string{
		`interlock_sensor_writes_total{changed="true",pipeline="orders"} 1`,
		`interlock_sensor_writes_total{changed="false",pipeline="orders"} 1`,
		`interlock_sensor_write_seconds_count 2`,
		`interlock_http_requests_total{code="200",route="PUT /v1/pipelines/{id}/sensors/{key}"} 2`,
		`interlock_http_requests_total{code="404",route="GET /v1/pipelines/{id}"} 1`,
		`interlock_http_requests_total{code="404",route="unmatched"} 1`,
		`interlock_http_requests_total{code="401",route="GET /metrics"} 1`,
		`interlock_runs{state="TRIGGERING"} 1`,
		`interlock_runs{state="RUNNING"} 0`,
		`interlock_events_total{type="SLA_BREACH"} 2`,
		`interlock_events_total{type="JOB_FAILED"} 0`,
		`interlock_watchdog_last_pass_timestamp_seconds 1.7731296e+09`,
		`interlock_alert_delivery_failures_total{sink="slack"} 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(text, line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

// TestMetricsAreOpenWithoutTokens, the API then being loopback-only.
func TestMetricsAreOpenWithoutTokens(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	rec := f.do(t, "GET", "/metrics", "", "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "interlock_watchdog_last_pass_timestamp_seconds 0") {
		t.Fatalf("/metrics: %d\n%s", rec.Code, rec.Body)
	}
}

// TestMetricsExistBeforeTheirFirstOccurrence: a sink's failure counter is
// exported at zero from the start, so an alert on its rate works before
// the first failure.
func TestMetricsExistBeforeTheirFirstOccurrence(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.metrics.KnowSinks("slack", "ops-webhook")
	text := f.do(t, "GET", "/metrics", "", "").Body.String()
	for _, line := range []string{
		`interlock_alert_delivery_failures_total{sink="slack"} 0`,
		`interlock_alert_delivery_failures_total{sink="ops-webhook"} 0`,
		`interlock_events_total{type="JOB_FAILED"} 0`,
		`interlock_runs{state="RUNNING"} 0`,
		`interlock_http_requests_total{code="200",route="PUT /v1/pipelines/{id}/sensors/{key}"} 0`,
		`interlock_http_requests_total{code="200",route="GET /v1/events"} 0`,
		`interlock_sensor_writes_total{changed="true",pipeline="orders"} 0`,
		`interlock_sensor_writes_total{changed="false",pipeline="orders"} 0`,
	} {
		if !strings.Contains(text, line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}
}
