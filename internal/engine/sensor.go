package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// MaxSensorKey bounds sensor key length.
const MaxSensorKey = 256

// PutResult says what a sensor write did.
type PutResult struct {
	Sensor  store.Sensor
	Changed bool   // the content differs from what was stored (new data)
	Period  string // the period the write belongs to
}

// CheckSensorKey reports why key cannot be a sensor key.
func CheckSensorKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: sensor key is empty", ErrInvalidSensor)
	case len(key) > MaxSensorKey:
		return fmt.Errorf("%w: sensor key is longer than %d bytes", ErrInvalidSensor, MaxSensorKey)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: sensor key is not valid UTF-8", ErrInvalidSensor)
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: sensor key contains control characters", ErrInvalidSensor)
	}
	return nil
}

// PutSensor stores a sensor and, when its content is new, decides what it
// means — start a period's run, evaluate a waiting run, report late data or
// post-run drift — in the same atomic commit. It returns once the write is
// durable. A write identical to the stored content is acknowledged but is
// not new data: it starts nothing.
func (e *Engine) PutSensor(ctx context.Context, pipelineID, key string, data sensor.Object) (PutResult, error) {
	if err := CheckSensorKey(key); err != nil {
		return PutResult{}, err
	}
	var res PutResult
	err := e.retry(ctx, "sensor "+pipelineID+"/"+key, func() error {
		lp, err := e.pipelineOf(ctx, pipelineID)
		if err != nil {
			return err
		}
		if lp == nil {
			return unknown(pipelineID)
		}
		p := lp.p
		now := e.clk.Now()
		per, err := run.SensorWritePeriod(p, key, data, now)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidSensor, err)
		}
		old, err := e.st.SensorGet(ctx, pipelineID, key)
		exists := err == nil
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		s := store.Sensor{PipelineID: pipelineID, Key: key, Data: data, ChangedAt: now, WrittenAt: now}
		var stored *sensor.Record
		if exists {
			rec := old.Record()
			stored = &rec
		}
		changed := run.NewData(p, key, stored, data, per)
		if !changed {
			s.ChangedAt = old.ChangedAt
		}
		b := e.newBatch(lp, now)
		b.c.Sensors = append(b.c.Sensors, store.SensorWrite{Sensor: s, ExpectVersion: old.Version})
		if changed {
			if err := e.onNewData(ctx, b, lp, &s, per); err != nil {
				return err
			}
		}
		if err := b.commit(ctx); err != nil {
			return err
		}
		s.Version = old.Version + 1
		res = PutResult{Sensor: s, Changed: changed, Period: per.String()}
		return nil
	})
	return res, err
}

// DeleteSensor removes a stored sensor. It decides nothing: a sensor that
// disappears only makes rules that need it fail at their next evaluation.
func (e *Engine) DeleteSensor(ctx context.Context, pipelineID, key string) error {
	return e.retry(ctx, "delete sensor "+pipelineID+"/"+key, func() error {
		lp, err := e.pipelineOf(ctx, pipelineID)
		if err != nil {
			return err
		}
		if lp == nil {
			return unknown(pipelineID)
		}
		b := e.newBatch(lp, e.clk.Now())
		b.c.SensorDeletes = append(b.c.SensorDeletes, store.SensorDelete{PipelineID: pipelineID, Key: key})
		return b.commit(ctx)
	})
}

// onNewData routes a changed sensor: trigger keys may start the period;
// post-run keys are checked against the baseline; any other key may
// complete the rules of a run that is waiting.
func (e *Engine) onNewData(ctx context.Context, b *batch, lp *loadedPipeline, s *store.Sensor, per schedule.Period) error {
	p := lp.p
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	if run.MatchesTrigger(p, s.Key) {
		return e.triggerSensor(ctx, b, lp, s, key, per)
	}
	if ruleKey, ok := run.MatchesPostRun(p, s.Key); ok {
		return e.postRunSensor(ctx, b, lp, s, key, per, ruleKey)
	}
	return e.evaluateIfWaiting(ctx, b, lp, key, s)
}

