package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzPutSensor sends random bodies to random keys of the sensor route
// of a real engine: no panic, never a 5xx, always the JSON error shape for
// a refusal, and a 200 only for a body that is a JSON object.
func FuzzPutSensor(f *testing.F) {
	for _, seed := range []struct{ key, body string }{
		{"orders-landed", `{}`},
		{"orders-landed", `{"date": "2026-03-09"}`},
		{"k", `{"data": {"count": 5}}`},
		{"k", `{"data": {"count": 5}, "other": 1}`},
		{"k", `{"count": 1e400}`},
		{"k", `{"count": -0.0, "n": 1000000, "m": 1e6}`},
		{"k", `{"date": "2026-13-01"}`},
		{"k", `{"date": "20260310", "hour": 7}`},
		{"k", `{"date": "2026-03-10", "hour": "24"}`},
		{"k", `{"date": null}`},
		{"k", `{"hour": "07"}`},
		{"k", `[{}]`},
		{"k", `null`},
		{"k", `{"a": "\u0000\ud800"}`},
		{"k", `{"a": 1} trailing`},
		{"k", strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat(`}`, 40)},
		{"k", strings.Repeat(`[`, 10000)},
		{"hourly-status#20260310T07", `{"complete": true}`},
		{"../../etc", `{}`},
		{"", `{}`},
		{"\x00", `{}`},
		{strings.Repeat("k", 257), `{}`},
		{"k", "\xff\xfe{}"},
	} {
		f.Add(seed.key, []byte(seed.body))
	}
	fx := newFixture(f, fixtureOptions{})
	f.Fuzz(func(t *testing.T, key string, body []byte) {
		req := httptest.NewRequest("PUT", "/v1/pipelines/orders/sensors/k", bytes.NewReader(body))
		// Set the escaped path directly, as a client would send it, so
		// any key (slashes, dots, control bytes) reaches the router.
		req.URL = &url.URL{Path: "/v1/pipelines/orders/sensors/" + key, RawPath: "/v1/pipelines/orders/sensors/" + url.PathEscape(key)}
		rec := httptest.NewRecorder()
		fx.h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("key %q body %q: %d %s", key, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e apiErr
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("key %q body %q: %d without the error shape: %s", key, body, rec.Code, rec.Body)
			}
			return
		}
		if rec.Code == http.StatusOK {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
				t.Fatalf("key %q: accepted a body that is not a JSON object: %q", key, body)
			}
		}
	})
}
