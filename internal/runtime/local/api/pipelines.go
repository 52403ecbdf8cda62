package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sla"
	"github.com/interlockhq/interlock/internal/store"
)

// PipelineView is a pipeline as status shows it: its identity and
// operator state, its current period (in the schedule's time zone) with
// that period's run and SLA, and the next cron tick.
type PipelineView struct {
	ID            string     `json:"id"`
	Owner         string     `json:"owner"`
	Description   string     `json:"description,omitempty"`
	ScheduleID    string     `json:"scheduleId"`
	Timezone      string     `json:"timezone"`
	DryRun        bool       `json:"dryRun"`
	Paused        bool       `json:"paused"`
	PausedUntil   *time.Time `json:"pausedUntil,omitempty"` // absent while paused: until resumed
	ConfigVersion int64      `json:"configVersion"`
	CurrentPeriod string     `json:"currentPeriod"`
	Run           *RunBrief  `json:"run"`                // null: the current period has no run
	SLA           *SLAView   `json:"sla,omitempty"`      // the current period's absolute SLA
	NextTick      *time.Time `json:"nextTick,omitempty"` // the next cron tick; absent without cron
}

// RunBrief is the current period's run in a pipeline view.
type RunBrief struct {
	State      run.State   `json:"state"`
	Outcome    run.Outcome `json:"outcome,omitempty"`
	Attempt    int         `json:"attempt"`
	Generation int         `json:"generation"`
	Cause      run.Cause   `json:"cause"`
	StateSince time.Time   `json:"stateSince"`
}

// SLAView is a period's resolved sla.deadline.
type SLAView struct {
	Deadline string     `json:"deadline"` // as configured
	Timezone string     `json:"timezone"` // the zone it is read in (sla.timezone, default schedule.timezone)
	Warning  *time.Time `json:"warningAt,omitempty"`
	Breach   time.Time  `json:"breachAt"`
	// SLA alerts are forward-only: a warning or breach time that came
	// before the pipeline was first loaded (LoadedAt, set when one did)
	// is not reported — no SLA_WARNING, no SLA_BREACH nor verdict.
	LoadedAt          *time.Time `json:"loadedAt,omitempty"`
	WarningBeforeLoad bool       `json:"warningBeforeLoad,omitempty"`
	BreachBeforeLoad  bool       `json:"breachBeforeLoad,omitempty"`
}

type PipelineList struct {
	Pipelines []PipelineView `json:"pipelines"`
}

// listPipelines returns every pipeline the engine runs, by id.
func (s *server) listPipelines(r *http.Request) (PipelineList, error) {
	ids, err := s.eng.Pipelines(r.Context())
	if err != nil {
		return PipelineList{}, err
	}
	now := s.eng.Now()
	out := PipelineList{Pipelines: make([]PipelineView, 0, len(ids))}
	for _, id := range ids {
		p, row, err := s.eng.Pipeline(r.Context(), id)
		if errors.Is(err, engine.ErrUnknownPipeline) {
			continue // removed since the listing
		}
		if err != nil {
			return PipelineList{}, err
		}
		v, err := s.view(r.Context(), p, row, now)
		if err != nil {
			return PipelineList{}, err
		}
		out.Pipelines = append(out.Pipelines, v)
	}
	return out, nil
}

// getPipeline returns one pipeline.
func (s *server) getPipeline(r *http.Request) (PipelineView, error) {
	return s.viewOf(r.Context(), r.PathValue("id"))
}

// viewOf builds the view of a running pipeline from its stored row.
func (s *server) viewOf(ctx context.Context, id string) (PipelineView, error) {
	p, row, err := s.loaded(ctx, id)
	if err != nil {
		return PipelineView{}, err
	}
	return s.view(ctx, p, row, s.eng.Now())
}

func (s *server) view(ctx context.Context, p *pipeline.Pipeline, row store.Pipeline, now time.Time) (PipelineView, error) {
	cur := run.CurrentPeriod(p, now)
	v := PipelineView{
		ID:            p.ID,
		Owner:         p.Owner,
		Description:   p.Description,
		ScheduleID:    p.ScheduleID(),
		Timezone:      p.Schedule.Location.String(),
		DryRun:        p.DryRun,
		Paused:        row.Paused,
		ConfigVersion: row.ConfigVersion,
		CurrentPeriod: cur.String(),
	}
	if row.Paused && !row.PausedUntil.IsZero() {
		v.PausedUntil = utcPtr(row.PausedUntil)
	}
	r, err := s.eng.Store().RunGet(ctx, run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: cur.String()})
	switch {
	case err == nil:
		v.Run = &RunBrief{State: r.State, Outcome: r.Outcome, Attempt: r.Attempt, Generation: r.Generation, Cause: r.Cause, StateSince: r.StateSince.UTC()}
	case !errors.Is(err, store.ErrNotFound):
		return v, err
	}
	// A deadline that does not resolve for this period is left out here;
	// explain shows the period in detail.
	if times, ok, err := sla.ResolveAbsolute(p, cur); err == nil && ok {
		v.SLA = &SLAView{Deadline: times.Deadline, Timezone: p.SLA.Location.String(), Breach: times.Breach.UTC()}
		if !times.Warning.IsZero() {
			v.SLA.Warning = utcPtr(times.Warning)
		}
		v.SLA.WarningBeforeLoad, v.SLA.BreachBeforeLoad = sla.BeforeLoad(times, row.FirstLoadedAt)
		if v.SLA.WarningBeforeLoad || v.SLA.BreachBeforeLoad {
			v.SLA.LoadedAt = utcPtr(row.FirstLoadedAt)
		}
	}
	if c := p.Schedule.Cron; !c.IsZero() {
		if next := c.Next(now, p.Schedule.Location); !next.IsZero() {
			v.NextTick = utcPtr(next)
		}
	}
	return v, nil
}

func utcPtr(t time.Time) *time.Time {
	u := t.UTC()
	return &u
}
