package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// maxTimeline bounds the events a period page lists.
const maxTimeline = 500

// nextTicks is how many cron ticks the pipeline page lists.
const nextTicks = 5

// pipelinePageData is the pipeline page and the period page.
type pipelinePageData struct {
	ID, Owner, Description string
	File                   string
	Zone                   string
	Schedule               scheduleView
	Job                    jobView
	SLA                    *slaConfigView
	Paused                 bool
	PausedUntil            *time.Time
	DryRun                 bool
	ConfigVersion          int64

	Period     string
	Current    bool   // the period is the current one
	CurrentURL string // the pipeline page
	State      run.BoardState
	Deadline   *deadlineView
	Explain    engine.Explanation
	Timeline   []eventView
	More       bool // the timeline was cut at maxTimeline
	// Blocked are the downstream problems this period is the root cause
	// of, not yet released (docs/root-cause.md).
	Blocked    []run.BlockedCondition
	Cells      []cellView
	Now        time.Time
	Path       string // the pipeline's escaped path segment
	PrevPeriod string
	NextPeriod string
	// Backfills are the pipeline's running backfills and the last ended
	// one, newest first; BackfillFrom and BackfillTo fill the backfill
	// form (the week before the current period).
	Backfills                []backfillView
	BackfillFrom, BackfillTo string
	// Upstreams are the pipeline's upstream rules, Downstreams the
	// running pipelines with one on it (the dependency graph's edges).
	Upstreams, Downstreams []depView
}

// backfillView is one backfill's progress on the pipeline page.
type backfillView struct {
	ID, State, From, To, Only string
	MaxActive, Done, Total    int
	Counts                    run.BackfillCounts
	Running                   bool
}

// maxBackfillsShown bounds the backfills the pipeline page lists.
const maxBackfillsShown = 3

// backfillsOf lists a pipeline's running backfills and the last ended
// one, newest first, at most maxBackfillsShown.
func backfillsOf(bfs []store.Backfill) []backfillView {
	var out []backfillView
	ended := false
	for i := len(bfs) - 1; i >= 0 && len(out) < maxBackfillsShown; i-- {
		b := bfs[i]
		running := b.State == run.BackfillRunning
		if !running && ended {
			continue
		}
		ended = ended || !running
		c := run.CountPeriods(b.Periods)
		out = append(out, backfillView{ID: b.ID, State: string(b.State), From: b.From, To: b.To, Only: string(b.Only), MaxActive: b.MaxActive,
			Done: c.Succeeded + c.Failed + c.Skipped, Total: len(b.Periods), Counts: c, Running: running})
	}
	return out
}

type scheduleView struct {
	Cron      string
	Trigger   string
	Deadline  string
	Hourly    bool
	Exclude   string
	Include   string
	NextTicks []time.Time
	Eval      string
}

type jobView struct {
	Type            string
	MaxRetries      int
	MaxCodeRetries  int
	MaxManualReruns int
	MaxDriftReruns  int
	PollInterval    time.Duration
	PollWindow      time.Duration
}

type slaConfigView struct {
	Deadline         string
	ExpectedDuration time.Duration
	MaxDuration      time.Duration
	Zone             string
	Critical         bool
}

// pipelinePage is /ui/pipelines/{id}: the pipeline and its current
// period; with ?fragment=row, the pipeline's overview row alone (what the
// overview re-reads when an event concerns it).
func (h *handler) pipelinePage(r *http.Request) (*view, error) {
	id := r.PathValue("id")
	if r.URL.Query().Get("fragment") == "row" {
		return h.rowFragment(r, id)
	}
	return h.periodView(r, id, "")
}

// periodPage is /ui/pipelines/{id}/periods/{period}.
func (h *handler) periodPage(r *http.Request) (*view, error) {
	per, err := schedule.ParsePeriod(r.PathValue("period"))
	if err != nil {
		return nil, badRequest("period %q: %v", r.PathValue("period"), err)
	}
	return h.periodView(r, r.PathValue("id"), per.String())
}

func (h *handler) rowFragment(r *http.Request, id string) (*view, error) {
	now := h.eng.Now()
	e, err := h.entryOf(r.Context(), id, now)
	if err != nil {
		return nil, err
	}
	row, err := h.rowOf(r.Context(), &e, now)
	if err != nil {
		return nil, err
	}
	return &view{name: "fragment-row", data: row}, nil
}

