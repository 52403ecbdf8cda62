package web

import (
	"net/http"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// The dependency graph page (/ui/graph): a layered drawing, server-side
// SVG, upstreams on the left. Each layer (run.GraphNode.Layer) is a
// column and every edge runs from a column to a later one, so edges only
// go right; a node's row is its place in its column, by id. No script
// draws it and nothing is fetched from elsewhere.

// Geometry of the drawing, in SVG user units.
const (
	graphNodeW   = 180
	graphNodeH   = 36
	graphColGap  = 90
	graphRowGap  = 24
	graphMargin  = 16
	graphLabelDY = -6
)

type graphPage struct {
	Width, Height int
	Nodes         []graphNodeView
	Edges         []graphEdgeView
}

type graphNodeView struct {
	api.GraphNodeView
	X, Y, W, H   int
	TextX, TextY int
}

type graphEdgeView struct {
	api.GraphEdgeView
	X1, Y1, X2, Y2 int
	LabelX, LabelY int
}

// graphPage serves /ui/graph.
func (h *handler) graphPage(r *http.Request) (*view, error) {
	g, err := api.Graph(r.Context(), h.eng, h.eng.Now())
	if err != nil {
		return nil, err
	}
	return &view{name: "graph", title: "Dependencies", nav: "graph", data: layoutGraph(g)}, nil
}

// layoutGraph places the nodes in their layer's column.
func layoutGraph(g api.GraphView) graphPage {
	var d graphPage
	rows := map[int]int{} // layer → nodes placed in it
	at := map[string]graphNodeView{}
	for _, n := range g.Nodes {
		row := rows[n.Layer]
		rows[n.Layer]++
		v := graphNodeView{GraphNodeView: n, W: graphNodeW, H: graphNodeH,
			X: graphMargin + n.Layer*(graphNodeW+graphColGap), Y: graphMargin + row*(graphNodeH+graphRowGap)}
		v.TextX, v.TextY = v.X+10, v.Y+graphNodeH/2+5
		d.Nodes = append(d.Nodes, v)
		at[n.ID] = v
		d.Width = max(d.Width, v.X+v.W+graphMargin)
		d.Height = max(d.Height, v.Y+v.H+graphMargin)
	}
	for _, e := range g.Edges {
		from, to := at[e.From], at[e.To]
		v := graphEdgeView{GraphEdgeView: e, X1: from.X + from.W, Y1: from.Y + from.H/2, X2: to.X, Y2: to.Y + to.H/2}
		v.LabelX, v.LabelY = (v.X1+v.X2)/2, (v.Y1+v.Y2)/2+graphLabelDY
		d.Edges = append(d.Edges, v)
	}
	return d
}

// depView is an upstream or downstream on a pipeline's page.
type depView struct {
	ID      string
	Mapping string
}

// dependencies lists a pipeline's upstreams (its rules) and its direct
// downstreams among the running pipelines (run.Downstreams).
func (h *handler) dependencies(r *http.Request, p *pipeline.Pipeline) (ups, downs []depView, err error) {
	g := run.BuildGraph([]*pipeline.Pipeline{p})
	for _, e := range g.Edges {
		ups = append(ups, depView{ID: e.From, Mapping: e.Mapping})
	}
	running, err := h.eng.Running(r.Context())
	if err != nil {
		return nil, nil, err
	}
	all := make([]*pipeline.Pipeline, len(running))
	for i, l := range running {
		all[i] = l.Config
	}
	for _, d := range run.Downstreams(all, p.ID) {
		for _, e := range run.BuildGraph([]*pipeline.Pipeline{d}).Edges {
			if e.From == p.ID {
				downs = append(downs, depView{ID: d.ID, Mapping: e.Mapping})
			}
		}
	}
	return ups, downs, nil
}
