package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPanicsAreAnswered500: a handler's panic is logged with its route
// and answered in the error shape; the server goes on serving. A panic
// after the response started is logged and the response aborted
// (http.ErrAbortHandler, which net/http handles quietly), so the client
// does not take a cut answer for a whole one.
func TestPanicsAreAnswered500(t *testing.T) {
	var logs bytes.Buffer
	s := &server{log: slog.New(slog.NewJSONHandler(&logs, nil)), metrics: NewMetrics(nil), auth: &authenticator{}}
	mux := http.NewServeMux()
	mux.Handle("GET /boom", s.route("", func(http.ResponseWriter, *http.Request) error { panic("boom") }))
	mux.Handle("GET /late", s.route("", func(w http.ResponseWriter, _ *http.Request) error {
		_, _ = w.Write([]byte("partial"))
		panic("late")
	}))
	mux.Handle("GET /abort", s.route("", func(http.ResponseWriter, *http.Request) error { panic(http.ErrAbortHandler) }))
	mux.Handle("GET /fine", s.route("", func(w http.ResponseWriter, _ *http.Request) error {
		writeJSON(w, http.StatusOK, statusBody{Status: "ok"})
		return nil
	}))
	h := s.outer(mux)
	serve := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}

	rec := serve("/boom")
	var body ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 500 || body.Error.Code != codeInternal {
		t.Fatalf("panic answered %d %s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "boom") {
		t.Fatalf("the panic value reached the client: %s", rec.Body)
	}
	if !strings.Contains(logs.String(), `"msg":"panic serving request"`) || !strings.Contains(logs.String(), `"panic":"boom"`) ||
		!strings.Contains(logs.String(), `"route":"GET /boom"`) || !strings.Contains(logs.String(), `"status":500`) {
		t.Fatalf("panic not logged with its route and status:\n%s", logs.String())
	}

	for _, path := range []string{"/late", "/abort"} {
		func() {
			defer func() {
				if v := recover(); v != http.ErrAbortHandler {
					t.Fatalf("%s: recovered %v, want http.ErrAbortHandler for net/http", path, v)
				}
			}()
			serve(path)
		}()
	}
	if !strings.Contains(logs.String(), `"panic":"late"`) {
		t.Fatalf("late panic not logged:\n%s", logs.String())
	}

	if rec := serve("/fine"); rec.Code != 200 {
		t.Fatalf("after panics: %d %s", rec.Code, rec.Body)
	}
}

// TestNilMetricsAreNoOps: optional callers (the alert deliverer) may hold
// a nil *Metrics.
func TestNilMetricsAreNoOps(t *testing.T) {
	var m *Metrics
	m.CountEvents()
	m.AlertDeliveryFailed("slack")
	m.ObserveSensorWrite("p", true, time.Millisecond)
	m.ObserveWatchdogPass(time.Time{}, true)
	m.countRequest("r", 200)
	if err := m.Observe(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
}