func (h *handler) periodView(r *http.Request, id, period string) (*view, error) {
	ctx := r.Context()
	now := h.eng.Now()
	p, row, err := h.eng.Pipeline(ctx, id)
	if err != nil {
		return nil, err
	}
	cur := run.CurrentPeriod(p, now)
	per := cur
	if period != "" {
		if per, err = schedule.ParsePeriod(period); err != nil {
			return nil, badRequest("period %q: %v", period, err)
		}
	}
	x, err := h.eng.Explain(ctx, id, per.String())
	if errors.Is(err, engine.ErrInvalidRequest) {
		return nil, badRequest("%v", err)
	}
	if err != nil {
		return nil, err
	}
	d := pipelinePageData{
		ID: p.ID, Owner: p.Owner, Description: p.Description, File: row.File, Zone: p.Schedule.Location.String(),
		Schedule: scheduleOf(p, now), Job: jobOf(p), SLA: slaOf(p),
		Paused: row.Paused, DryRun: p.DryRun, ConfigVersion: row.ConfigVersion,
		Period: per.String(), Current: per == cur, Explain: x, Now: now.UTC(), Path: url.PathEscape(p.ID),
		PrevPeriod: per.Prev().String(), NextPeriod: per.Next().String(),
	}
	d.CurrentURL = "/ui/pipelines/" + d.Path
	if d.Upstreams, d.Downstreams, err = h.dependencies(r, p); err != nil {
		return nil, err
	}
	if row.Paused && !row.PausedUntil.IsZero() {
		u := row.PausedUntil.UTC()
		d.PausedUntil = &u
	}
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	facts := run.BoardFacts{Paused: row.Paused, FirstLoaded: row.FirstLoadedAt}
	if rr, err := h.eng.Store().RunGet(ctx, key); err == nil {
		facts.Run = &rr
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if facts.Marks, d.Blocked, err = h.periodMarks(ctx, key); err != nil {
		return nil, err
	}
	d.State = run.BoardStateOf(p, per, facts, now)
	if dl, ok := run.NextDeadline(p, per, facts, now); ok {
		d.Deadline = &deadlineView{At: dl.At.UTC(), What: dl.What, Zone: d.Zone, Now: now}
	}
	page, err := h.eng.Store().EventList(ctx, store.EventListParams{PipelineID: p.ID, Period: per.String(), Limit: maxTimeline + 1})
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	if d.Timeline, err = h.eventViews(ctx, page.Events); err != nil {
		return nil, err
	}
	if len(d.Timeline) > maxTimeline {
		d.Timeline, d.More = d.Timeline[:maxTimeline], true
	}
	if d.Cells, err = h.grid(ctx, p, row, now); err != nil {
		return nil, err
	}
	bfs, err := h.eng.Store().BackfillList(ctx, p.ID)
	if err != nil {
		return nil, fmt.Errorf("backfills: %w", err)
	}
	d.Backfills = backfillsOf(bfs)
	back := cur.Prev()
	d.BackfillTo = back.String()
	for range 6 {
		back = back.Prev()
	}
	d.BackfillFrom = back.String()
	title := p.ID
	if !d.Current {
		title += " · " + d.Period
	}
	live := "/v1/events/stream?pipeline=" + url.QueryEscape(p.ID)
	return &view{name: "pipeline", title: title, nav: "overview", data: d, live: live}, nil
}

func scheduleOf(p *pipeline.Pipeline, now time.Time) scheduleView {
	s := scheduleView{Hourly: run.Hourly(p)}
	loc := p.Schedule.Location
	if c := p.Schedule.Cron; !c.IsZero() {
		s.Cron = c.String()
		s.NextTicks = c.Ticks(now, now.AddDate(0, 1, 0), loc, nextTicks)
	}
	if t := p.Schedule.Trigger; t != nil {
		s.Trigger = ruleText(t.Rule.Key, string(t.Rule.Op), t.Rule.Field, t.Rule.Value.String(), t.Rule.Value.IsNull())
		if !t.Deadline.IsZero() {
			s.Deadline = t.Deadline.String()
		}
	}
	if ex := p.Schedule.Exclude; !ex.Days.Empty() {
		s.Exclude = ex.Days.String()
		if ex.Calendar != "" {
			s.Exclude += " (calendar " + ex.Calendar + ")"
		}
	}
	if in := p.Schedule.Include; in != nil {
		s.Include = in.Days.String()
		if in.Calendar != "" {
			s.Include += " (calendar " + in.Calendar + ")"
		}
	}
	s.Eval = fmt.Sprintf("every %s for %s", p.Schedule.Evaluation.Interval, p.Schedule.Evaluation.Window)
	return s
}

func ruleText(key, op, field, value string, null bool) string {
	out := key + " " + op
	if field != "" {
		out += " " + field
	}
	if !null {
		out += " " + value
	}
	return out
}

func jobOf(p *pipeline.Pipeline) jobView {
	j := p.Job
	return jobView{Type: string(j.Type), MaxRetries: j.MaxRetries, MaxCodeRetries: j.MaxCodeRetries, MaxManualReruns: j.MaxManualReruns,
		MaxDriftReruns: j.MaxDriftReruns, PollInterval: j.PollInterval, PollWindow: j.PollWindow}
}

func slaOf(p *pipeline.Pipeline) *slaConfigView {
	s := p.SLA
	if s == nil {
		return nil
	}
	v := &slaConfigView{ExpectedDuration: s.ExpectedDuration, MaxDuration: s.MaxDuration, Zone: s.Location.String(), Critical: s.Critical}
	if !s.Deadline.IsZero() {
		v.Deadline = s.Deadline.String()
	}
	return v
}
