package deps

import (
	"fmt"
	"slices"
	"strings"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// Graph is the dependency graph of a set of pipelines, as `interlock
// graph`, GET /v1/graph and the dashboard's /ui/graph show it.
type Graph struct {
	Nodes []GraphNode // by layer, then id
	Edges []GraphEdge // by upstream, downstream, then rule order
}

// GraphNode is a pipeline. Layer is its longest chain of upstreams: 0
// for a pipeline that waits for none, 1 + the deepest upstream's layer
// otherwise, so every edge goes from a lower layer to a higher one.
type GraphNode struct {
	ID    string
	Layer int
	// Missing: an upstream rule names this id but no pipeline of the set
	// defines it (its rules do not pass).
	Missing bool
}

// GraphEdge is one upstream rule: From is the upstream, To the
// downstream whose rule it is.
type GraphEdge struct {
	From, To string
	Offset   int
	AllHours bool
	// Mapping says which upstream periods the rule reads, in the words of
	// the config: "same period", "offset -1d", "hours: all, offset -1d".
	Mapping string
}

// BuildGraph builds the graph of all. A cycle (which no running set
// holds: a load that would close one is refused) leaves its back edge
// out of the layering, so a project being validated still draws.
func BuildGraph(all []*pipeline.Pipeline) Graph {
	byID := make(map[string]*pipeline.Pipeline, len(all))
	for _, p := range all {
		byID[p.ID] = p
	}
	var g Graph
	missing := map[string]bool{}
	for _, p := range all {
		for _, u := range p.Upstreams {
			g.Edges = append(g.Edges, GraphEdge{From: u.Pipeline, To: p.ID, Offset: u.Offset, AllHours: u.AllHours, Mapping: mappingWords(p, u)})
			if byID[u.Pipeline] == nil {
				missing[u.Pipeline] = true
			}
		}
	}
	slices.SortStableFunc(g.Edges, func(a, b GraphEdge) int {
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		return strings.Compare(a.To, b.To)
	})
	layer := map[string]int{}
	visiting := map[string]bool{}
	var depth func(id string) int
	depth = func(id string) int {
		if l, ok := layer[id]; ok {
			return l
		}
		p := byID[id]
		if p == nil || visiting[id] {
			return 0
		}
		visiting[id] = true
		l := 0
		for _, up := range p.UpstreamIDs() {
			if visiting[up] {
				continue // a cycle's back edge
			}
			l = max(l, depth(up)+1)
		}
		visiting[id] = false
		layer[id] = l
		return l
	}
	for id := range byID {
		g.Nodes = append(g.Nodes, GraphNode{ID: id, Layer: depth(id)})
	}
	for id := range missing {
		g.Nodes = append(g.Nodes, GraphNode{ID: id, Missing: true})
	}
	slices.SortFunc(g.Nodes, func(a, b GraphNode) int {
		if a.Layer != b.Layer {
			return a.Layer - b.Layer
		}
		return strings.Compare(a.ID, b.ID)
	})
	return g
}

// mappingWords says which periods rule u of p reads, as written.
func mappingWords(p *pipeline.Pipeline, u pipeline.Upstream) string {
	var parts []string
	if u.AllHours {
		parts = append(parts, "hours: all")
	}
	if u.Offset != 0 {
		unit := "d"
		if p.Hourly() {
			unit = "h"
		}
		parts = append(parts, fmt.Sprintf("offset %+d%s", u.Offset, unit))
	}
	if len(parts) == 0 {
		return "same period"
	}
	return strings.Join(parts, ", ")
}
