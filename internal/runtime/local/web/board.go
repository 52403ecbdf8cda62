package web

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// GridPeriods is how many periods the history grid shows.
const GridPeriods = 30

// entry is one pipeline on the board: its config, row, current period,
// the facts read about that period and what the board decisions made of
// them.
type entry struct {
	p        *pipeline.Pipeline
	row      store.Pipeline
	per      schedule.Period
	facts    run.BoardFacts
	state    run.BoardState
	deadline run.Deadline
	hasDL    bool
}

// relativeSLA reports whether p's SLA may be relative, whose instants need
// the period's first trigger-sensor arrival (a marker).
func relativeSLA(p *pipeline.Pipeline) bool {
	return p.SLA != nil && p.SLA.Deadline.IsZero() && p.SLA.MaxDuration > 0
}

// board reads every running pipeline's current period in bounded reads —
// the pipeline list, and the runs (and, with a relative SLA among them,
// the markers) of the current periods in one read across pipelines each —
// and classifies each.
func (h *handler) board(ctx context.Context, now time.Time) ([]entry, error) {
	loaded, err := h.eng.Running(ctx)
	if err != nil {
		return nil, fmt.Errorf("pipelines: %w", err)
	}
	out := make([]entry, len(loaded))
	from := ""
	for i, l := range loaded {
		out[i] = entry{p: l.Config, row: l.Row, per: run.CurrentPeriod(l.Config, now)}
		if s := out[i].per.String(); from == "" || s < from {
			from = s
		}
	}
	runs := map[run.Key]*run.Run{}
	if from != "" {
		// Periods sort in time order as text and a day before its hours,
		// so this is every current period's run (and the few runs of later
		// periods of the pipelines whose current period is later).
		list, err := h.eng.Store().RunList(ctx, store.RunListParams{PeriodFrom: from})
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
	var marks map[run.Key]*run.SLAMarks
	if slices.ContainsFunc(out, func(e entry) bool { return relativeSLA(e.p) }) {
		list, err := h.eng.Store().MarkerList(ctx, store.MarkerListParams{PeriodFrom: from})
		if err != nil {
			return nil, fmt.Errorf("markers: %w", err)
		}
		marks = map[run.Key]*run.SLAMarks{}
		for _, m := range list {
			x := marks[m.Key]
			if x == nil {
				x = &run.SLAMarks{}
				marks[m.Key] = x
			}
			x.Set(m.Kind, m.At)
		}
	}
	for i := range out {
		e := &out[i]
		key := e.key()
		e.facts = run.BoardFacts{Paused: e.row.Paused, FirstLoaded: e.row.FirstLoadedAt, Run: runs[key]}
		if m := marks[key]; m != nil && relativeSLA(e.p) {
			e.facts.Marks = *m
		}
		e.judge(now)
	}
	return out, nil
}

// key is the run key of the entry's period.
func (e *entry) key() run.Key {
	return run.Key{PipelineID: e.p.ID, ScheduleID: e.p.ScheduleID(), Period: e.per.String()}
}

// judge classifies the entry from its facts (run.BoardStateOf) and finds
// the deadline to count down to (run.NextDeadline).
func (e *entry) judge(now time.Time) {
	e.state = run.BoardStateOf(e.p, e.per, e.facts, now)
	e.deadline, e.hasDL = run.NextDeadline(e.p, e.per, e.facts, now)
}

// marks reads a period's SLA markers.
func (h *handler) marks(ctx context.Context, key run.Key) (run.SLAMarks, error) {
	m, _, err := h.periodMarks(ctx, key)
	return m, err
}

// periodMarks reads a period's markers once: its SLA marks, and the
// downstream conditions it blocks as a root, not yet released
// (docs/root-cause.md).
func (h *handler) periodMarks(ctx context.Context, key run.Key) (run.SLAMarks, []run.BlockedCondition, error) {
	var m run.SLAMarks
	ms, err := h.eng.Store().MarkerListOf(ctx, key)
	if err != nil {
		return m, nil, fmt.Errorf("markers of %s %s: %w", key.PipelineID, key.Period, err)
	}
	var blocked []run.BlockedCondition
	for _, x := range ms {
		m.Set(x.Kind, x.At)
		if c, ok := run.BlockedFromMarker(x.Kind, x.Detail); ok {
			blocked = append(blocked, c)
		}
	}
	return m, blocked, nil
}

// entryOf reads one pipeline's current period as board does for all.
func (h *handler) entryOf(ctx context.Context, id string, now time.Time) (entry, error) {
	p, row, err := h.eng.Pipeline(ctx, id)
	if err != nil {
		return entry{}, err
	}
	e := entry{p: p, row: row, per: run.CurrentPeriod(p, now)}
	key := e.key()
	e.facts = run.BoardFacts{Paused: row.Paused, FirstLoaded: row.FirstLoadedAt}
	r, err := h.eng.Store().RunGet(ctx, key)
	switch {
	case err == nil:
		e.facts.Run = &r
	case !errors.Is(err, store.ErrNotFound):
		return entry{}, err
	}
	if e.facts.Marks, err = h.marks(ctx, key); err != nil {
		return entry{}, err
	}
	e.judge(now)
	return e, nil
}

// boardQuery is the overview's filter: a search on id or owner and a
// state.
type boardQuery struct {
	Search string
	State  run.BoardState
}

func (q boardQuery) match(e *entry) bool {
	if q.State != "" && e.state != q.State {
		return false
	}
	if q.Search == "" {
		return true
	}
	s := strings.ToLower(q.Search)
	return strings.Contains(strings.ToLower(e.p.ID), s) || strings.Contains(strings.ToLower(e.p.Owner), s)
}

// sortBoard orders entries as the overview shows them (run.CompareBoard).
func sortBoard(es []*entry) {
	slices.SortFunc(es, func(a, b *entry) int { return run.CompareBoard(a.rank(), b.rank()) })
}

func (e *entry) rank() run.BoardRank {
	r := run.BoardRank{State: e.state, ID: e.p.ID}
	if e.hasDL {
		r.Deadline = e.deadline.At
	}
	return r
}

// grid reads the last GridPeriods periods of a pipeline in one read of its
// runs and judges each cell.
func (h *handler) grid(ctx context.Context, p *pipeline.Pipeline, row store.Pipeline, now time.Time) ([]cellView, error) {
	pers := run.GridPeriods(p, now, GridPeriods)
	runs, err := h.eng.Store().RunList(ctx, store.RunListParams{PipelineID: p.ID, ScheduleID: p.ScheduleID(), PeriodFrom: pers[0].String()})
	if err != nil {
		return nil, fmt.Errorf("runs of %s: %w", p.ID, err)
	}
	byPeriod := make(map[string]*run.Run, len(runs))
	for i := range runs {
		byPeriod[runs[i].Period] = &runs[i]
	}
	cells := make([]cellView, len(pers))
	for i, per := range pers {
		f := run.BoardFacts{FirstLoaded: row.FirstLoadedAt, Run: byPeriod[per.String()]}
		c := run.BoardCellOf(p, per, f, now)
		cells[i] = cellView{PipelineID: p.ID, Period: per.String(), State: c.State, SLA: c.SLA, Reruns: c.Reruns}
	}
	return cells, nil
}

// lastEvent reads the last event of a pipeline's period (one read scoped
// to the pipeline and period).
func (h *handler) lastEvent(ctx context.Context, id string, per schedule.Period) (*event.Event, error) {
	page, err := h.eng.Store().EventList(ctx, store.EventListParams{PipelineID: id, Period: per.String()})
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", id, err)
	}
	if n := len(page.Events); n > 0 {
		return &page.Events[n-1], nil
	}
	return nil, nil
}

// rowOf renders an entry as an overview row, with its grid and last
// event.
func (h *handler) rowOf(ctx context.Context, e *entry, now time.Time) (rowView, error) {
	r := rowView{
		ID: e.p.ID, Owner: e.p.Owner, Description: e.p.Description, State: e.state,
		Period: e.per.String(), Zone: e.p.Schedule.Location.String(),
		Paused: e.row.Paused, DryRun: e.p.DryRun,
	}
	if e.hasDL {
		r.Deadline = &deadlineView{At: e.deadline.At.UTC(), What: e.deadline.What, Zone: r.Zone, Now: now}
	}
	var err error
	if r.Cells, err = h.grid(ctx, e.p, e.row, now); err != nil {
		return r, err
	}
	if r.LastEvent, err = h.lastEvent(ctx, e.p.ID, e.per); err != nil {
		return r, err
	}
	return r, nil
}

// stateOK reports whether s names a board state.
func stateOK(s string) bool {
	return slices.Contains(run.BoardStates(), run.BoardState(s))
}
