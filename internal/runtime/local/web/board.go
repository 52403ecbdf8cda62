package web

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/board"
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sla"
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
	facts    board.Facts
	state    board.State
	deadline board.Deadline
	hasDL    bool
}

// board reads every running pipeline's current period (api.ReadBoard)
// and classifies each.
func (h *handler) board(ctx context.Context, now time.Time) ([]entry, error) {
	read, err := api.ReadBoard(ctx, h.eng, now)
	if err != nil {
		return nil, err
	}
	out := make([]entry, len(read))
	for i, r := range read {
		out[i] = entry{p: r.Config, row: r.Row, per: r.Period, facts: r.Facts}
		out[i].judge(now)
	}
	return out, nil
}

// key is the run key of the entry's period.
func (e *entry) key() run.Key {
	return run.Key{PipelineID: e.p.ID, ScheduleID: e.p.ScheduleID(), Period: e.per.String()}
}

// judge classifies the entry from its facts (board.StateOf) and finds
// the deadline to count down to (board.NextDeadline).
func (e *entry) judge(now time.Time) {
	e.state = board.StateOf(e.p, e.per, e.facts, now)
	e.deadline, e.hasDL = board.NextDeadline(e.p, e.per, e.facts, now)
}

// marks reads a period's SLA markers.
func (h *handler) marks(ctx context.Context, key run.Key) (sla.Marks, error) {
	m, _, err := h.periodMarks(ctx, key)
	return m, err
}

