package api_test

import (
	"net/http"
	"testing"
)

type graphView struct {
	Nodes []struct {
		ID, State, CurrentPeriod string
		Layer                    int
		Missing                  bool
	} `json:"nodes"`
	Edges []struct {
		From, To, Mapping string
		Offset            int
	} `json:"edges"`
}

func TestGraph(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	const report = `
pipeline: {id: report}
validation:
  rules:
    - {check: upstream, pipeline: orders}
    - {check: upstream, pipeline: nightly, offset: -1d}
    - {check: upstream, pipeline: ghost}
job: {type: glue, config: {jobName: report}}
`
	if _, err := f.eng.ApplyConfig(t.Context(), "report.yaml", []byte(report)); err != nil {
		t.Fatal(err)
	}
	g := want[graphView](t, f.do(t, "GET", "/v1/graph", readerSecret, ""), http.StatusOK)
	nodes := map[string]string{}
	for _, n := range g.Nodes {
		nodes[n.ID] = n.State
		if n.ID == "report" && n.Layer != 1 || n.ID == "ghost" && !n.Missing || n.ID == "orders" && (n.CurrentPeriod == "" || n.Layer != 0) {
			t.Errorf("node %+v", n)
		}
	}
	if len(nodes) != 4 || nodes["orders"] != "waiting" || nodes["ghost"] != "" {
		t.Fatalf("nodes %+v", g.Nodes)
	}
	if len(g.Edges) != 3 || g.Edges[0].From != "ghost" || g.Edges[1].From != "nightly" || g.Edges[1].Mapping != "offset -1d" || g.Edges[1].Offset != -1 || g.Edges[2].Mapping != "same period" {
		t.Fatalf("edges %+v", g.Edges)
	}
	wantError(t, f.do(t, "GET", "/v1/graph", "", ""), http.StatusUnauthorized, "unauthorized")
	wantError(t, f.do(t, "GET", "/v1/graph?x=1", readerSecret, ""), http.StatusBadRequest, "bad_request")
}
