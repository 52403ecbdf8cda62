package api

import (
	"net/http"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// RunView is a stored run. Zero times are left out.
type RunView struct {
	PipelineID      string       `json:"pipelineId"`
	ScheduleID      string       `json:"scheduleId"`
	Period          string       `json:"period"`
	State           run.State    `json:"state"`
	Outcome         run.Outcome  `json:"outcome,omitempty"`
	Cause           run.Cause    `json:"cause"`
	Generation      int          `json:"generation"`
	Attempt         int          `json:"attempt"`
	ConfigVersion   int64        `json:"configVersion"`
	CreatedAt       time.Time    `json:"createdAt,omitzero"`
	UpdatedAt       time.Time    `json:"updatedAt,omitzero"`
	StateSince      time.Time    `json:"stateSince,omitzero"`
	EvalDeadline    time.Time    `json:"evaluationWindowCloses,omitzero"`
	TriggerInFlight bool         `json:"triggerInFlight,omitempty"`
	JobRunID        string       `json:"jobRunId,omitempty"`
	JobStartedAt    time.Time    `json:"jobStartedAt,omitzero"`
	PollDeadline    time.Time    `json:"pollWindowCloses,omitzero"`
	EndedAt         time.Time    `json:"endedAt,omitzero"`
	LastFailure     *FailureView `json:"lastFailure,omitempty"`
}

type FailureView struct {
	Category run.Category `json:"category"`
	Message  string       `json:"message"`
}

func viewRun(r run.Run) RunView {
	v := RunView{
		PipelineID:      r.PipelineID,
		ScheduleID:      r.ScheduleID,
		Period:          r.Period,
		State:           r.State,
		Outcome:         r.Outcome,
		Cause:           r.Cause,
		Generation:      r.Generation,
		Attempt:         r.Attempt,
		ConfigVersion:   r.ConfigVersion,
		CreatedAt:       utc(r.CreatedAt),
		UpdatedAt:       utc(r.UpdatedAt),
		StateSince:      utc(r.StateSince),
		TriggerInFlight: r.TriggerInFlight,
		JobRunID:        r.JobRunID,
		JobStartedAt:    utc(r.JobStartedAt),
		EndedAt:         utc(r.EndedAt),
	}
	// The windows only mean something in the state that has them.
	if r.State == run.Evaluating {
		v.EvalDeadline = utc(r.EvalDeadline)
	}
	if r.State == run.Running {
		v.PollDeadline = utc(r.PollDeadline)
	}
	if f := r.LastFailure; f != nil {
		v.LastFailure = &FailureView{Category: f.Category, Message: f.Message}
	}
	return v
}

// utc renders t in UTC; the zero time stays zero (and is omitted).
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

type RunList struct {
	PipelineID string    `json:"pipelineId"`
	Runs       []RunView `json:"runs"`
}

// listRuns returns a pipeline's runs, newest period first, optionally of
// one period (?period=2026-03-10 or 2026-03-10T07) and at most ?limit=.
func (s *server) listRuns(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	q, err := readQuery(r, "limit", "period")
	if err != nil {
		return err
	}
	limit, err := limitParam(q)
	if err != nil {
		return err
	}
	params := store.RunListParams{PipelineID: id, Limit: limit}
	if ps, err := single(q, "period"); err != nil {
		return err
	} else if ps != "" {
		per, err := schedule.ParsePeriod(ps)
		if err != nil {
			return errorf(http.StatusBadRequest, codeBadRequest, "%s", err.Error())
		}
		params.Period = per.String()
	}
	if _, _, err := s.loaded(r.Context(), id); err != nil {
		return err
	}
	runs, err := s.eng.Store().RunList(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, RunList{PipelineID: id, Runs: views(runs, viewRun)})
	return nil
}
