package engine

import (
	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

// request describes a run's job to the job port (its template
// variables: decide.JobVars).
func (e *Engine) request(p *pipeline.Pipeline, r run.Run) trigger.Request {
	vars := decide.JobVars(r)
	return trigger.Request{
		PipelineID: r.PipelineID,
		ScheduleID: r.ScheduleID,
		Period:     r.Period,
		RunID:      vars.RunID,
		Attempt:    r.Attempt + 1,
		DryRun:     p.DryRun,
		Type:       string(p.Job.Type),
		Config:     p.Job.Config,
		Vars:       vars,
		JobRunID:   r.JobRunID,
		Meta:       r.JobMeta,
	}
}
