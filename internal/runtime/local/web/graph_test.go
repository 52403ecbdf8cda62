package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// skipGraph: clicks feeds revenue and margin, revenue feeds margin; fill
// sits in revenue's column, in the row clicks→margin would cross.
func skipGraph() api.GraphView {
	return api.GraphView{
		Nodes: []api.GraphNodeView{
			{ID: "clicks", Layer: 0}, {ID: "orders", Layer: 0},
			{ID: "fill", Layer: 1}, {ID: "revenue", Layer: 1},
			{ID: "margin", Layer: 2}, {ID: "report", Layer: 3},
		},
		Edges: []api.GraphEdgeView{
			{From: "clicks", To: "revenue", Mapping: "same period"},
			{From: "clicks", To: "margin", Mapping: "offset -1d"},
			{From: "revenue", To: "margin", Mapping: "same period"},
			{From: "orders", To: "report", Mapping: "hours: all"},
			{From: "orders", To: "fill", Mapping: "same period"},
		},
	}
}

type point struct{ x, y int }

func pathPoints(t *testing.T, d string) []point {
	t.Helper()
	var pts []point
	f := strings.Fields(d)
	for i := 0; i+2 < len(f); i += 3 {
		var p point
		if _, err := fmt.Sscanf(f[i+1]+" "+f[i+2], "%d %d", &p.x, &p.y); err != nil {
			t.Fatalf("path %q: %v", d, err)
		}
		pts = append(pts, p)
	}
	return pts
}

// crosses reports whether the horizontal or vertical segment a–b passes
// through the inside of box n (touching its border is not crossing).
func crosses(a, b point, n graphNodeView) bool {
	minX, maxX := min(a.x, b.x), max(a.x, b.x)
	minY, maxY := min(a.y, b.y), max(a.y, b.y)
	return minX < n.X+n.W && maxX > n.X && minY < n.Y+n.H && maxY > n.Y
}

// TestGraphEdgesGoAroundTheBoxes: no edge runs through a box, an edge
// that skips a column is routed along a row gap, and every label sits
// outside every box.
func TestGraphEdgesGoAroundTheBoxes(t *testing.T) {
	d := layoutGraph(skipGraph())
	for _, e := range d.Edges {
		pts := pathPoints(t, e.Path)
		for i := 1; i < len(pts); i++ {
			a, b := pts[i-1], pts[i]
			if a.x != b.x && a.y != b.y && e.Routed {
				t.Errorf("%s→%s: a routed edge has a slanted segment %v–%v", e.From, e.To, a, b)
			}
			for _, n := range d.Nodes {
				if crosses(a, b, n) {
					t.Errorf("%s→%s runs through %s (%v–%v)", e.From, e.To, n.ID, a, b)
				}
			}
		}
		for _, n := range d.Nodes {
			if e.LabelX > n.X && e.LabelX < n.X+n.W && e.LabelY > n.Y && e.LabelY < n.Y+n.H+4 {
				t.Errorf("%s→%s's label sits on %s", e.From, e.To, n.ID)
			}
		}
		if skips := e.From == "clicks" && e.To == "margin" || e.From == "orders" && e.To == "report"; skips != e.Routed {
			t.Errorf("%s→%s routed %v", e.From, e.To, e.Routed)
		}
	}
}

func TestGraphNeighbourhood(t *testing.T) {
	g := neighbourhood(skipGraph(), "revenue", 1)
	var ids []string
	for _, n := range g.Nodes {
		ids = append(ids, fmt.Sprintf("%s@%d", n.ID, n.Layer))
	}
	if strings.Join(ids, " ") != "clicks@0 revenue@1 margin@2" || len(g.Edges) != 3 {
		t.Fatalf("revenue's neighbourhood: %v, %d edges", ids, len(g.Edges))
	}
	// report is two rules from fill, through orders; its layer closes up.
	g = neighbourhood(skipGraph(), "fill", 2)
	ids = ids[:0]
	for _, n := range g.Nodes {
		ids = append(ids, fmt.Sprintf("%s@%d", n.ID, n.Layer))
	}
	if strings.Join(ids, " ") != "orders@0 fill@1 report@2" {
		t.Fatalf("fill's neighbourhood within 2: %v", ids)
	}
}

// TestGraphListsLonePipelinesApart: a pipeline with no dependency is a
// chip, not a box in the drawing's first column.
func TestGraphListsLonePipelinesApart(t *testing.T) {
	g := skipGraph()
	for i := range 200 {
		g.Nodes = append(g.Nodes, api.GraphNodeView{ID: fmt.Sprintf("alone-%03d", i)})
	}
	d := layoutGraph(g)
	if len(d.Nodes) != 6 || len(d.Alone) != 200 {
		t.Fatalf("%d boxes, %d alone; want the 6 with dependencies drawn", len(d.Nodes), len(d.Alone))
	}
	if d.Height > 300 {
		t.Fatalf("the drawing is %d px high", d.Height)
	}
}