// periodMarks reads a period's markers once: its SLA marks, and the
// downstream conditions it blocks as a root, not yet released
// (docs/root-cause.md).
func (h *handler) periodMarks(ctx context.Context, key run.Key) (sla.Marks, []deps.BlockedCondition, error) {
	var m sla.Marks
	ms, err := h.eng.Store().MarkerListOf(ctx, key)
	if err != nil {
		return m, nil, fmt.Errorf("markers of %s %s: %w", key.PipelineID, key.Period, err)
	}
	var blocked []deps.BlockedCondition
	for _, x := range ms {
		m.Set(x.Kind, x.At)
		if c, ok := deps.BlockedFromMarker(x.Kind, x.Detail); ok {
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
	e.facts = board.Facts{Paused: row.Paused, FirstLoaded: row.FirstLoadedAt}
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

// boardQuery is the overview's filter and order: a search on id or
// owner, the states to keep (none: all), and the order.
type boardQuery struct {
	Search string
	States []board.State
	Sort   string // sortUrgency or sortOwner
}

// The overview's orders.
const (
	sortUrgency = "urgency" // most urgent first (board.Compare)
	sortOwner   = "owner"   // grouped by owner, most urgent first within
)

// problemStates are the overview's "problems" view: what needs someone.
var problemStates = []board.State{board.Breached, board.Failed, board.AtRisk}

func (q boardQuery) match(e *entry) bool {
	if len(q.States) > 0 && !slices.Contains(q.States, e.state) {
		return false
	}
	if q.Search == "" {
		return true
	}
	s := strings.ToLower(q.Search)
	return strings.Contains(strings.ToLower(e.p.ID), s) || strings.Contains(strings.ToLower(e.p.Owner), s)
}

// sortBoard orders entries as the overview shows them (board.Compare),
// grouped by owner first for sortOwner.
func sortBoard(es []*entry, by string) {
	slices.SortFunc(es, func(a, b *entry) int {
		if by == sortOwner {
			if c := strings.Compare(a.p.Owner, b.p.Owner); c != 0 {
				return c
			}
		}
		return board.Compare(a.rank(), b.rank())
	})
}

func (e *entry) rank() board.Rank {
	r := board.Rank{State: e.state, ID: e.p.ID}
	if e.hasDL {
		r.Deadline = e.deadline.At
	}
	return r
}

// grid reads the last GridPeriods periods of a pipeline in one read of its
// runs and judges each cell.
func (h *handler) grid(ctx context.Context, p *pipeline.Pipeline, row store.Pipeline, now time.Time) ([]cellView, error) {
	cells, _, err := h.gridAndLastSuccess(ctx, p, row, now)
	return cells, err
}

// gridAndLastSuccess is grid, with the end of the newest successful run
// among its periods (zero: none in the grid's periods).
func (h *handler) gridAndLastSuccess(ctx context.Context, p *pipeline.Pipeline, row store.Pipeline, now time.Time) ([]cellView, time.Time, error) {
	pers := board.GridPeriods(p, now, GridPeriods)
	runs, err := h.eng.Store().RunList(ctx, store.RunListParams{PipelineID: p.ID, ScheduleID: p.ScheduleID(), PeriodFrom: pers[0].String()})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("runs of %s: %w", p.ID, err)
	}
	byPeriod := make(map[string]*run.Run, len(runs))
	var lastSuccess time.Time
	for i := range runs {
		byPeriod[runs[i].Period] = &runs[i]
		if r := runs[i]; r.State == run.Completed && r.EndedAt.After(lastSuccess) {
			lastSuccess = r.EndedAt
		}
	}
	cells := make([]cellView, len(pers))
	for i, per := range pers {
		f := board.Facts{FirstLoaded: row.FirstLoadedAt, Run: byPeriod[per.String()]}
		c := board.CellOf(p, per, f, now)
		cells[i] = cellView{PipelineID: p.ID, Period: per.String(), State: c.State, SLA: c.SLA, Reruns: c.Reruns}
	}
	return cells, lastSuccess, nil
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

// rowOf renders an entry as an overview row, with its grid, last event,
// since when it is in its state, its last success and why it waits.
// silenced is the page's read of the silences and windows.
func (h *handler) rowOf(ctx context.Context, e *entry, now time.Time, silenced silenceReach) (rowView, error) {
	r := rowView{
		ID: e.p.ID, Owner: e.p.Owner, Description: e.p.Description, State: e.state,
		Period: e.per.String(), Zone: e.p.Schedule.Location.String(),
		Paused: e.row.Paused, DryRun: e.p.DryRun, Now: now,
	}
	if e.hasDL {
		r.Deadline = &deadlineView{At: e.deadline.At.UTC(), What: e.deadline.What, Zone: r.Zone, Now: now}
	}
	if e.row.Paused && !e.row.PausedUntil.IsZero() {
		u := e.row.PausedUntil.UTC()
		r.PausedUntil = &u
	}
	r.Since = stateSince(e)
	var err error
	var last time.Time
	if r.Cells, last, err = h.gridAndLastSuccess(ctx, e.p, e.row, now); err != nil {
		return r, err
	}
	if !last.IsZero() {
		last = last.UTC()
		r.LastSuccess = &last
	}
	if r.LastEvent, err = h.lastEvent(ctx, e.p.ID, e.per); err != nil {
		return r, err
	}
	if r.Reason, err = h.rowReason(ctx, e, r.PausedUntil, now); err != nil {
		return r, err
	}
	r.Silenced = silenced.of(e.p, now)
	return r, nil
}

// stateSince is when the entry's period entered the state it shows: its
// run's state, or, without a run, the period's start (the pipeline's first
// load when later); nil when unknown.
func stateSince(e *entry) *time.Time {
	var t time.Time
	switch {
	case e.facts.Run != nil:
		t = e.facts.Run.StateSince
	case e.state == board.Waiting || e.state == board.Paused || e.state == board.Excluded:
		t = e.per.Start(e.p.Schedule.Location)
		if e.row.FirstLoadedAt.After(t) {
			t = e.row.FirstLoadedAt
		}
	}
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// rowReason says inline why the row is in its state (the summary line's
// reason, or for a rule that does not pass compactRule). Only a period
// whose sensors decide — evaluating, or waiting on a trigger — is
// explained (engine.Explain reads them); the cron tick, the exclusion and
// the SLA instants come from the config (the board's own decisions), the
// rest from the run.
func (h *handler) rowReason(ctx context.Context, e *entry, pausedUntil *time.Time, now time.Time) (string, error) {
	f := summaryFacts{State: e.state, Run: e.facts.Run, PausedUntil: pausedUntil, Zone: e.p.Schedule.Location.String()}
	x := &f.Explain
	switch {
	case e.state == board.Succeeded || e.state == board.DryRun:
		return "", nil
	case e.state == board.Evaluating || (e.state == board.Waiting && e.p.Schedule.Trigger != nil):
		// Rules and the trigger are judged on the sensors: explained.
		var err error
		if *x, err = h.eng.Explain(ctx, e.p.ID, e.per.String()); err != nil {
			return "", fmt.Errorf("explain %s: %w", e.p.ID, err)
		}
	case e.state == board.Excluded:
		x.ExcludedBy = run.ExclusionReason(e.p, e.per)
	case e.state == board.Waiting && !e.p.Schedule.Cron.IsZero():
		next := e.p.Schedule.Cron.Next(now, e.p.Schedule.Location)
		x.Deadlines.NextCronTick, x.Timezone = &next, f.Zone
	case e.state == board.Breached || e.state == board.AtRisk:
		if t, ok, err := sla.Resolve(e.p, e.per, e.facts.Marks.FirstArrival); err == nil && ok {
			breach, warning := t.Breach, t.Warning
			if t.Relative {
				x.Deadlines.RelativeSLABreach = &breach
			} else {
				x.Deadlines.SLABreach = &breach
			}
			if !warning.IsZero() {
				x.Deadlines.SLAWarning = &warning
			}
			if e.p.SLA != nil && e.p.SLA.Location != nil {
				x.Deadlines.SLATimezone = e.p.SLA.Location.String()
			}
		}
	}
	// A row is narrow: what a period waits for comes first, compactly.
	switch {
	case e.state == board.Evaluating:
		var rules []string
		for _, c := range x.Validation.Rules {
			if !c.Passed {
				rules = append(rules, compactRule(c))
			}
		}
		if len(rules) > 0 {
			return strings.Join(rules, "; "), nil
		}
	case e.state == board.Waiting && x.Trigger != nil && !x.Trigger.Passed:
		return "trigger " + compactRule(*x.Trigger), nil
	}
	return summaryOf(f).Reason, nil
}

// compactRule says a rule that does not pass in a few words: its sensor
// and field, what it saw and what it wants ("clicks.count 5, wants gte
// 24"; "landed: none yet, wants exists").
func compactRule(c engine.RuleCheck) string {
	name := c.Key
	if c.Field != "" {
		name += "." + c.Field
	}
	want := "wants " + c.Check
	if c.Value != nil {
		want += " " + valueText(c.Value)
	}
	if c.Observed == nil {
		return name + ": none yet, " + want
	}
	return name + " " + valueText(c.Observed) + ", " + want
}

// stateOK reports whether s names a board state.
func stateOK(s string) bool {
	return slices.Contains(board.States(), board.State(s))
}
