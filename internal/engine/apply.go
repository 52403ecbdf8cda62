package engine

import (
	"fmt"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

// request describes a run's job to the job port.
func (e *Engine) request(p *pipeline.Pipeline, r run.Run) trigger.Request {
	per, _ := decide.ParsePeriod(r.Period)
	vars := pipeline.TemplateVars{Pipeline: r.PipelineID, Schedule: r.ScheduleID, Date: per.Date.String(), RunID: decide.RunID(r)}
	if per.Hourly {
		vars.Hour = fmt.Sprintf("%02d", per.Hour)
	}
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
