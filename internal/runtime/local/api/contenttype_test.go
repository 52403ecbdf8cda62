package api_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"
)

// acceptedContentTypes are the ways to declare a JSON body; "" sends no
// Content-Type at all (curl -d, many scripts).
var acceptedContentTypes = []string{
	"",
	"application/json",
	"application/json; charset=utf-8",
	"Application/JSON; Charset=UTF-8",
	`application/json; charset="utf-8"`,
	"application/json; version=2",
	"application/vnd.interlock.sensor+json",
	"application/merge-patch+json; charset=utf-8",
}

// refusedContentTypes are bodies declared as something else, or declared
// in a way that does not parse.
var refusedContentTypes = []struct{ contentType, mentions string }{
	{"text/plain", `"text/plain" is not a JSON media type`},
	{"text/plain; charset=utf-8", `"text/plain" is not a JSON media type`},
	{"application/x-www-form-urlencoded", `"application/x-www-form-urlencoded" is not a JSON media type`},
	{"multipart/form-data; boundary=x", `"multipart/form-data" is not a JSON media type`},
	{"application/xml", `"application/xml" is not a JSON media type`},
	{"text/xml", `"text/xml" is not a JSON media type`},
	{"text/json", `"text/json" is not a JSON media type`},
	{"application/jsonp", `"application/jsonp" is not a JSON media type`},
	{"application/+json", `"application/+json" is not a JSON media type`},
	{"application/json; charset=latin1", `charset "latin1"`},
	{"application/json; charset=utf-16", `charset "utf-16"`},
	{"application/json; charset=utf8", `charset "utf8"`},
	{"application/json, text/plain", "does not parse"},
	{"application/json; charset", "does not parse"},
	{"json", `"json" is not a JSON media type`},
}

func contentType(ct string) http.Header {
	h := http.Header{}
	if ct != "" {
		h.Set("Content-Type", ct)
	}
	return h
}

// TestSensorContentType: a sensor body is JSON, declared as such or not
// declared; a form, text or XML body is refused with 415 even when it
// happens to parse as JSON, and nothing is stored.
func TestSensorContentType(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, ct := range acceptedContentTypes {
		t.Run("accepts "+ct, func(t *testing.T) {
			want[sensorWritten](t, f.doWith(t, "PUT", "/v1/pipelines/orders/sensors/accepted", contentType(ct), `{"count": 5}`), http.StatusOK)
		})
	}
	for _, c := range refusedContentTypes {
		t.Run("refuses "+c.contentType, func(t *testing.T) {
			msg := wantError(t, f.doWith(t, "PUT", "/v1/pipelines/orders/sensors/refused", contentType(c.contentType), `{"count": 5}`), http.StatusUnsupportedMediaType, "unsupported_media_type")
			if !strings.Contains(msg, c.mentions) {
				t.Fatalf("message %q does not mention %q", msg, c.mentions)
			}
		})
	}
	t.Run("accepts an empty Content-Type", func(t *testing.T) {
		h := http.Header{"Content-Type": {" "}}
		want[sensorWritten](t, f.doWith(t, "PUT", "/v1/pipelines/orders/sensors/accepted", h, `{"count": 5}`), http.StatusOK)
	})
	t.Run("refuses two Content-Types", func(t *testing.T) {
		h := http.Header{"Content-Type": {"application/json", "text/plain"}}
		msg := wantError(t, f.doWith(t, "PUT", "/v1/pipelines/orders/sensors/refused", h, `{"count": 5}`), http.StatusUnsupportedMediaType, "unsupported_media_type")
		if !strings.Contains(msg, "given 2 times") {
			t.Fatalf("message %q", msg)
		}
	})
	t.Run("refuses a form body", func(t *testing.T) {
		wantError(t, f.doWith(t, "PUT", "/v1/pipelines/orders/sensors/refused", contentType("application/x-www-form-urlencoded"), `count=5`), http.StatusUnsupportedMediaType, "unsupported_media_type")
	})
	list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/orders/sensors", "", ""), http.StatusOK)
	if len(list.Sensors) != 1 || list.Sensors[0].Key != "accepted" {
		t.Fatalf("sensors %+v, want only the accepted one", list.Sensors)
	}
}

