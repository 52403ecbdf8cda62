package engine

import (
	"context"

	"github.com/interlockhq/interlock/internal/dryrun"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// dryRunTrigger is what a dry-run pipeline does where a live one would
// start a run (dryrun.Trigger). overlay is the sensor being written
// (trigger data); nil for a cron tick.
func (e *Engine) dryRunTrigger(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period, overlay *store.Sensor) error {
	seen, err := b.f.hasMarker(ctx, key, run.MarkerDryRunSeen)
	if err != nil {
		return err
	}
	f := dryrun.Facts{Seen: seen, Data: overlay != nil}
	if m, err := b.f.marker(ctx, key, run.MarkerDryRun); err != nil {
		return err
	} else if m != nil {
		f.TriggeredAt = m.At
	}
	if f.NeedsRules() {
		if f.Rules, err = e.evaluate(ctx, b.f, p, key, overlay, run.CauseSensor, b.now, b.now); err != nil {
			return err
		}
	}
	d, err := dryrun.Trigger(p, per, f, b.now)
	if err != nil {
		return err
	}
	if d.MarkSeen {
		b.marker(store.Marker{Key: key, Kind: run.MarkerDryRunSeen, At: b.now}, false)
	}
	if d.Triggered {
		b.marker(store.Marker{Key: key, Kind: run.MarkerDryRun, At: b.now}, true)
		if err := e.captureBaseline(ctx, b, p, key, per, overlay); err != nil {
			return err
		}
	}
	b.notes(key, d.Notes)
	return nil
}

// dryRunDrift reports drift of a post-run sensor of a dry-run pipeline
// against the baseline captured at its would-be trigger (dryrun.Drift).
func (e *Engine) dryRunDrift(ctx context.Context, b *batch, p *pipeline.Pipeline, s *store.Sensor, key run.Key, ruleKey string) error {
	triggered, err := b.f.hasMarker(ctx, key, run.MarkerDryRun)
	if err != nil || !triggered {
		return err // no would-be trigger: no baseline to read
	}
	var prev *sensor.Object
	base, err := b.f.baseline(ctx, key)
	if err != nil {
		return err
	}
	if base != nil {
		if data, ok := base.Sensors[ruleKey]; ok {
			prev = &data
		}
	}
	if note, ok := dryrun.Drift(p, s.Key, s.Data, prev); ok {
		b.notes(key, []run.Note{note})
	}
	return nil
}
