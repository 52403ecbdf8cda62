package dryrun

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/sla"
)

// A dry-run pipeline observes: where a live one would start a run, it
// evaluates the rules once and, if they pass, records that it would have
// triggered and projects the SLA. Nothing it does alerts about a job:
// Emits is the filter every event of a dry-run pipeline passes.

// Emits reports whether a dry-run pipeline may emit an event of type
// t: its own projections (event.GroupDryRun) and facts that are not alerts
// about a job (a backfill's progress, event.GroupBackfill, among them).
// The engine applies it to every event of a dry-run pipeline, whatever
// code path produced it.
func Emits(t event.Type) bool {
	if event.InGroup(t, event.GroupDryRun, event.GroupBackfill) {
		return true
	}
	switch t {
	case event.PostRunBaselineCaptured, event.ConfigInvalid, event.PipelinePaused, event.PipelineResumed:
		return true
	}
	return false
}

// Facts are what a dry-run pipeline's decision about a period reads.
type Facts struct {
	Seen bool // the period was observed before (MarkerDryRunSeen)
	// TriggeredAt is when the period's would-be trigger was recorded
	// (MarkerDryRun); zero: not yet.
	TriggeredAt time.Time
	// Data: the decision is about trigger data (a sensor write); false for
	// a cron tick, which is not data.
	Data bool
	// Rules is the validation rules' outcome on the period's sensors now;
	// read only when NeedsRules.
	Rules rule.Outcome
}

// NeedsRules reports whether the decision reads the rules' outcome: only
// for a period without a would-be trigger yet.
func (f Facts) NeedsRules() bool { return f.TriggeredAt.IsZero() }

// Decision is what a dry-run pipeline does for a period.
type Decision struct {
	// MarkSeen: record that dry-run observed the period (MarkerDryRunSeen):
	// it belongs to dry-run whatever the rules say, so if the pipeline
	// goes live later the watchdog neither reports nor starts it.
	MarkSeen bool
	// Triggered: record the would-be trigger (MarkerDryRun, if absent) and
	// capture the post-run baseline, before Notes.
	Triggered bool
	Notes     []run.Note
}

// Trigger decides what a dry-run pipeline does at now where a live
// one would start the period's run: once the rules pass, the would-be
// trigger with its SLA projection (sla.Project) and completion; trigger
// data for a period that already had its would-be trigger is late data; a
// cron tick after it is nothing.
func Trigger(p *pipeline.Pipeline, per schedule.Period, f Facts, now time.Time) (Decision, error) {
	d := Decision{MarkSeen: !f.Seen}
	if !f.TriggeredAt.IsZero() {
		if f.Data {
			late := now.Sub(f.TriggeredAt)
			d.Notes = append(d.Notes, run.Note{Type: event.DryRunLateData, Message: fmt.Sprintf("dry-run: trigger data arrived %s after the would-be trigger", late), Detail: run.Detail("triggeredAt", f.TriggeredAt, "lateBy", late)})
		}
		return d, nil
	}
	if !f.Rules.Passed {
		return d, nil
	}
	d.Triggered = true
	d.Notes = append(d.Notes, run.Note{Type: event.DryRunWouldTrigger, Message: fmt.Sprintf("dry-run: would trigger %s job (%s)", p.Job.Type, f.Rules.Summary()), Detail: run.Detail("triggeredAt", now, "rulesEvaluated", len(p.Validation.Rules), "jobType", string(p.Job.Type))})
	pr, projected, err := sla.Project(p, per, now)
	if err != nil {
		return Decision{}, err
	}
	if projected {
		detail := []any{"triggeredAt", now, "estimatedCompletion", pr.EstimatedCompletion, "expectedDuration", p.SLA.ExpectedDuration}
		if pr.Status != "n/a" {
			detail = append(detail, "deadline", pr.Times.Deadline, "breachAt", pr.Times.Breach, "marginSeconds", int64(pr.Margin/time.Second))
		}
		detail = append(detail, "status", pr.Status)
		d.Notes = append(d.Notes, run.Note{Type: event.DryRunSLAProjection, Message: fmt.Sprintf("dry-run: projected completion %s, SLA %s", pr.EstimatedCompletion.UTC().Format(time.RFC3339), pr.Status), Detail: run.Detail(detail...)})
	}
	done := []any{"triggeredAt", now, "slaStatus", pr.Status}
	if !pr.EstimatedCompletion.IsZero() {
		done = append(done, "estimatedCompletion", pr.EstimatedCompletion)
	}
	d.Notes = append(d.Notes, run.Note{Type: event.DryRunCompleted, Message: "dry-run: would-be run complete (SLA " + pr.Status + ")", Detail: run.Detail(done...)})
	return d, nil
}

// Drift decides whether a post-run sensor of a dry-run pipeline
// drifted against the baseline captured at the period's would-be trigger
// (baseline: that baseline's data for the sensor's rule key; nil when the
// period had no would-be trigger or the baseline holds no such data).
func Drift(p *pipeline.Pipeline, sensorKey string, data sensor.Object, baseline *sensor.Object) (run.Note, bool) {
	if baseline == nil {
		return run.Note{}, false
	}
	d := run.Drift(*baseline, data, p.PostRun.DriftField, p.PostRun.DriftThreshold)
	if !d.Drifted {
		return run.Note{}, false
	}
	return run.Note{Type: event.DryRunDrift, Message: fmt.Sprintf("dry-run: %s drifted: %v → %v", sensorKey, d.Previous, d.Current),
		Detail: run.Detail("previousCount", d.Previous, "currentCount", d.Current, "delta", d.Delta, "driftThreshold", p.PostRun.DriftThreshold, "driftField", p.PostRun.DriftField, "sensorKey", sensorKey)}, true
}