// TestJSONBodyRoutesShareTheContentTypeRule: reruns, pause and resume take
// JSON bodies under the same rule as sensors, and a refused request
// changes nothing.
func TestJSONBodyRoutesShareTheContentTypeRule(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	routes := []struct{ path, body string }{
		{"/v1/pipelines/orders/reruns", `{"period": "2026-03-09"}`},
		{"/v1/pipelines/orders/pause", `{}`},
		{"/v1/pipelines/orders/resume", `{}`},
		{"/v1/pipelines/orders/resume", ``}, // no body, still a declared type
	}
	for _, r := range routes {
		for _, c := range refusedContentTypes {
			t.Run(r.path+" refuses "+c.contentType, func(t *testing.T) {
				msg := wantError(t, f.doWith(t, "POST", r.path, contentType(c.contentType), r.body), http.StatusUnsupportedMediaType, "unsupported_media_type")
				if !strings.Contains(msg, c.mentions) {
					t.Fatalf("message %q does not mention %q", msg, c.mentions)
				}
			})
		}
	}
	if v := want[pipelineView](t, f.do(t, "GET", "/v1/pipelines/orders", "", ""), http.StatusOK); v.Paused {
		t.Fatal("a refused pause paused the pipeline")
	}
	if evs := want[eventPage](t, f.do(t, "GET", "/v1/events", "", ""), http.StatusOK); len(evs.Events) != 0 {
		t.Fatalf("refused requests recorded events: %+v", evs.Events)
	}
	for _, r := range routes {
		for _, ct := range acceptedContentTypes {
			if rec := f.doWith(t, "POST", r.path, contentType(ct), r.body); rec.Code != http.StatusOK {
				t.Fatalf("%s with Content-Type %q: %d %s", r.path, ct, rec.Code, rec.Body)
			}
		}
	}
}

// TestBodyRoutesRefuseContentEncodings: the API decodes no content coding,
// so a body declared gzip (compressed or not), deflate, br or any other
// coding is refused with 415 naming the header, on every route that takes
// a body, and nothing is stored or changed; identity, or no header, is a
// plain body.
func TestBodyRoutesRefuseContentEncodings(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"count": 5}`))
	_ = zw.Close()
	routes := []struct{ method, path, body string }{
		{"PUT", "/v1/pipelines/orders/sensors/encoded", `{"count": 5}`},
		{"PUT", "/v1/pipelines/orders/sensors/encoded", gz.String()},
		{"POST", "/v1/pipelines/orders/reruns", `{"period": "2026-03-09"}`},
		{"POST", "/v1/pipelines/orders/pause", `{}`},
		{"POST", "/v1/pipelines/orders/resume", `{}`},
		{"POST", "/v1/pipelines/orders/resume", ``},
	}
	refused := []struct {
		header []string
		names  string
	}{
		{[]string{"gzip"}, `"gzip"`},
		{[]string{"GZIP"}, `"GZIP"`},
		{[]string{"x-gzip"}, `"x-gzip"`},
		{[]string{"deflate"}, `"deflate"`},
		{[]string{"br"}, `"br"`},
		{[]string{"zstd"}, `"zstd"`},
		{[]string{"identity, gzip"}, `"gzip"`},
		{[]string{"identity", "gzip"}, `"gzip"`},
		{[]string{"made-up"}, `"made-up"`},
	}
	for _, r := range routes {
		for _, c := range refused {
			h := http.Header{"Content-Type": {"application/json"}, "Content-Encoding": c.header}
			rec := f.doWith(t, r.method, r.path, h, r.body)
			msg := wantError(t, rec, http.StatusUnsupportedMediaType, "unsupported_media_type")
			if !strings.Contains(msg, "Content-Encoding") || !strings.Contains(msg, c.names) {
				t.Errorf("%s %s, Content-Encoding %q: message %q does not name the header and %s", r.method, r.path, c.header, msg, c.names)
			}
			if got := rec.Header().Get("Accept-Encoding"); got != "identity" {
				t.Errorf("%s %s, Content-Encoding %q: Accept-Encoding %q, want identity", r.method, r.path, c.header, got)
			}
		}
	}
	if list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/orders/sensors", "", ""), http.StatusOK); len(list.Sensors) != 0 {
		t.Fatalf("an encoded body was stored: %+v", list.Sensors)
	}
	if v := want[pipelineView](t, f.do(t, "GET", "/v1/pipelines/orders", "", ""), http.StatusOK); v.Paused {
		t.Fatal("a refused pause paused the pipeline")
	}
	if evs := want[eventPage](t, f.do(t, "GET", "/v1/events", "", ""), http.StatusOK); len(evs.Events) != 0 {
		t.Fatalf("refused requests recorded events: %+v", evs.Events)
	}
	for _, ce := range [][]string{{"identity"}, {"Identity"}, {""}, {"identity, identity"}} {
		h := http.Header{"Content-Encoding": ce}
		want[sensorWritten](t, f.doWith(t, "PUT", "/v1/pipelines/orders/sensors/plain", h, `{"count": 5}`), http.StatusOK)
	}
}
