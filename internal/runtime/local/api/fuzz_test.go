package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzPutSensor sends random bodies, declared with random Content-Types,
// to random keys of the sensor route of a real engine: no panic, never a
// 5xx, always the JSON error shape for a refusal, and a 200 only for a
// UTF-8 body that is a JSON object with no key given twice, sent as JSON
// (or with no Content-Type).
func FuzzPutSensor(f *testing.F) {
	for _, seed := range []struct{ key, contentType, body string }{
		{"orders-landed", "", `{}`},
		{"orders-landed", "", `{"date": "2026-03-09"}`},
		{"k", "", `{"data": {"count": 5}}`},
		{"k", "", `{"data": {"count": 5}, "other": 1}`},
		{"k", "", `{"count": 1e400}`},
		{"k", "", `{"count": -0.0, "n": 1000000, "m": 1e6}`},
		{"k", "", `{"date": "2026-13-01"}`},
		{"k", "", `{"date": "20260310", "hour": 7}`},
		{"k", "", `{"date": "2026-03-10", "hour": "24"}`},
		{"k", "", `{"date": null}`},
		{"k", "", `{"hour": "07"}`},
		{"k", "", `[{}]`},
		{"k", "", `null`},
		{"k", "", `{"a": "\u0000\ud800"}`},
		{"k", "", `{"a": 1} trailing`},
		{"k", "", strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat(`}`, 40)},
		{"k", "", strings.Repeat(`[`, 10000)},
		{"hourly-status#20260310T07", "", `{"complete": true}`},
		{"../../etc", "", `{}`},
		{"", "", `{}`},
		{"\x00", "", `{}`},
		{strings.Repeat("k", 257), "", `{}`},
		{"k", "", "\xff\xfe{}"},
		// Text encoding: invalid UTF-8 inside strings and keys, surrogate
		// escapes alone and paired.
		{"k", "", "{\"status\": \"re\xffdy\"}"},
		{"k", "", "{\"st\xe9tus\": 1}"},
		{"k", "", "{\"s\": \"\xed\xa0\x80\"}"},
		{"k", "", `{"s": "\udc00", "t": "\ud83d\ude00"}`},
		{"k", "", `{"s": "\\ud800", "t": "\"\ud800"}`},
		// Keys given twice: flat, wrapped, the wrapper itself, nested,
		// spelt with an escape.
		{"k", "", `{"count": 1, "count": 2}`},
		{"k", "", `{"data": {"count": 1, "count": 2}}`},
		{"k", "", `{"data": {"count": 1}, "data": {"count": 2}}`},
		{"k", "", `{"data": 5, "data": {"count": 5}}`},
		{"k", "", `{"a": [{"id": 1}, {"id": 2, "id": 3}]}`},
		{"k", "", `{"date": "2026-03-09", "\u0064ate": "2026-03-10"}`},
		// Control characters: refused in keys, kept in string values.
		{"k", "", `{"a\u0000b": 1}`},
		{"k", "", `{"data": {"n\n": 1}}`},
		{"k", "", `{"note": "a\u0000b"}`},
		// Periods: beyond the bounds, and suffixes shaped like periods.
		{"k", "", `{"date": "9999-12-31"}`},
		{"k", "", `{"date": "1969-12-31"}`},
		{"k#99991231", "", `{}`},
		{"k#20260230", "", `{}`},
		{"k#20260310T24", "", `{}`},
		{"k#eu", "", `{}`},
		// Content-Types: JSON in its forms, and the ones refused.
		{"k", "application/json", `{"count": 5}`},
		{"k", "application/json; charset=utf-8", `{"count": 5}`},
		{"k", "application/vnd.x+json", `{"count": 5}`},
		{"k", "application/json; charset=latin1", `{"count": 5}`},
		{"k", "text/plain", `{"count": 5}`},
		{"k", "application/x-www-form-urlencoded", `count=5`},
		{"k", "application/xml", `<count>5</count>`},
		{"k", "application/json, text/plain", `{"count": 5}`},
	} {
		f.Add(seed.key, seed.contentType, []byte(seed.body))
	}
	fx := newFixture(f, fixtureOptions{})
	f.Fuzz(func(t *testing.T, key, contentType string, body []byte) {
		req := httptest.NewRequest("PUT", "/v1/pipelines/orders/sensors/k", bytes.NewReader(body))
		// Set the escaped path directly, as a client would send it, so
		// any key (slashes, dots, control bytes) reaches the router.
		req.URL = &url.URL{Path: "/v1/pipelines/orders/sensors/" + key, RawPath: "/v1/pipelines/orders/sensors/" + url.PathEscape(key)}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
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
			if !utf8.Valid(body) {
				t.Fatalf("key %q: accepted a body that is not UTF-8: %q", key, body)
			}
			if path, dup := repeatedKey(body); dup {
				t.Fatalf("key %q: accepted a body with a key given twice (%s): %q", key, path, body)
			}
			if !declaredJSON(contentType) {
				t.Fatalf("key %q: accepted a body declared as %q", key, contentType)
			}
			if k, bad := controlKey(body); bad {
				t.Fatalf("key %q: accepted a body with a control character in the key %q", key, k)
			}
		}
	})
}

// repeatedKey reports whether some object in a valid JSON text has a key
// twice, and where; the test's own reading, independent of the server's.
func repeatedKey(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		seen     map[string]bool
		isObject bool
		wantKey  bool
	}
	var stack []frame
	var path []string
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return "", false
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].isObject && stack[top].wantKey {
			if k, ok := tok.(string); ok {
				if stack[top].seen[k] {
					return strings.Join(append(path, k), "."), true
				}
				stack[top].seen[k] = true
				stack[top].wantKey = false
				path = append(path, k)
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{seen: map[string]bool{}, isObject: true, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
		}
		// A value (or a container) ended: its parent object wants a key next.
		if top = len(stack) - 1; top >= 0 && stack[top].isObject {
			stack[top].wantKey = true
			path = path[:len(path)-1]
		}
	}
}

// controlKey reports an object key holding a control character, in a
// body encoding/json reads; the test's own reading, as repeatedKey.
func controlKey(body []byte) (string, bool) {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return "", false
	}
	var walk func(any) (string, bool)
	walk = func(v any) (string, bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, item := range x {
				if strings.IndexFunc(k, unicode.IsControl) >= 0 {
					return k, true
				}
				if k, bad := walk(item); bad {
					return k, true
				}
			}
		case []any:
			for _, item := range x {
				if k, bad := walk(item); bad {
					return k, true
				}
			}
		}
		return "", false
	}
	return walk(v)
}

// declaredJSON is the test's own statement of the Content-Types a JSON
// body may come with.
func declaredJSON(contentType string) bool {
	if strings.TrimSpace(contentType) == "" {
		return true
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || (mt != "application/json" && !(strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json") && mt != "application/+json")) {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}
