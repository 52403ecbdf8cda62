package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// dryRunTrigger is what a dry-run pipeline does where a live one would
// start a run: evaluate the rules once and, if they pass, record that it
// would have triggered and project the SLA. Later trigger data (overlay,
// the sensor being written) for the same period is reported as late; a
// cron tick (no overlay) is not data.
func (e *Engine) dryRunTrigger(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period, overlay *store.Sensor) error {
	// The period belongs to dry-run whatever the rules say: if the
	// pipeline goes live later, the watchdog must not report or start it.
	if seen, err := e.hasMarker(ctx, key, run.MarkerDryRunSeen); err != nil {
		return err
	} else if !seen {
		b.marker(store.Marker{Key: key, Kind: run.MarkerDryRunSeen, At: b.now}, false)
	}
	m, err := e.st.MarkerGet(ctx, key, run.MarkerDryRun)
	if err == nil && overlay == nil {
		return nil // a cron tick after the would-be trigger is not data
	}
	if err == nil {
		b.emit(key, event.DryRunLateData, fmt.Sprintf("dry-run: trigger data arrived %s after the would-be trigger", b.now.Sub(m.At)), run.Detail("triggeredAt", m.At, "lateBy", b.now.Sub(m.At)))
		return nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	out, err := e.evaluate(ctx, p, key, overlay, b.now)
	if err != nil || !out.Passed {
		return err
	}
	b.marker(store.Marker{Key: key, Kind: run.MarkerDryRun, At: b.now}, true)
	if err := e.captureBaseline(ctx, b, p, key, per, overlay); err != nil {
		return err
	}
	b.emit(key, event.DryRunWouldTrigger, fmt.Sprintf("dry-run: would trigger %s job (%s)", p.Job.Type, out.Summary()), run.Detail("triggeredAt", b.now, "rulesEvaluated", len(p.Validation.Rules), "jobType", string(p.Job.Type)))
	pr, projected, err := run.ProjectSLA(p, per, b.now)
	if err != nil {
		return err
	}
	slaStatus, est := pr.Status, pr.EstimatedCompletion
	if projected {
		detail := []any{"triggeredAt", b.now, "estimatedCompletion", est, "expectedDuration", p.SLA.ExpectedDuration}
		if pr.Status != "n/a" {
			detail = append(detail, "deadline", pr.Times.Deadline, "breachAt", pr.Times.Breach, "marginSeconds", int64(pr.Margin/time.Second))
		}
		detail = append(detail, "status", slaStatus)
		b.emit(key, event.DryRunSLAProjection, fmt.Sprintf("dry-run: projected completion %s, SLA %s", est.UTC().Format(time.RFC3339), slaStatus), run.Detail(detail...))
	}
	done := []any{"triggeredAt", b.now, "slaStatus", slaStatus}
	if !est.IsZero() {
		done = append(done, "estimatedCompletion", est)
	}
	b.emit(key, event.DryRunCompleted, "dry-run: would-be run complete (SLA "+slaStatus+")", run.Detail(done...))
	return nil
}

// dryRunDrift reports drift of a post-run sensor of a dry-run pipeline
// against the baseline captured at its would-be trigger.
func (e *Engine) dryRunDrift(ctx context.Context, b *batch, p *pipeline.Pipeline, s *store.Sensor, key run.Key, ruleKey string) error {
	if ok, err := e.hasMarker(ctx, key, run.MarkerDryRun); err != nil || !ok {
		return err
	}
	base, err := e.st.BaselineGet(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	prev, ok := base.Sensors[ruleKey]
	if !ok {
		return nil
	}
	d := run.Drift(prev, s.Data, p.PostRun.DriftField, p.PostRun.DriftThreshold)
	if d.Drifted {
		b.emit(key, event.DryRunDrift, fmt.Sprintf("dry-run: %s drifted: %v → %v", s.Key, d.Previous, d.Current), run.Detail("previousCount", d.Previous, "currentCount", d.Current, "delta", d.Delta, "driftThreshold", p.PostRun.DriftThreshold, "driftField", p.PostRun.DriftField, "sensorKey", s.Key))
	}
	return nil
}
