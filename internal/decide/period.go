package decide

import (
	"log/slog"

	"github.com/interlockhq/interlock/internal/dryrun"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// StartPeriod opens the period's run as run.PeriodStart decides: an
// excluded period is reported once, a dry-run pipeline only observes, a
// paused one starts nothing, a period with a run keeps it. The run's
// first evaluation happens in the same commit, so a sensor write that
// completes the rules is decided at once.
func (o *Outcome) StartPeriod(lp *Pipeline, key run.Key, per schedule.Period, cause run.Cause, overlay *store.Sensor) error {
	p := lp.P
	existing, err := o.RunOf(key)
	if err != nil {
		return err
	}
	switch run.PeriodStart(p, per, lp.Row.Paused, existing) {
	case run.StartExcluded:
		reported, err := o.F.HasMarker(key, run.MarkerExcluded)
		if err != nil {
			return err
		}
		if note, ok := run.ExcludedStart(p, per, cause, reported); ok {
			o.Notes(key, []run.Note{note})
			o.Marker(store.Marker{Key: key, Kind: run.MarkerExcluded, At: o.Now}, true)
		}
		return nil
	case run.StartDryRun:
		return o.dryRunTrigger(p, key, per, overlay)
	case run.StartHeld:
		o.log(slog.LevelInfo, "pipeline paused: period not started", "pipeline", p.ID, "period", key.Period, "cause", cause)
		return nil
	case run.StartExists:
		return nil
	}
	r, eff := run.Start(key, cause, lp.Row.ConfigVersion, p, o.Now)
	if err := o.ArmSLA(p, key, per); err != nil {
		return err
	}
	return o.EvaluateRun(lp, nil, &r, eff, overlay, nil)
}

// RunOf returns the run of a period, also when it was created under the
// other schedule id (before a reload added or removed the cron), or nil.
func (o *Outcome) RunOf(key run.Key) (*run.Run, error) {
	for _, k := range []run.Key{key, run.OtherSchedule(key)} {
		r, err := o.F.Run(k)
		if r != nil || err != nil {
			return r, err
		}
	}
	return nil, nil
}

// dryRunTrigger is what a dry-run pipeline does where a live one would
// start a run (dryrun.Trigger). overlay is the sensor being written
// (trigger data); nil for a cron tick.
func (o *Outcome) dryRunTrigger(p *pipeline.Pipeline, key run.Key, per schedule.Period, overlay *store.Sensor) error {
	seen, err := o.F.HasMarker(key, run.MarkerDryRunSeen)
	if err != nil {
		return err
	}
	f := dryrun.Facts{Seen: seen, Data: overlay != nil}
	if m, err := o.F.Marker(key, run.MarkerDryRun); err != nil {
		return err
	} else if m != nil {
		f.TriggeredAt = m.At
	}
	if f.NeedsRules() {
		if f.Rules, err = Evaluate(o.F, o.Rules, p, key, overlay, run.CauseSensor, o.Now, o.Now); err != nil {
			return err
		}
	}
	d, err := dryrun.Trigger(p, per, f, o.Now)
	if err != nil {
		return err
	}
	if d.MarkSeen {
		o.Marker(store.Marker{Key: key, Kind: run.MarkerDryRunSeen, At: o.Now}, false)
	}
	if d.Triggered {
		o.Marker(store.Marker{Key: key, Kind: run.MarkerDryRun, At: o.Now}, true)
		if err := o.CaptureBaseline(p, key, per, overlay); err != nil {
			return err
		}
	}
	o.Notes(key, d.Notes)
	return nil
}

// dryRunDrift reports drift of a post-run sensor of a dry-run pipeline
// against the baseline captured at its would-be trigger (dryrun.Drift).
func (o *Outcome) dryRunDrift(p *pipeline.Pipeline, s *store.Sensor, key run.Key, ruleKey string) error {
	triggered, err := o.F.HasMarker(key, run.MarkerDryRun)
	if err != nil || !triggered {
		return err // no would-be trigger: no baseline to read
	}
	var prev *sensor.Object
	base, err := o.F.Baseline(key)
	if err != nil {
		return err
	}
	if base != nil {
		if data, ok := base.Sensors[ruleKey]; ok {
			prev = &data
		}
	}
	if note, ok := dryrun.Drift(p, s.Key, s.Data, prev); ok {
		o.Notes(key, []run.Note{note})
	}
	return nil
}