// evaluateIfWaiting evaluates the period's run now if it is waiting for
// its rules, instead of at its next interval.
func (e *Engine) evaluateIfWaiting(ctx context.Context, b *batch, lp *loadedPipeline, key run.Key, s *store.Sensor) error {
	r, err := e.st.RunGet(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || r.State != run.Evaluating || lp.row.Paused {
		return err
	}
	return e.evaluateRun(ctx, b, lp, &r, &r, run.Effect{}, s, nil)
}

func (e *Engine) triggerSensor(ctx context.Context, b *batch, lp *loadedPipeline, s *store.Sensor, key run.Key, per schedule.Period) error {
	p := lp.p
	cond := p.Schedule.Trigger.Rule
	cond.Key = s.Key
	res := rule.Evaluate(cond, rule.SensorMap{s.Key: s.Record()}, b.now, e.rules)
	if !res.Passed {
		return nil
	}
	if !run.Excluded(p, per) && !p.DryRun {
		if err := e.firstArrival(ctx, b, p, key, per); err != nil {
			return err
		}
	}
	existing, err := e.runOf(ctx, key)
	if err != nil {
		return err
	}
	if existing == nil {
		return e.startPeriod(ctx, b, lp, key, per, run.CauseSensor, s)
	}
	r := *existing
	key = r.Key // the period's run may be keyed under the schedule id of an earlier config
	switch {
	case lp.row.Paused:
		return nil // recorded; Resume handles it as if it had just arrived
	case r.State == run.Evaluating:
		return e.evaluateRun(ctx, b, lp, &r, &r, run.Effect{}, s, nil)
	case r.State == run.Completed:
		b.emit(key, event.LateDataArrival, fmt.Sprintf("new data for %s arrived after the job succeeded (sensor %s)", key.Period, s.Key), run.Detail("sensorKey", s.Key, "completedAt", r.EndedAt))
		return e.rerun(ctx, b, lp, key, &r, run.ReasonLateData, "sensor "+s.Key, s)
	}
	return nil
}

// firstArrival records the first trigger-sensor arrival of a period (the
// start of a relative SLA) and arms the relative SLA timers.
func (e *Engine) firstArrival(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period) error {
	seen, err := e.hasMarker(ctx, key, run.MarkerFirstArrival)
	if err != nil || seen {
		return err
	}
	b.marker(store.Marker{Key: key, Kind: run.MarkerFirstArrival, At: b.now}, true)
	if p.SLA == nil || p.SLA.MaxDuration == 0 {
		return nil
	}
	return e.armSLAAt(ctx, b, p, key, per, b.now)
}

// postRunSensor checks a post-run sensor against the baseline captured
// when the job succeeded: drift requests a rerun; otherwise the post-run
// rules are evaluated. While the job is still going, drift is only
// reported.
func (e *Engine) postRunSensor(ctx context.Context, b *batch, lp *loadedPipeline, s *store.Sensor, key run.Key, per schedule.Period, ruleKey string) error {
	p := lp.p
	if p.DryRun {
		return e.dryRunDrift(ctx, b, p, s, key, ruleKey)
	}
	r, err := e.st.RunGet(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || r.State == run.FailedFinal {
		return err
	}
	base, err := e.st.BaselineGet(ctx, key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var drift run.DriftResult
	if err == nil {
		if prev, ok := base.Sensors[ruleKey]; ok {
			drift = run.Drift(prev, s.Data, p.PostRun.DriftField, p.PostRun.DriftThreshold)
		}
	}
	detail := run.Detail("previousCount", drift.Previous, "currentCount", drift.Current, "delta", drift.Delta,
		"driftThreshold", p.PostRun.DriftThreshold, "driftField", p.PostRun.DriftField, "sensorKey", s.Key)
	if r.State != run.Completed {
		if drift.Drifted {
			b.emit(key, event.PostRunDriftInflight, fmt.Sprintf("%s drifted while the job was running: %s %v → %v (informational)", s.Key, p.PostRun.DriftField, drift.Previous, drift.Current), detail)
		}
		return nil
	}
	// The watchdog's missing-post-run-sensor check reads this record: it
	// outlives the sensor, which may be rewritten for the next period.
	b.marker(store.Marker{Key: key, Kind: run.MarkerPostRunArrived, At: b.now, Detail: run.Detail("sensorKey", s.Key)}, false)
	if drift.Drifted {
		b.emit(key, event.PostRunDrift, fmt.Sprintf("%s drifted after completion: %s %v → %v (threshold %v)", s.Key, p.PostRun.DriftField, drift.Previous, drift.Current, p.PostRun.DriftThreshold), detail)
		return e.rerun(ctx, b, lp, key, &r, run.ReasonDrift, "sensor "+s.Key, s)
	}
	sensors, err := e.sensorsFor(ctx, p.ID, per, p.PostRun.Rules, s)
	if err != nil {
		return err
	}
	out := rule.EvaluateAll(rule.All, p.PostRun.Rules, sensors, b.now, e.rules)
	typ, verdict := event.PostRunPassed, "passed"
	if !out.Passed {
		typ, verdict = event.PostRunFailed, "failed"
	}
	b.emit(key, typ, fmt.Sprintf("post-run rules %s: %s", verdict, out.Summary()), run.Detail("rules", out.Summary(), "sensorKey", s.Key, "reasons", failedReasons(out)))
	return nil
}

func failedReasons(o rule.Outcome) string {
	var parts []string
	for _, r := range o.Results {
		if !r.Passed {
			parts = append(parts, r.Rule.Key+": "+r.Reason)
		}
	}
	return strings.Join(parts, "; ")
}
