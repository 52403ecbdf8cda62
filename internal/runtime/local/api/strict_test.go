package api_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// TestEmptyQueryValuesAreRefused: ?pipeline= and ?pipeline (no '=') were
// read as "no filter", so ?pipeline=$UNSET answered with every pipeline's
// events; ?type=, likewise. Every parameter given empty is a 400 naming
// it, on every route that takes parameters.
func TestEmptyQueryValuesAreRefused(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	makeEvents(t, f, 1)
	for _, c := range []struct{ target, mentions string }{
		{"/v1/events?pipeline=", `query parameter "pipeline" is empty`},
		{"/v1/events?pipeline", `query parameter "pipeline" is empty`},
		{"/v1/events?pipeline=orders&pipeline=", `"pipeline"`},
		{"/v1/events?type=", `query parameter "type" is empty`},
		{"/v1/events?type", `query parameter "type" is empty`},
		{"/v1/events?type=,", `names an empty event type`},
		{"/v1/events?type=%20", `names an empty event type`},
		{"/v1/events?type=JOB_FAILED,", `names an empty event type`},
		{"/v1/events?type=JOB_FAILED,,SLA_BREACH", `names an empty event type`},
		{"/v1/events?type=JOB_FAILED&type=", `query parameter "type" is empty`},
		{"/v1/events?since=", `query parameter "since" is empty`},
		{"/v1/events?after=", `query parameter "after" is empty`},
		{"/v1/events?limit=", `query parameter "limit" is empty`},
		{"/v1/pipelines/orders/runs?period=", `query parameter "period" is empty`},
		{"/v1/pipelines/orders/runs?limit", `query parameter "limit" is empty`},
		{"/v1/pipelines/orders/explain?period=", `query parameter "period" is empty`},
	} {
		t.Run(c.target, func(t *testing.T) {
			msg := wantError(t, f.do(t, "GET", c.target, "", ""), http.StatusBadRequest, "bad_request")
			if !strings.Contains(msg, c.mentions) {
				t.Fatalf("message %q does not mention %q", msg, c.mentions)
			}
		})
	}
	// Given values still filter.
	all := want[eventPage](t, f.do(t, "GET", "/v1/events", "", ""), http.StatusOK)
	one := want[eventPage](t, f.do(t, "GET", "/v1/events?pipeline=orders&type=PIPELINE_PAUSED,PIPELINE_RESUMED", "", ""), http.StatusOK)
	if len(one.Events) != 2 || len(all.Events) <= len(one.Events) {
		t.Fatalf("filtered %d of %d events", len(one.Events), len(all.Events))
	}
}

// TestOperatorBodiesAreReadStrictly: rerun, pause and resume bodies were
// read by plain encoding/json, which kept the last of two keys, matched
// field names in any case and turned invalid UTF-8 into U+FFFD before the
// reason was checked. They are read as strictly as sensor bodies, with
// field names exactly as documented, and a refusal decides nothing.
func TestOperatorBodiesAreReadStrictly(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, c := range []struct{ route, body, mentions string }{
		{"reruns", `{"period": "2026-03-09", "period": "2026-03-10"}`, `duplicate key "period" at period`},
		{"reruns", `{"PERIOD": "2026-03-09"}`, `unknown field "PERIOD": field names are case-sensitive (did you mean "period"?)`},
		{"reruns", `{"Period": "2026-03-09", "reason": "x"}`, `unknown field "Period"`},
		{"reruns", `{"period": "2026-03-09", "Reason": "x"}`, `did you mean "reason"?`},
		{"reruns", "{\"period\": \"2026-03-09\", \"reason\": \"a\xffb\"}", `not valid UTF-8 at byte`},
		{"reruns", `{"period": "2026-03-09", "reason": "\udc00"}`, `half of a UTF-16 surrogate pair`},
		{"reruns", `{"period": "2026-03-09", "reason\u0000": "x"}`, `holds a control character`},
		{"reruns", `{"period": "2026-03-09", "extra": {"a": 1, "a": 2}}`, `duplicate key "a" at extra.a`},
		{"reruns", `{"period": "2026-03-09", "force": true}`, `unknown field "force" (known: period, reason)`},
		{"pause", `{"until": "2026-03-10T09:00:00Z", "until": "2026-03-10T10:00:00Z"}`, `duplicate key "until"`},
		{"pause", `{"Until": "2026-03-10T09:00:00Z"}`, `did you mean "until"?`},
		{"pause", "{\"until\": \"2026-03-10T09:00:00Z\xc3\"}", `not valid UTF-8`},
		{"resume", `{"a": 1, "a": 2}`, `duplicate key "a"`},
		{"resume", `{"x": 1}`, `unknown field "x": this route takes an empty object`},
	} {
		t.Run(c.route+" "+c.body, func(t *testing.T) {
			msg := wantError(t, f.do(t, "POST", "/v1/pipelines/orders/"+c.route, "", c.body), http.StatusBadRequest, "invalid_json")
			if !strings.Contains(msg, c.mentions) {
				t.Fatalf("message %q does not mention %q", msg, c.mentions)
			}
		})
	}
	if evs, _ := f.st.EventList(t.Context(), store.EventListParams{}); len(evs.Events) != 0 {
		t.Fatalf("refused bodies decided something: %v", evs)
	}
	noRuns(t, f, "orders")
	// Exactly spelt bodies still work, escapes and all.
	got := want[rerunAnswer](t, f.do(t, "POST", "/v1/pipelines/orders/reruns", "", `{"period": "2026-03-09", "reason": "re\u0070rocess"}`), http.StatusOK)
	if !got.Accepted || got.Period != "2026-03-09" {
		t.Fatalf("rerun: %+v", got)
	}
	evsPage, _ := f.st.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.RerunAccepted}})
	evs := evsPage.Events
	if len(evs) != 1 || !strings.Contains(evs[0].Message, "reason: reprocess") {
		t.Fatalf("rerun events %v", evs)
	}
}

// TestSensorKeysRefuseControlCharacters: a control character in a key of
// the body, at any level, or in the key of the URL, is a 400; in a string
// value it is data, stored as sent.
func TestSensorKeysRefuseControlCharacters(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, body := range []string{
		`{"a\u0000b": 1}`,
		`{"count\n": 5}`,
		`{"data": {"ok": true, "\u001b[2J": 1}}`,
		`{"runs": [{"id\u007f": 1}]}`,
	} {
		msg := wantError(t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/k", "", body), http.StatusBadRequest, "invalid_sensor")
		if !strings.Contains(msg, "holds a control character") {
			t.Errorf("%s: message %q", body, msg)
		}
	}
	for _, key := range []string{"a\x00b", "k\n", "k\x1b", "k\u0085"} {
		req := httptest.NewRequest("PUT", "/v1/pipelines/orders/sensors/k", strings.NewReader(`{}`))
		req.URL = &url.URL{Path: "/v1/pipelines/orders/sensors/" + key, RawPath: "/v1/pipelines/orders/sensors/" + url.PathEscape(key)}
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		wantError(t, rec, http.StatusBadRequest, "invalid_sensor")
	}
	if list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/orders/sensors", "", ""), http.StatusOK); len(list.Sensors) != 0 {
		t.Fatalf("refused writes were stored: %+v", list.Sensors)
	}
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/k", "", `{"note": "a\u0000b\nc"}`), http.StatusOK)
	list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/orders/sensors", "", ""), http.StatusOK)
	if len(list.Sensors) != 1 || string(list.Sensors[0].Data) != `{"note":"a\u0000b\nc"}` {
		t.Fatalf("stored %+v", list.Sensors)
	}
}
