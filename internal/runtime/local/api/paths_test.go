package api_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// uncleanPaths are paths http.ServeMux would redirect to their cleaned
// form, with what the refusal must name.
var uncleanPaths = []struct{ method, path, names string }{
	{"GET", "/v1//pipelines", `empty segment`},
	{"GET", "//v1/pipelines", `empty segment`},
	{"GET", "/v1/pipelines/./orders", `"." segment`},
	{"GET", "/v1/pipelines/orders/../orders", `".." segment`},
	{"GET", "/v1/pipelines/orders/runs/..", `".." segment`},
	{"GET", "/v1/events/.", `"." segment`},
	{"GET", "/v1/../healthz", `".." segment`},
	{"GET", "/v1/pipelines/orders//runs?limit=1", `empty segment`},
	{"PUT", "/v1/pipelines/orders/sensors/./orders-landed", `"." segment`},
	{"PUT", "/v1/pipelines//orders/sensors/orders-landed", `empty segment`},
	{"POST", "/v1/pipelines/orders/../orders/pause", `".." segment`},
	{"GET", "//healthz", `empty segment`},
	{"GET", "//", `empty segment`},
	{"GET", "/v1/pipelines//", `empty segment`},
}

// TestUncleanPathsAreRefusedInJSON: a path that is not in canonical form
// is refused with a JSON 400 naming the problem — never the router's
// redirect (307 text/html, or an empty body for a PUT), and before any
// token is checked or route runs, so nothing is stored or changed.
func TestUncleanPathsAreRefusedInJSON(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	for _, tc := range uncleanPaths {
		for _, token := range []string{"", adminSecret} {
			body := ""
			if tc.method != "GET" {
				body = `{}`
			}
			rec := f.do(t, tc.method, tc.path, token, body)
			msg := wantError(t, rec, http.StatusBadRequest, "bad_request")
			if !strings.Contains(msg, tc.names) || !strings.Contains(msg, "canonical") {
				t.Errorf("%s %s: message %q does not name %s", tc.method, tc.path, msg, tc.names)
			}
			if loc := rec.Header().Get("Location"); loc != "" {
				t.Errorf("%s %s: Location %q: the API must not redirect", tc.method, tc.path, loc)
			}
		}
	}
	if list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/orders/sensors", readerSecret, ""), http.StatusOK); len(list.Sensors) != 0 {
		t.Fatalf("a sensor was stored through an unclean path: %+v", list.Sensors)
	}
	if v := want[pipelineView](t, f.do(t, "GET", "/v1/pipelines/orders", readerSecret, ""), http.StatusOK); v.Paused {
		t.Fatal("a pause through an unclean path paused the pipeline")
	}
	// Escaped dots and slashes are part of a key, not path syntax; a
	// trailing slash is clean (and no route has one: 404).
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/a%2F..%2Fb", writerSecret, `{"n": 1}`), http.StatusOK)
	wantError(t, f.do(t, "GET", "/v1/pipelines/", readerSecret, ""), http.StatusNotFound, "not_found")
}

// TestUncleanPathsOverTheWire: the same through a real listener, with
// the request line sent as is (curl --path-as-is), so neither the client
// nor the server cleans it first.
func TestUncleanPathsOverTheWire(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	for _, tc := range uncleanPaths {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		req := tc.method + " " + tc.path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = conn.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), `"bad_request"`) {
			t.Errorf("%s %s: %d %s %s", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
}
