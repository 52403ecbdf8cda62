package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// malformedQueries are query strings url.ParseQuery cannot read whole: it
// drops the bad pair, so r.URL.Query() would answer as if no filter had
// been given.
var malformedQueries = []struct{ query, mentions string }{
	{"pipeline=a%zz", `invalid URL escape "%zz"`},
	{"limit=1;x=2", "semicolon"},
	{"type=JOB_TRIGGERED%", `invalid URL escape "%"`},
}

// TestMalformedQueryIsRefusedNotDropped: on the event log, where a dropped
// filter would answer with every pipeline's events, a query that does not
// parse is a 400 naming the problem.
func TestMalformedQueryIsRefusedNotDropped(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	makeEvents(t, f, 1)
	// The filters work when they parse: one pipeline's events, not all.
	all := want[eventPage](t, f.do(t, "GET", "/v1/events", "", ""), http.StatusOK)
	one := want[eventPage](t, f.do(t, "GET", "/v1/events?pipeline=orders", "", ""), http.StatusOK)
	if len(one.Events) == 0 || len(one.Events) >= len(all.Events) {
		t.Fatalf("?pipeline=orders: %d of %d events", len(one.Events), len(all.Events))
	}
	for _, c := range malformedQueries {
		t.Run(c.query, func(t *testing.T) {
			msg := wantError(t, f.do(t, "GET", "/v1/events?"+c.query, "", ""), http.StatusBadRequest, "bad_request")
			if !strings.Contains(msg, "malformed query string") || !strings.Contains(msg, c.mentions) {
				t.Fatalf("message %q does not name the problem (%q)", msg, c.mentions)
			}
		})
	}

	// Over a real connection too: neither client nor server repairs it.
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/v1/events?pipeline=a%zz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("over HTTP: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// v1Routes is every /v1 route, each with a request it accepts. Each one
// reads its query string, so each must refuse one that does not parse.
var v1Routes = []struct{ method, path, body string }{
	{"PUT", "/v1/pipelines/orders/sensors/k", `{"count": 5}`},
	{"GET", "/v1/pipelines/orders/sensors", ""},
	{"GET", "/v1/pipelines", ""},
	{"GET", "/v1/pipelines/orders", ""},
	{"GET", "/v1/pipelines/orders/runs", ""},
	{"GET", "/v1/pipelines/orders/explain", ""},
	{"POST", "/v1/pipelines/orders/reruns", `{"period": "2026-03-09"}`},
	{"POST", "/v1/pipelines/orders/pause", ""},
	{"POST", "/v1/pipelines/orders/resume", ""},
	{"GET", "/v1/events", ""},
	{"GET", "/v1/alerts/dead-letters", ""},
}

// TestEveryRouteRefusesAMalformedQuery: the same malformed queries are a
// 400 on every /v1 route, before anything is read or written; the query
// not parsing is reported ahead of any parameter the route does not know.
func TestEveryRouteRefusesAMalformedQuery(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, r := range v1Routes {
		for _, c := range malformedQueries {
			t.Run(r.method+" "+r.path+"?"+c.query, func(t *testing.T) {
				msg := wantError(t, f.do(t, r.method, r.path+"?"+c.query, "", r.body), http.StatusBadRequest, "bad_request")
				if !strings.Contains(msg, "malformed query string") || !strings.Contains(msg, c.mentions) {
					t.Fatalf("message %q does not name the problem (%q)", msg, c.mentions)
				}
			})
		}
	}
	// Nothing was written: no sensor, no pause, no rerun.
	if list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/orders/sensors", "", ""), http.StatusOK); len(list.Sensors) != 0 {
		t.Fatalf("refused writes stored: %+v", list.Sensors)
	}
	if evs := want[eventPage](t, f.do(t, "GET", "/v1/events", "", ""), http.StatusOK); len(evs.Events) != 0 {
		t.Fatalf("refused requests recorded events: %+v", evs.Events)
	}
	// And each route does accept its request when the query is well formed.
	for _, r := range v1Routes {
		if rec := f.do(t, r.method, r.path, "", r.body); rec.Code != http.StatusOK {
			t.Fatalf("%s %s: %d %s", r.method, r.path, rec.Code, rec.Body)
		}
	}
}

// TestNoHandlerReadsTheQueryLeniently keeps readQuery the only way into a
// query string, for routes added after v1Routes was written: r.URL.Query()
// and the form readers drop what does not parse.
func TestNoHandlerReadsTheQueryLeniently(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lenient := map[string]bool{"FormValue": true, "PostFormValue": true, "ParseForm": true, "ParseMultipartForm": true}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			onURL := false
			if x, ok := sel.X.(*ast.SelectorExpr); ok && x.Sel.Name == "URL" {
				onURL = true
			}
			if (onURL && sel.Sel.Name == "Query") || lenient[sel.Sel.Name] {
				t.Errorf("%s: %s reads the query leniently; use readQuery", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}

// TestRepeatedParameterIsRefused: a parameter a route takes once is
// refused when given twice, on each route that reads one (explain's
// ?period=, silences' ?all=, the event log's ?pipeline=, which its stream
// reads the same way), rather than answered for one of the two values.
func TestRepeatedParameterIsRefused(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	cases := []struct{ target, param string }{
		{"/v1/pipelines/orders/explain?period=2026-03-09&period=2026-03-10", "period"},
		{"/v1/silences?all=true&all=false", "all"},
		{"/v1/events?pipeline=orders&pipeline=billing", "pipeline"},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			msg := wantError(t, f.do(t, "GET", c.target, "", ""), http.StatusBadRequest, "bad_request")
			if named := strconv.Quote(c.param) + " is given 2 times"; !strings.Contains(msg, named) {
				t.Fatalf("message %q does not say %s", msg, named)
			}
		})
	}
}

// TestActionOnUnknownPipelineIsNotFoundBeforeItsBody: an action on a
// pipeline that does not run answers 404 naming it whatever its body, so
// a client learns the pipeline is wrong before fixing a body that would
// not have mattered.
func TestActionOnUnknownPipelineIsNotFoundBeforeItsBody(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, action := range []string{"reruns", "pause", "resume", "backfills"} {
		t.Run(action, func(t *testing.T) {
			msg := wantError(t, f.do(t, "POST", "/v1/pipelines/nope/"+action, "", `{"period": `), http.StatusNotFound, "unknown_pipeline")
			if !strings.Contains(msg, `"nope"`) {
				t.Fatalf("message %q does not name the pipeline", msg)
			}
		})
	}
}
