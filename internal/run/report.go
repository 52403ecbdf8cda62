package run

import (
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// The job statuses the core tells apart (trigger.Status uses the same
// words); any other status means the job is still running.
const (
	JobStatusSucceeded = "succeeded"
	JobStatusFailed    = "failed"
)

// JobReport is a job system's answer about a run's job — from a poll, or
// from a synchronous job's start — in the core's terms.
type JobReport struct {
	// Known is false when the status could not be read (the poll call
	// failed): the job is treated as still running.
	Known   bool
	Status  string
	Failure Failure // when Status is JobStatusFailed
}

// Failed reports whether the job failed. Only then does AfterJobReport
// need the period's retries used and its exclusion, so the engine reads
// the ledger for a failure alone.
func (j JobReport) Failed() bool { return j.Known && j.Status == JobStatusFailed }

// AfterJobReport decides what follows a job's report: its success, its
// failure (a retry within the budget, or the end; retriesUsed and
// exclusion as for JobFailed, read only when j.Failed()), or — the job
// still running, or a status that could not be read — the next poll, or
// the end of the poll window.
func AfterJobReport(r Run, j JobReport, retriesUsed int, exclusion string, p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	switch {
	case j.Known && j.Status == JobStatusSucceeded:
		return JobSucceeded(r, now)
	case j.Failed():
		return JobFailed(r, j.Failure, retriesUsed, exclusion, p, now)
	}
	return AfterPollRunning(r, p, now)
}
