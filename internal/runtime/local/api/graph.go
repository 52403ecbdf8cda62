package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/board"
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sla"
	"github.com/interlockhq/interlock/internal/store"
)

// GraphView is GET /v1/graph: the running pipelines' dependency graph
// (deps.BuildGraph), each node with its current period's board state.
type GraphView struct {
	Nodes []GraphNodeView `json:"nodes"`
	Edges []GraphEdgeView `json:"edges"`
}

// GraphNodeView is a pipeline of the graph. A missing one is named by an
// upstream rule but not running (its downstreams' rules do not pass);
// it has no state nor period.
type GraphNodeView struct {
	ID      string      `json:"id"`
	Layer   int         `json:"layer"`
	Missing bool        `json:"missing,omitempty"`
	Owner   string      `json:"owner,omitempty"`
	Period  string      `json:"currentPeriod,omitempty"`
	State   board.State `json:"state,omitempty"`
}

// GraphEdgeView is an upstream rule, from the upstream to the downstream.
type GraphEdgeView struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Mapping  string `json:"mapping"` // "same period", "offset -1d", "hours: all"
	Offset   int    `json:"offset,omitempty"`
	AllHours bool   `json:"allHours,omitempty"`
}

// Graph builds the graph view of the running pipelines at now.
func Graph(ctx context.Context, eng *engine.Engine, now time.Time) (GraphView, error) {
	read, err := ReadBoard(ctx, eng, now)
	if err != nil {
		return GraphView{}, err
	}
	configs := make([]*pipeline.Pipeline, len(read))
	byID := make(map[string]BoardRead, len(read))
	for i, r := range read {
		configs[i] = r.Config
		byID[r.Config.ID] = r
	}
	v := GraphViewOf(deps.BuildGraph(configs))
	for i, n := range v.Nodes {
		if r, ok := byID[n.ID]; ok {
			v.Nodes[i].Owner, v.Nodes[i].Period = r.Config.Owner, r.Period.String()
			v.Nodes[i].State = board.StateOf(r.Config, r.Period, r.Facts, now)
		}
	}
	return v, nil
}

// GraphViewOf is g as JSON, without states: what `interlock graph
// --output json` prints from the project's files.
func GraphViewOf(g deps.Graph) GraphView {
	return GraphView{
		Nodes: views(g.Nodes, func(n deps.GraphNode) GraphNodeView {
			return GraphNodeView{ID: n.ID, Layer: n.Layer, Missing: n.Missing}
		}),
		Edges: views(g.Edges, func(e deps.GraphEdge) GraphEdgeView {
			return GraphEdgeView{From: e.From, To: e.To, Mapping: e.Mapping, Offset: e.Offset, AllHours: e.AllHours}
		}),
	}
}

// graph serves GET /v1/graph.
func (s *server) graph(r *http.Request) (GraphView, error) {
	return Graph(r.Context(), s.eng, s.eng.Now())
}

// BoardRead is a running pipeline's current period and the stored facts
// the board's decisions take (board.StateOf, board.NextDeadline).
type BoardRead struct {
	Config *pipeline.Pipeline
	Row    store.Pipeline
	Period schedule.Period
	Facts  board.Facts
}

// ReadBoard reads every running pipeline's current period in bounded
// reads — the pipeline list, and the runs (and, with a relative SLA among
// them, the markers) of the current periods in one read across pipelines
// each: the dashboard's overview and GET /v1/graph.
func ReadBoard(ctx context.Context, eng *engine.Engine, now time.Time) ([]BoardRead, error) {
	loaded, err := eng.Running(ctx)
	if err != nil {
		return nil, fmt.Errorf("pipelines: %w", err)
	}
	out := make([]BoardRead, len(loaded))
	from := ""
	for i, l := range loaded {
		out[i] = BoardRead{Config: l.Config, Row: l.Row, Period: run.CurrentPeriod(l.Config, now)}
		if s := out[i].Period.String(); from == "" || s < from {
			from = s
		}
	}
	runs := map[run.Key]*run.Run{}
	if from != "" {
		// Periods sort in time order as text and a day before its hours,
		// so this is every current period's run (and the few runs of later
		// periods of the pipelines whose current period is later).
		list, err := eng.Store().RunList(ctx, store.RunListParams{PeriodFrom: from})
		if err != nil {
			return nil, fmt.Errorf("runs: %w", err)
		}
		for i := range list {
			runs[list[i].Key] = &list[i]
		}
	}
	// A relative SLA starts at the period's first trigger-sensor arrival,
	// a marker: the markers of the current periods are read in one read
	// across pipelines, as the runs are, when any pipeline needs them.
	var marks map[run.Key]*sla.Marks
	if slices.ContainsFunc(out, func(e BoardRead) bool { return relativeSLA(e.Config) }) {
		list, err := eng.Store().MarkerList(ctx, store.MarkerListParams{PeriodFrom: from})
		if err != nil {
			return nil, fmt.Errorf("markers: %w", err)
		}
		marks = map[run.Key]*sla.Marks{}
		for _, m := range list {
			x := marks[m.Key]
			if x == nil {
				x = &sla.Marks{}
				marks[m.Key] = x
			}
			x.Set(m.Kind, m.At)
		}
	}
	for i := range out {
		e := &out[i]
		key := run.Key{PipelineID: e.Config.ID, ScheduleID: e.Config.ScheduleID(), Period: e.Period.String()}
		e.Facts = board.Facts{Paused: e.Row.Paused, FirstLoaded: e.Row.FirstLoadedAt, Run: runs[key]}
		if m := marks[key]; m != nil && relativeSLA(e.Config) {
			e.Facts.Marks = *m
		}
	}
	return out, nil
}

// relativeSLA reports whether p's SLA may be relative, whose instants need
// the period's first trigger-sensor arrival (a marker).
func relativeSLA(p *pipeline.Pipeline) bool {
	return p.SLA != nil && p.SLA.Deadline.IsZero() && p.SLA.MaxDuration > 0
}
