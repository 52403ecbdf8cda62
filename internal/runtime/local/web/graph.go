package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/interlockhq/interlock/internal/board"
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// The dependency graph page (/ui/graph): a layered drawing, server-side
// SVG, upstreams on the left. Each layer (deps.GraphNode.Layer) is a
// column and every edge runs from a column to a later one, so edges only
// go right; a node's row is its place in its column, by id. No script
// draws it and nothing is fetched from elsewhere.

// Geometry of the drawing, in SVG user units.
const (
	graphNodeW   = 180
	graphNodeH   = 36
	graphColGap  = 90
	graphRowGap  = 24
	graphMargin  = 24 // room above the first row for the lanes of its routed edges
	graphLabelDY = -6
	graphLaneGap = 4 // between the lanes of edges that share a row gap
)

// maxFocusDepth bounds ?depth= of a focused graph.
const maxFocusDepth = 5

type graphPage struct {
	Width, Height int
	Nodes         []graphNodeView
	Edges         []graphEdgeView
	// Alone are the pipelines with no upstream rule and no downstream:
	// listed as chips under the drawing, not stacked in its first column
	// (at 250 pipelines, mostly such, the drawing was a 14,500 px column).
	Alone []api.GraphNodeView
	// Focus is the pipeline whose neighbourhood is drawn (?focus=), Depth
	// how many upstream rules away; "" draws every pipeline.
	Focus  string
	Depth  int
	Total  int // pipelines running, drawn or not
	States []board.State
}

type graphNodeView struct {
	api.GraphNodeView
	X, Y, W, H   int
	TextX, TextY int
	FocusX       int // the focus link's place, at the box's right end
	Focused      bool
}

type graphEdgeView struct {
	api.GraphEdgeView
	// Path is the edge's SVG path: straight between adjacent columns; an
	// edge that skips a column leaves through the column gap, runs along
	// the row gap above its upstream's row and enters through the gap
	// before its downstream's column, so it never crosses a box.
	Path           string
	Routed         bool
	LabelX, LabelY int
}

// graphPage serves /ui/graph, or with ?focus=ID the neighbourhood of one
// pipeline: its upstreams and downstreams up to ?depth= rules away
// (default 1).
func (h *handler) graphPage(r *http.Request) (*view, error) {
	g, err := api.Graph(r.Context(), h.eng, h.eng.Now())
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	focus, depth := strings.TrimSpace(q.Get("focus")), 1
	if s := q.Get("depth"); s != "" {
		if depth, err = strconv.Atoi(s); err != nil || depth < 1 || depth > maxFocusDepth {
			return nil, badRequest("depth %q: want 1 to %d", s, maxFocusDepth)
		}
	}
	total := len(g.Nodes)
	if focus != "" {
		if !slices.ContainsFunc(g.Nodes, func(n api.GraphNodeView) bool { return n.ID == focus }) {
			return nil, &pageError{status: http.StatusNotFound, msg: fmt.Sprintf("no pipeline %q in the graph", focus), backHref: "/ui/graph", backText: "Back to the whole graph"}
		}
		g = neighbourhood(g, focus, depth)
	}
	d := layoutGraph(g)
	d.Focus, d.Depth, d.Total, d.States = focus, depth, total, board.States()
	for i := range d.Nodes {
		d.Nodes[i].Focused = d.Nodes[i].ID == focus
	}
	live := "/v1/events/stream"
	return &view{name: "graph", title: "Dependencies", nav: "graph", data: d, live: live}, nil
}

