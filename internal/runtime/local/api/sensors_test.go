package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type sensorWritten struct {
	PipelineID string    `json:"pipelineId"`
	Key        string    `json:"key"`
	Changed    bool      `json:"changed"`
	Period     string    `json:"period"`
	ReceivedAt time.Time `json:"receivedAt"`
}

type sensorList struct {
	PipelineID string `json:"pipelineId"`
	Sensors    []struct {
		Key       string          `json:"key"`
		Data      json.RawMessage `json:"data"`
		Version   int64           `json:"version"`
		ChangedAt time.Time       `json:"changedAt"`
		WrittenAt time.Time       `json:"writtenAt"`
	} `json:"sensors"`
}

func TestPutSensorAcknowledgesTheDurableWrite(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	got := want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/row-count", "", `{"count": 5}`), http.StatusOK)
	if got != (sensorWritten{PipelineID: "orders", Key: "row-count", Changed: true, Period: "2026-03-10", ReceivedAt: t0}) {
		t.Fatalf("answer %+v", got)
	}
	// Acknowledged means stored: the store has it, before any other call.
	s, err := f.st.SensorGet(t.Context(), "orders", "row-count")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Data.Get("count"); v.String() != "5" {
		t.Fatalf("stored count %v", v)
	}

	f.clk.Advance(time.Minute)
	again := want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/row-count", "", `{"count": 5}`), http.StatusOK)
	if again.Changed || !again.ReceivedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("identical re-write: %+v, want changed false, receivedAt now", again)
	}

	// The period comes from the sensor's date field when it has one.
	dated := want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/row-count", "", `{"count": 5, "date": "2026-03-09"}`), http.StatusOK)
	if dated.Period != "2026-03-09" || !dated.Changed {
		t.Fatalf("dated write %+v", dated)
	}
}

func TestFlatAndWrappedSensorBodiesAreStoredTheSame(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/flat", "", `{"count": 5, "meta": {"a": [1, 2]}}`), http.StatusOK)
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/wrapped", "", `{"data": {"count": 5, "meta": {"a": [1, 2]}}}`), http.StatusOK)
	list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/orders/sensors", "", ""), http.StatusOK)
	if len(list.Sensors) != 2 || list.Sensors[0].Key != "flat" || list.Sensors[1].Key != "wrapped" {
		t.Fatalf("sensors %+v", list.Sensors)
	}
	if !bytes.Equal(list.Sensors[0].Data, list.Sensors[1].Data) {
		t.Fatalf("flat %s and wrapped %s differ", list.Sensors[0].Data, list.Sensors[1].Data)
	}
	// The same content in the other shape is not new data.
	again := want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/flat", "", `{"data": {"count": 5, "meta": {"a": [1, 2]}}}`), http.StatusOK)
	if again.Changed {
		t.Fatal("wrapped re-write of a flat sensor counted as new data")
	}
}

