package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestRequestLog: one line per request with method, route pattern,
// status, duration and the token's name; never a body or a header.
func TestRequestLog(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/k", writerSecret, `{"note": "body-canary-7d1e"}`), http.StatusOK)
	f.do(t, "GET", "/v1/pipelines/orders/runs?limit=oops-query-canary", readerSecret, "")

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(f.logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["msg"] == "http request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d request log lines, want 2: %v", len(lines), lines)
	}
	put := lines[0]
	if put["method"] != "PUT" || put["route"] != "PUT /v1/pipelines/{id}/sensors/{key}" || put["status"] != float64(200) || put["token"] != "etl" || put["duration"] == nil {
		t.Fatalf("request log %v", put)
	}
	if get := lines[1]; get["route"] != "GET /v1/pipelines/{id}/runs" || get["status"] != float64(400) || get["token"] != "dash" {
		t.Fatalf("request log %v", get)
	}
	for _, canary := range []string{"body-canary", "query-canary", "Authorization", "Bearer"} {
		if strings.Contains(f.logs.String(), canary) {
			t.Errorf("the log contains %q", canary)
		}
	}
}

// TestConcurrentWritersOverHTTP: racing writers of one trigger sensor over
// real connections are all acknowledged and start one run.
func TestConcurrentWritersOverHTTP(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	var wg sync.WaitGroup
	codes := make(chan int, 20)
	for i := range 20 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(t.Context(), "PUT", srv.URL+"/v1/pipelines/orders/sensors/orders-landed", strings.NewReader(fmt.Sprintf(`{"batch": %d}`, i)))
			req.Header.Set("Authorization", "Bearer "+writerSecret)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/v1/pipelines/orders", nil)
			req.Header.Set("Authorization", "Bearer "+readerSecret)
			if resp, err := srv.Client().Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Fatalf("a writer got %d", c)
		}
	}
	runs := want[runList](t, f.do(t, "GET", "/v1/pipelines/orders/runs", readerSecret, ""), http.StatusOK)
	if len(runs.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs.Runs))
	}
}
