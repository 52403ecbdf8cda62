package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/board"
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
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
	State      board.State
	Summary    summaryView
	Deadline   *deadlineView
	// UTCOnly: the pipeline and its SLA read time in UTC, so the
	// deadlines have one column.
	UTCOnly bool
	// Budgets are the period's budgets as the decisions count them.
	Budgets  []budgetView
	Explain  engine.Explanation
	Timeline []eventView
	More     bool // the timeline was cut at maxTimeline
	// Blocked are the downstream problems this period is the root cause
	// of, not yet released (docs/root-cause.md).
	Blocked    []deps.BlockedCondition
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
	Counts                    backfill.Counts
	Running                   bool
	// Periods are the range's periods in run order, each with its state
	// and why it was skipped or how its run ended (as the CLI lists them).
	Periods []backfill.Period
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
		running := b.State == backfill.Running
		if !running && ended {
			continue
		}
		ended = ended || !running
		c := backfill.CountPeriods(b.Periods)
		out = append(out, backfillView{ID: b.ID, State: string(b.State), From: b.From, To: b.To, Only: string(b.Only), MaxActive: b.MaxActive,
			Done: c.Succeeded + c.Failed + c.Skipped, Total: len(b.Periods), Counts: c, Running: running, Periods: b.Periods})
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
	reach, err := h.silenceReachAt(r.Context(), now)
	if err != nil {
		return nil, err
	}
	row, err := h.rowOf(r.Context(), &e, now, reach)
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
		if err := h.checkPeriod(ctx, p, per, now); err != nil {
			return nil, err
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
	facts := board.Facts{Paused: row.Paused, FirstLoaded: row.FirstLoadedAt}
	if rr, err := h.eng.Store().RunGet(ctx, key); err == nil {
		facts.Run = &rr
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if facts.Marks, d.Blocked, err = h.periodMarks(ctx, key); err != nil {
		return nil, err
	}
	d.State = board.StateOf(p, per, facts, now)
	d.UTCOnly = p.Schedule.Location == time.UTC && (x.Deadlines.SLATimezone == "" || x.Deadlines.SLATimezone == "UTC")
	if d.Budgets, err = h.budgets(ctx, p, key); err != nil {
		return nil, err
	}
	if dl, ok := board.NextDeadline(p, per, facts, now); ok {
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
	d.Summary = summaryOf(summaryFacts{State: d.State, Run: facts.Run, Explain: x, PausedUntil: d.PausedUntil, Timeline: d.Timeline, Zone: d.Zone})
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

// checkPeriod answers 404 for a period page the pipeline never runs: a
// period of the wrong kind (an hour of a daily pipeline), one not started
// yet, or one before the earliest period — the periods a rerun is refused
// for (run.CheckRerunPeriod, with the trigger sensors that decide a
// trigger-only pipeline's kinds). The page links back to the pipeline.
func (h *handler) checkPeriod(ctx context.Context, p *pipeline.Pipeline, per schedule.Period, now time.Time) error {
	var recs []sensor.Record
	if t := p.Schedule.Trigger; t != nil && t.Rule.Key != "" {
		stored, err := h.eng.Store().SensorListPrefix(ctx, store.SensorListPrefixParams{PipelineID: p.ID, Prefix: t.Rule.Key})
		if err != nil {
			return fmt.Errorf("trigger sensors of %s: %w", p.ID, err)
		}
		for _, s := range stored {
			recs = append(recs, s.Record())
		}
	}
	if err := run.CheckRerunPeriod(p, per, now, recs); err != nil {
		return &pageError{status: http.StatusNotFound, msg: "no such period: " + err.Error(),
			backHref: "/ui/pipelines/" + url.PathEscape(p.ID), backText: "Back to " + p.ID + " and its current period"}
	}
	return nil
}

// budgetView is one budget of a period as its decision counts it.
type budgetView struct {
	Name       string // what draws on it
	Setting    string // the setting that bounds it
	Used, Max  int
	Left       int
	Note       string
	Unbudgeted bool // counted, bounded by no budget (backfill reruns)
}

// budgets reads the period's ledger and shows it as the decisions count
// it (run.BudgetsByReason); only the words are the dashboard's.
func (h *handler) budgets(ctx context.Context, p *pipeline.Pipeline, key run.Key) ([]budgetView, error) {
	ledger, err := h.eng.Store().LedgerList(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("rerun ledger of %s %s: %w", key.PipelineID, key.Period, err)
	}
	reasons := make([]string, len(ledger))
	for i, l := range ledger {
		reasons[i] = l.Reason
	}
	bs := run.BudgetsByReason(p, reasons)
	out := make([]budgetView, len(bs))
	for i, b := range bs {
		v := budgetView{Setting: b.Setting, Used: b.Used, Max: b.Max, Left: b.Left(), Unbudgeted: b.Unbudgeted}
		switch {
		case b.Unbudgeted:
			v.Name, v.Note = "reruns by a backfill", "a backfill's reruns draw on no budget"
		case b.Setting == run.SettingMaxRetries:
			v.Name = "automatic retries after a TRANSIENT or TIMEOUT failure"
		case b.Setting == run.SettingMaxCodeRetries:
			v.Name, v.Note = "automatic retries after a PERMANENT failure", "the same count as the line above: every automatic retry counts on both"
		case b.Setting == run.SettingMaxDriftReruns:
			v.Name = "reruns for drift and late data (shared)"
		case b.Reason == "":
			v.Name = "manual reruns, each reason on its own"
		default:
			v.Name, v.Note = fmt.Sprintf("reruns with reason %q", b.Reason), "each reason is counted on its own"
		}
		out[i] = v
	}
	return out, nil
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