// neighbourhood keeps the pipelines at most depth upstream rules from
// focus, either way, and the edges between them; layers are renumbered
// from 0 in their order.
func neighbourhood(g api.GraphView, focus string, depth int) api.GraphView {
	keep := map[string]bool{focus: true}
	frontier := []string{focus}
	for range depth {
		var next []string
		for _, id := range frontier {
			for _, e := range g.Edges {
				for _, pair := range [][2]string{{e.From, e.To}, {e.To, e.From}} {
					if pair[0] == id && !keep[pair[1]] {
						keep[pair[1]] = true
						next = append(next, pair[1])
					}
				}
			}
		}
		frontier = next
	}
	var out api.GraphView
	var layers []int
	for _, n := range g.Nodes {
		if keep[n.ID] {
			out.Nodes = append(out.Nodes, n)
			if !slices.Contains(layers, n.Layer) {
				layers = append(layers, n.Layer)
			}
		}
	}
	slices.Sort(layers)
	for i := range out.Nodes {
		out.Nodes[i].Layer = slices.Index(layers, out.Nodes[i].Layer)
	}
	for _, e := range g.Edges {
		if keep[e.From] && keep[e.To] {
			out.Edges = append(out.Edges, e)
		}
	}
	return out
}

// layoutGraph places the nodes with an edge in their layer's column and
// routes the edges between the boxes; the others are Alone.
func layoutGraph(g api.GraphView) graphPage {
	var d graphPage
	linked := map[string]bool{}
	for _, e := range g.Edges {
		linked[e.From], linked[e.To] = true, true
	}
	rows := map[int]int{} // layer → nodes placed in it
	at := map[string]graphNodeView{}
	for _, n := range g.Nodes {
		if !linked[n.ID] {
			d.Alone = append(d.Alone, n)
			continue
		}
		row := rows[n.Layer]
		rows[n.Layer]++
		v := graphNodeView{GraphNodeView: n, W: graphNodeW, H: graphNodeH,
			X: graphMargin + n.Layer*(graphNodeW+graphColGap), Y: graphMargin + row*(graphNodeH+graphRowGap)}
		v.TextX, v.TextY = v.X+10, v.Y+graphNodeH/2+5
		v.FocusX = v.X + v.W - 18
		d.Nodes = append(d.Nodes, v)
		at[n.ID] = v
		d.Width = max(d.Width, v.X+v.W+graphMargin)
		d.Height = max(d.Height, v.Y+v.H+graphMargin)
	}
	lanes := map[int]int{} // row-gap y → edges routed along it
	for _, e := range g.Edges {
		from, to := at[e.From], at[e.To]
		x1, y1, x2, y2 := from.X+from.W, from.Y+from.H/2, to.X, to.Y+to.H/2
		v := graphEdgeView{GraphEdgeView: e}
		if to.Layer <= from.Layer+1 {
			v.Path = fmt.Sprintf("M %d %d L %d %d", x1, y1, x2, y2)
			v.LabelX, v.LabelY = (x1+x2)/2, (y1+y2)/2+graphLabelDY
		} else {
			// Out through the gap after the upstream's column, along the
			// row gap above the upstream's row (each edge on it a lane of
			// its own), in through the gap before the downstream's column.
			gapOut, gapIn := x1+graphColGap/2, x2-graphColGap/2
			base := from.Y - graphRowGap/2
			// Lanes of one gap alternate about its middle: 0, -4, +4, -8, +8.
			k := lanes[base] % 5
			lanes[base]++
			lane := base + (k+1)/2*graphLaneGap*(1-2*(k%2))
			v.Path = fmt.Sprintf("M %d %d L %d %d L %d %d L %d %d L %d %d L %d %d", x1, y1, gapOut, y1, gapOut, lane, gapIn, lane, gapIn, y2, x2, y2)
			v.Routed = true
			v.LabelX, v.LabelY = gapOut+(graphNodeW+graphColGap)/2, lane-3
		}
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
// downstreams among the running pipelines (deps.Downstreams).
func (h *handler) dependencies(r *http.Request, p *pipeline.Pipeline) (ups, downs []depView, err error) {
	g := deps.BuildGraph([]*pipeline.Pipeline{p})
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
	for _, d := range deps.Downstreams(all, p.ID) {
		for _, e := range deps.BuildGraph([]*pipeline.Pipeline{d}).Edges {
			if e.From == p.ID {
				downs = append(downs, depView{ID: d.ID, Mapping: e.Mapping})
			}
		}
	}
	return ups, downs, nil
}