func TestPutSensorRefusesBadInput(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, tc := range []struct {
		name, path, body string
		status           int
		code, mentions   string
	}{
		{"invalid JSON", "/v1/pipelines/orders/sensors/k", `{"count": `, 400, "invalid_sensor", "invalid JSON at byte 10"},
		{"not an object", "/v1/pipelines/orders/sensors/k", `[1, 2]`, 400, "invalid_sensor", "must be a JSON object"},
		{"a string", "/v1/pipelines/orders/sensors/k", `"ready"`, 400, "invalid_sensor", "must be a JSON object"},
		{"empty body", "/v1/pipelines/orders/sensors/k", ``, 400, "invalid_sensor", "body is empty"},
		{"trailing content", "/v1/pipelines/orders/sensors/k", `{"a": 1} {"b": 2}`, 400, "invalid_sensor", "after top-level value"},
		{"bad date", "/v1/pipelines/orders/sensors/k", `{"date": "2026-13-01"}`, 400, "invalid_sensor", `date "2026-13-01" does not exist`},
		{"hour without date", "/v1/pipelines/orders/sensors/k", `{"hour": "07"}`, 400, "invalid_sensor", `"hour" given without "date"`},
		{"invalid UTF-8 in a string", "/v1/pipelines/orders/sensors/k", "{\"status\": \"re\xffdy\"}", 400, "invalid_sensor", "not valid UTF-8 at byte 14"},
		{"invalid UTF-8 in a key", "/v1/pipelines/orders/sensors/k", "{\"st\xe9tus\": \"ready\"}", 400, "invalid_sensor", "not valid UTF-8 at byte 4"},
		{"invalid UTF-8 outside strings", "/v1/pipelines/orders/sensors/k", "\xef\xbb{}", 400, "invalid_sensor", "not valid UTF-8 at byte 0"},
		{"lone surrogate escape", "/v1/pipelines/orders/sensors/k", `{"status": "\udc00"}`, 400, "invalid_sensor", `\udc00 at byte 12 is half of a UTF-16 surrogate pair`},
		{"duplicate key", "/v1/pipelines/orders/sensors/k", `{"count": 1, "count": 2}`, 400, "invalid_sensor", `duplicate key "count" at count`},
		{"duplicate key, wrapped", "/v1/pipelines/orders/sensors/k", `{"data": {"count": 1, "count": 2}}`, 400, "invalid_sensor", `duplicate key "count" at data.count`},
		{"duplicate wrapper", "/v1/pipelines/orders/sensors/k", `{"data": {"count": 1}, "data": {"count": 2}}`, 400, "invalid_sensor", `duplicate key "data" at data`},
		{"duplicate key, nested", "/v1/pipelines/orders/sensors/k", `{"data": {"runs": [{"id": 1, "id": 2}]}}`, 400, "invalid_sensor", `duplicate key "id" at data.runs[0].id`},
		{"duplicate key, escaped", "/v1/pipelines/orders/sensors/k", `{"date": "2026-03-09", "\u0064ate": "2026-03-10"}`, 400, "invalid_sensor", `duplicate key "date" at date`},
		{"key too long", "/v1/pipelines/orders/sensors/" + strings.Repeat("k", 300), `{}`, 400, "invalid_sensor", "longer than 256"},
		{"unknown query parameter", "/v1/pipelines/orders/sensors/k?dryrun=1", `{}`, 400, "bad_request", `"dryrun"`},
		{"unknown pipeline", "/v1/pipelines/nope/sensors/k", `{}`, 404, "unknown_pipeline", `"nope"`},
		{"over maxBodyBytes", "/v1/pipelines/orders/sensors/k", `{"pad": "` + strings.Repeat("x", 1100) + `"}`, 413, "body_too_large", "1024"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := wantError(t, f.do(t, "PUT", tc.path, "", tc.body), tc.status, tc.code)
			if !strings.Contains(msg, tc.mentions) {
				t.Fatalf("message %q does not mention %q", msg, tc.mentions)
			}
		})
	}
	// Nothing of it was stored.
	list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/orders/sensors", "", ""), http.StatusOK)
	if len(list.Sensors) != 0 {
		t.Fatalf("refused writes stored: %+v", list.Sensors)
	}
}

// TestBodyLimitIsExact: a body of exactly maxBodyBytes is read; one byte
// more is 413, over a real connection too.
func TestBodyLimitIsExact(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	body := func(n int) string {
		const head, tail = `{"pad": "`, `"}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/k", "", body(1024)), http.StatusOK)
	wantError(t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/k", "", body(1025)), 413, "body_too_large")

	srv := httptest.NewServer(f.h)
	defer srv.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "PUT", srv.URL+"/v1/pipelines/orders/sensors/k", strings.NewReader(body(2<<20)))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiErr
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 413 || e.Error.Code != "body_too_large" {
		t.Fatalf("2 MiB body: %d %+v", resp.StatusCode, e)
	}
}

// TestSensorKeysAreUnescaped: per-period keys carry '#', which clients
// send escaped.
func TestSensorKeysAreUnescaped(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	got := want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/hourly-status%2320260309T07", "", `{"ok": true}`), http.StatusOK)
	if got.Key != "hourly-status#20260309T07" || got.Period != "2026-03-09T07" {
		t.Fatalf("answer %+v", got)
	}
}

func TestListSensorsOfUnknownPipeline(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	wantError(t, f.do(t, "GET", "/v1/pipelines/nope/sensors", "", ""), 404, "unknown_pipeline")
}
