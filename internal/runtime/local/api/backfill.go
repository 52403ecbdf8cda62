package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/store"
)

// BackfillRequest is the body of POST /v1/pipelines/{id}/backfills.
// Only defaults to "missing", MaxActive to 1.
type BackfillRequest struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Only      string `json:"only"`
	MaxActive int    `json:"maxActive"`
	Reverse   bool   `json:"reverse"`
	DryRun    bool   `json:"dryRun"`
}

// BackfillPeriodView is one period of a backfill: its state and why.
type BackfillPeriodView struct {
	Period string `json:"period"`
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// BackfillCounts are a backfill's periods by state.
type BackfillCounts struct {
	Pending   int `json:"pending"`
	Active    int `json:"active"`
	Skipped   int `json:"skipped"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
}

// BackfillView is a stored backfill with its progress.
type BackfillView struct {
	PipelineID  string               `json:"pipelineId"`
	ID          string               `json:"id"`
	From        string               `json:"from"`
	To          string               `json:"to"`
	Only        string               `json:"only"`
	MaxActive   int                  `json:"maxActive"`
	Reverse     bool                 `json:"reverse"`
	RequestedAt time.Time            `json:"requestedAt"`
	RequestedBy string               `json:"requestedBy"`
	State       string               `json:"state"`
	EndedAt     *time.Time           `json:"endedAt,omitempty"`
	Counts      BackfillCounts       `json:"counts"`
	Periods     []BackfillPeriodView `json:"periods"`
}

// PlannedPeriodView is one period of a plan: whether it would run, why.
type PlannedPeriodView struct {
	Period string `json:"period"`
	Run    bool   `json:"run"`
	Reason string `json:"reason"`
}

// BackfillAnswer answers POST: the plan, and the stored backfill unless
// the request was a dry run.
type BackfillAnswer struct {
	PipelineID string              `json:"pipelineId"`
	DryRun     bool                `json:"dryRun"`
	Paused     bool                `json:"paused"`         // the backfill waits for a resume
	Observe    bool                `json:"pipelineDryRun"` // the pipeline is in dry-run: would-trigger events only
	Periods    []PlannedPeriodView `json:"periods"`
	Backfill   *BackfillView       `json:"backfill,omitempty"`
}

// BackfillList answers GET /v1/pipelines/{id}/backfills, oldest first.
type BackfillList struct {
	PipelineID string         `json:"pipelineId"`
	Backfills  []BackfillView `json:"backfills"`
}

func viewBackfill(b store.Backfill) BackfillView {
	c := backfill.CountPeriods(b.Periods)
	v := BackfillView{PipelineID: b.PipelineID, ID: b.ID, From: b.From, To: b.To, Only: string(b.Only), MaxActive: b.MaxActive, Reverse: b.Reverse,
		RequestedAt: b.RequestedAt, RequestedBy: b.RequestedBy, State: string(b.State),
		Counts: BackfillCounts{Pending: c.Pending, Active: c.Active, Skipped: c.Skipped, Succeeded: c.Succeeded, Failed: c.Failed},
		Periods: views(b.Periods, func(p backfill.Period) BackfillPeriodView {
			return BackfillPeriodView{Period: p.Period, State: string(p.State), Reason: p.Reason}
		})}
	if !b.EndedAt.IsZero() {
		v.EndedAt = &b.EndedAt
	}
	return v
}

// backfillError maps the engine's backfill refusals to their answers.
func backfillError(err error) error {
	switch {
	case errors.Is(err, engine.ErrBackfillRunning):
		return errorf(http.StatusConflict, codeConflict, "%s", err.Error())
	case errors.Is(err, engine.ErrUnknownBackfill):
		return errorf(http.StatusNotFound, codeNotFound, "%s", err.Error())
	}
	return err
}

// requestBackfill plans a backfill and, unless dryRun, starts it: 201
// with the stored backfill, or 200 with the plan alone.
func (s *server) requestBackfill(w http.ResponseWriter, r *http.Request) error {
	id, req, err := pipelineRequest[BackfillRequest](s, w, r, false)
	if err != nil {
		return err
	}
	if req.Only == "" {
		req.Only = string(backfill.OnlyMissing)
	}
	if req.MaxActive == 0 {
		req.MaxActive = 1
	}
	plan, err := s.eng.RequestBackfill(r.Context(), id, backfill.Request{From: req.From, To: req.To, Only: backfill.Only(req.Only), MaxActive: req.MaxActive, Reverse: req.Reverse}, req.DryRun, by(r))
	if err != nil {
		return backfillError(err)
	}
	ans := BackfillAnswer{PipelineID: id, DryRun: req.DryRun, Paused: plan.Paused, Observe: plan.DryRun,
		Periods: views(plan.Periods, func(p backfill.PlannedPeriod) PlannedPeriodView {
			return PlannedPeriodView{Period: p.Period.String(), Run: p.Run, Reason: p.Reason}
		})}
	status := http.StatusOK
	if plan.Backfill != nil {
		v := viewBackfill(*plan.Backfill)
		ans.Backfill, status = &v, http.StatusCreated
	}
	writeJSON(w, status, ans)
	return nil
}

// listBackfills answers a pipeline's backfills, oldest first.
func (s *server) listBackfills(r *http.Request) (BackfillList, error) {
	id := r.PathValue("id")
	bfs, err := s.eng.Backfills(r.Context(), id)
	if err != nil {
		return BackfillList{}, err
	}
	return BackfillList{PipelineID: id, Backfills: views(bfs, viewBackfill)}, nil
}

// getBackfill answers one backfill with its progress.
func (s *server) getBackfill(w http.ResponseWriter, r *http.Request) error {
	id, err := s.runningPipeline(r)
	if err != nil {
		return err
	}
	b, err := s.eng.Backfill(r.Context(), id, r.PathValue("bid"))
	if err != nil {
		return backfillError(err)
	}
	writeJSON(w, http.StatusOK, viewBackfill(b))
	return nil
}

// cancelBackfill stops a backfill: no new period starts, running ones
// finish. Cancelling one that ended answers it unchanged.
func (s *server) cancelBackfill(w http.ResponseWriter, r *http.Request) error {
	id, err := s.runningPipeline(r)
	if err != nil {
		return err
	}
	b, err := s.eng.CancelBackfill(r.Context(), id, r.PathValue("bid"), by(r))
	if err != nil {
		return backfillError(err)
	}
	writeJSON(w, http.StatusOK, viewBackfill(b))
	return nil
}
