package run

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// A dry-run pipeline observes: where a live one would start a run, it
// evaluates the rules once and, if they pass, records that it would have
// triggered and projects the SLA. Nothing it does alerts about a job:
// DryRunEmits is the filter every event of a dry-run pipeline passes.

// DryRunEmits reports whether a dry-run pipeline may emit an event of type
// t: its own projections (event.GroupDryRun) and facts that are not alerts
// about a job (a backfill's progress, event.GroupBackfill, among them).
// The engine applies it to every event of a dry-run pipeline, whatever
// code path produced it.
func DryRunEmits(t event.Type) bool {
	if event.InGroup(t, event.GroupDryRun, event.GroupBackfill) {
		return true
	}
	switch t {
	case event.PostRunBaselineCaptured, event.ConfigInvalid, event.PipelinePaused, event.PipelineResumed:
		return true
	}
	return false
}

// DryRunFacts are what a dry-run pipeline's decision about a period reads.
type DryRunFacts struct {
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
func (f DryRunFacts) NeedsRules() bool { return f.TriggeredAt.IsZero() }

// DryRunDecision is what a dry-run pipeline does for a period.
type DryRunDecision struct {
	// MarkSeen: record that dry-run observed the period (MarkerDryRunSeen):
	// it belongs to dry-run whatever the rules say, so if the pipeline
	// goes live later the watchdog neither reports nor starts it.
	MarkSeen bool
	// Triggered: record the would-be trigger (MarkerDryRun, if absent) and
	// capture the post-run baseline, before Notes.
	Triggered bool
	Notes     []Note
}

// DryRunTrigger decides what a dry-run pipeline does at now where a live
// one would start the period's run: once the rules pass, the would-be
// trigger with its SLA projection (ProjectSLA) and completion; trigger
// data for a period that already had its would-be trigger is late data; a
// cron tick after it is nothing.
func DryRunTrigger(p *pipeline.Pipeline, per schedule.Period, f DryRunFacts, now time.Time) (DryRunDecision, error) {
	d := DryRunDecision{MarkSeen: !f.Seen}
	if !f.TriggeredAt.IsZero() {
		if f.Data {
			late := now.Sub(f.TriggeredAt)
			d.Notes = append(d.Notes, Note{Type: event.DryRunLateData, Message: fmt.Sprintf("dry-run: trigger data arrived %s after the would-be trigger", late), Detail: Detail("triggeredAt", f.TriggeredAt, "lateBy", late)})
		}
		return d, nil
	}
	if !f.Rules.Passed {
		return d, nil
	}
	d.Triggered = true
	d.Notes = append(d.Notes, Note{Type: event.DryRunWouldTrigger, Message: fmt.Sprintf("dry-run: would trigger %s job (%s)", p.Job.Type, f.Rules.Summary()), Detail: Detail("triggeredAt", now, "rulesEvaluated", len(p.Validation.Rules), "jobType", string(p.Job.Type))})
	pr, projected, err := ProjectSLA(p, per, now)
	if err != nil {
		return DryRunDecision{}, err
	}
	if projected {
		detail := []any{"triggeredAt", now, "estimatedCompletion", pr.EstimatedCompletion, "expectedDuration", p.SLA.ExpectedDuration}
		if pr.Status != "n/a" {
			detail = append(detail, "deadline", pr.Times.Deadline, "breachAt", pr.Times.Breach, "marginSeconds", int64(pr.Margin/time.Second))
		}
		detail = append(detail, "status", pr.Status)
		d.Notes = append(d.Notes, Note{Type: event.DryRunSLAProjection, Message: fmt.Sprintf("dry-run: projected completion %s, SLA %s", pr.EstimatedCompletion.UTC().Format(time.RFC3339), pr.Status), Detail: Detail(detail...)})
	}
	done := []any{"triggeredAt", now, "slaStatus", pr.Status}
	if !pr.EstimatedCompletion.IsZero() {
		done = append(done, "estimatedCompletion", pr.EstimatedCompletion)
	}
	d.Notes = append(d.Notes, Note{Type: event.DryRunCompleted, Message: "dry-run: would-be run complete (SLA " + pr.Status + ")", Detail: Detail(done...)})
	return d, nil
}

// DryRunDrift decides whether a post-run sensor of a dry-run pipeline
// drifted against the baseline captured at the period's would-be trigger
// (baseline: that baseline's data for the sensor's rule key; nil when the
// period had no would-be trigger or the baseline holds no such data).
func DryRunDrift(p *pipeline.Pipeline, sensorKey string, data sensor.Object, baseline *sensor.Object) (Note, bool) {
	if baseline == nil {
		return Note{}, false
	}
	d := Drift(*baseline, data, p.PostRun.DriftField, p.PostRun.DriftThreshold)
	if !d.Drifted {
		return Note{}, false
	}
	return Note{Type: event.DryRunDrift, Message: fmt.Sprintf("dry-run: %s drifted: %v → %v", sensorKey, d.Previous, d.Current),
		Detail: Detail("previousCount", d.Previous, "currentCount", d.Current, "delta", d.Delta, "driftThreshold", p.PostRun.DriftThreshold, "driftField", p.PostRun.DriftField, "sensorKey", sensorKey)}, true
}
