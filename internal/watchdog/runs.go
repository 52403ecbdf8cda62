package watchdog

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// staleRuns finds active runs past their time-to-live (SFN_TIMEOUT): the
// runtime sets them FAILED_FINAL, which is their dedup. A paused
// pipeline's runs held before their job started are left alone: the
// pause holds them on purpose, and Resume gives them a fresh window.
func staleRuns(s *Snapshot) ([]Finding, error) {
	var out []Finding
	for wp, r := range s.unheldRuns() {
		if r.State.Terminal() || r.ExpiresAt.IsZero() || !s.Now.After(r.ExpiresAt) {
			continue
		}
		out = append(out, Finding{
			Check:   CheckStaleRuns,
			Key:     r.Key,
			Event:   event.SFNTimeout,
			Message: fmt.Sprintf("run of %s in %s passed its time-to-live (%s) without a terminal state; it is set FAILED_FINAL", r.Period, r.State, local(r.ExpiresAt, wp.P.Schedule.Location)),
			Detail: detail(
				"ttlExpired", r.ExpiresAt,
				"state", string(r.State),
				"stateSince", r.StateSince,
				"generation", r.Generation,
				"attempt", r.Attempt,
				"jobRunId", r.JobRunID,
				"actionHint", "the run never reached a terminal state — check the job system for its real outcome, then request a rerun if needed",
			),
			Action: ActionFailRun,
			Run:    &r,
		})
	}
	sortFindings(out)
	return out, nil
}

// stuckRuns finds runs in TRIGGERING or RUNNING for longer than
// job.stuckAfter (else the snapshot's threshold, else the default):
// RUN_STUCK, once per run generation and state (StuckMarker). An
// EVALUATING run waiting for data is not stuck: SLA alerts and
// VALIDATION_EXHAUSTED report it.
func stuckRuns(s *Snapshot) ([]Finding, error) {
	var out []Finding
	for wp, r := range s.unheldRuns() {
		if r.State != run.Triggering && r.State != run.Running {
			continue
		}
		since := r.StateSince
		if since.IsZero() {
			since = r.UpdatedAt
		}
		if since.IsZero() {
			continue
		}
		threshold := stuckThreshold(s, wp)
		stuckFor := s.Now.Sub(since)
		if stuckFor <= threshold {
			continue
		}
		kind := StuckMarker(r)
		if s.hasMarker(r.Key, kind) {
			continue
		}
		hint := "the trigger call has not completed — check the job system and Interlock's logs"
		if r.State == run.Running {
			hint = "the job has not reported a result — check it in the job system"
		}
		out = append(out, Finding{
			Check:   CheckStuckRuns,
			Key:     r.Key,
			Event:   event.RunStuck,
			Message: fmt.Sprintf("run of %s stuck in %s for %s (threshold %s)", r.Period, r.State, stuckFor.Round(time.Second), threshold),
			Detail: detail(
				"state", string(r.State),
				"stateSince", since,
				"duration", stuckFor.Round(time.Second),
				"threshold", threshold,
				"generation", r.Generation,
				"attempt", r.Attempt,
				"jobRunId", r.JobRunID,
				"actionHint", hint,
			),
			Marker: kind,
		})
	}
	sortFindings(out)
	return out, nil
}

func stuckThreshold(s *Snapshot, wp *Pipeline) time.Duration {
	if d := wp.P.Job.StuckAfter; d != nil && *d > 0 {
		return *d
	}
	if s.StuckRunThreshold > 0 {
		return s.StuckRunThreshold
	}
	return DefaultStuckRunThreshold
}
