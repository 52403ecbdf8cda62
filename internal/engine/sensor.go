package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/sla"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// MaxSensorKey bounds sensor key length.
const MaxSensorKey = 256

// PutResult says what a sensor write did.
type PutResult struct {
	Sensor  store.Sensor
	Changed bool   // the content differs from what was stored (new data)
	Period  string // the period the write belongs to
	// Skipped: the write was stale against the stored content and
	// nothing was written (a replayed lineage event; PutLineage).
	Skipped bool
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
func (e *Engine) PutSensor(ctx context.Context, pipelineID, key string, data sensor.Object) (_ PutResult, err error) {
	ctx, span := e.startSpan(ctx, spanSensorWrite, attrPipeline.String(pipelineID), attrSensor.String(key))
	defer func() { endSpan(span, err) }()
	if err := CheckSensorKey(key); err != nil {
		return PutResult{}, err
	}
	_, res, err := e.putSensor(ctx, pipelineID, key, &data, nil)
	if err == nil {
		if span.IsRecording() {
			span.SetAttributes(attrPeriod.String(res.Period), attrChanged.Bool(res.Changed))
		}
		e.log.DebugContext(ctx, "sensor written", "pipeline", pipelineID, "key", key, "period", res.Period, "changed", res.Changed)
	}
	return res, err
}

// PutSensorFromInbox is PutSensor with the sensor's current content read
// from its inbox item — the item anyone writes, on a store that has one
// (DynamoDB's SENSOR#<key>; the stream-router decides from it) — in the
// same request as the decision's first facts (store.ReadFacts).
// It returns the content it decided. No inbox item is ErrNoSensorItem
// (and store.ErrNotFound), an item of a bad shape the store's error, before anything is
// decided; a store without an inbox answers ErrNoSensorItem.
func (e *Engine) PutSensorFromInbox(ctx context.Context, pipelineID, key string) (_ sensor.Object, _ PutResult, err error) {
	ctx, span := e.startSpan(ctx, spanSensorWrite, attrPipeline.String(pipelineID), attrSensor.String(key))
	defer func() { endSpan(span, err) }()
	return e.putSensor(ctx, pipelineID, key, nil, nil)
}

// putSensor decides a sensor write of data, or of the inbox item's
// content when data is nil. stale, when not nil, is asked of the stored
// content (nil: none stored) in the same attempt as the decision: when it
// answers true nothing is written and the result is Skipped.
func (e *Engine) putSensor(ctx context.Context, pipelineID, key string, data *sensor.Object, stale func(stored *sensor.Object) bool) (sensor.Object, PutResult, error) {
	var res PutResult
	var got sensor.Object
	err := e.retry(ctx, "sensor "+pipelineID+"/"+key, func(ctx context.Context) error {
		now := e.clk.Now()
		ref := needs.SensorRef{PipelineID: pipelineID, Key: key}
		f, err := e.loadFacts(ctx, func(f *facts, cfg needs.Configs) needs.Set {
			d := data
			if it, ok := f.inboxes[ref]; ok && d == nil && it.err == nil {
				d = &it.data // the content read: its period's facts
			}
			return needs.SensorWrite(cfg(pipelineID), cfg, f.readRuns, pipelineID, key, d, now)
		})
		if err != nil {
			return err
		}
		if data != nil {
			got = *data
		} else {
			inbox, err := f.inbox(ctx, ref)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%w: %s/%s: %w", ErrNoSensorItem, pipelineID, key, err)
			}
			if err != nil {
				return err
			}
			got = inbox
			if err := CheckSensorKey(key); err != nil {
				return err
			}
		}
		lp, err := f.pipelineOf(ctx, pipelineID)
		if err != nil {
			return err
		}
		if lp == nil {
			return unknown(pipelineID)
		}
		p := lp.p
		per, err := run.SensorWritePeriod(p, key, got, now)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidSensor, err)
		}
		old, found, err := f.sensor(ctx, pipelineID, key)
		if err != nil {
			return err
		}
		s := store.Sensor{PipelineID: pipelineID, Key: key, Data: got, ChangedAt: now, WrittenAt: now, Watched: watchdog.Watches(p, key)}
		var stored *sensor.Record
		if found {
			rec := old.Record()
			stored = &rec
		}
		if stale != nil && stale(storedData(stored)) {
			res = PutResult{Sensor: old, Period: per.String(), Skipped: true}
			return nil
		}
		changed := run.NewData(p, key, stored, got, per)
		s.ChangedAt = run.SensorChangedAt(changed, old.ChangedAt, now)
		b := e.newBatch(lp, now).withFacts(f)
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
	return got, res, err
}

// DeleteSensor removes a stored sensor. It decides nothing: a sensor that
// disappears only makes rules that need it fail at their next evaluation.
func (e *Engine) DeleteSensor(ctx context.Context, pipelineID, key string) (err error) {
	ctx, span := e.startSpan(ctx, spanSensorDelete, attrPipeline.String(pipelineID), attrSensor.String(key))
	defer func() { endSpan(span, err) }()
	return e.retry(ctx, "delete sensor "+pipelineID+"/"+key, func(ctx context.Context) error {
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

// onNewData routes a changed sensor (run.RouteSensor): trigger keys may
// start the period; post-run keys are checked against the baseline; any
// other key may complete the rules of a run that is waiting.
func (e *Engine) onNewData(ctx context.Context, b *batch, lp *loadedPipeline, s *store.Sensor, per schedule.Period) error {
	p := lp.p
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	switch route, ruleKey := run.RouteSensor(p, s.Key); route {
	case run.SensorForTrigger:
		return e.triggerSensor(ctx, b, lp, s, key, per)
	case run.SensorForPostRun:
		return e.postRunSensor(ctx, b, lp, s, key, per, ruleKey)
	}
	return e.evaluateIfWaiting(ctx, b, lp, key, s)
}

// evaluateIfWaiting evaluates the period's run now if it is waiting for
// its rules (run.EvaluatesOnData), instead of at its next interval.
func (e *Engine) evaluateIfWaiting(ctx context.Context, b *batch, lp *loadedPipeline, key run.Key, s *store.Sensor) error {
	cur, err := b.run(ctx, key)
	if err != nil || cur == nil || !run.EvaluatesOnData(*cur, lp.row.Paused) {
		return err
	}
	r := *cur
	return e.evaluateRun(ctx, b, lp, &r, &r, run.Effect{}, s, nil)
}

// triggerSensor handles trigger data as run.OnTriggerData decides, once it
// satisfies the trigger condition.
func (e *Engine) triggerSensor(ctx context.Context, b *batch, lp *loadedPipeline, s *store.Sensor, key run.Key, per schedule.Period) error {
	p := lp.p
	if !run.TriggerCheck(p, s.Record(), b.now, e.rules).Passed {
		return nil
	}
	existing, err := e.runOf(ctx, b, key)
	if err != nil {
		return err
	}
	firstArrival, act := run.OnTriggerData(p, per, lp.row.Paused, existing)
	if firstArrival {
		if err := e.firstArrival(ctx, b, p, key, per); err != nil {
			return err
		}
	}
	switch act {
	case run.TriggerStart:
		return e.startPeriod(ctx, b, lp, key, per, run.CauseSensor, s)
	case run.TriggerEvaluate:
		r := *existing
		return e.evaluateRun(ctx, b, lp, &r, &r, run.Effect{}, s, nil)
	case run.TriggerLateData:
		r := *existing // keyed under the schedule id of an earlier config, perhaps
		b.notes(r.Key, []run.Note{run.LateData(r, s.Key)})
		return e.rerun(ctx, b, lp, r.Key, &r, run.ReasonLateData, "sensor "+s.Key, s)
	}
	return nil
}

// firstArrival records the first trigger-sensor arrival of a period (the
// start of a relative SLA) and arms the relative SLA timers.
func (e *Engine) firstArrival(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period) error {
	seen, err := b.f.hasMarker(ctx, key, run.MarkerFirstArrival)
	if err != nil || seen {
		return err
	}
	b.marker(store.Marker{Key: key, Kind: run.MarkerFirstArrival, At: b.now}, true)
	m, err := e.slaMarks(ctx, b.f, p, key, per)
	if err != nil {
		return err
	}
	m.FirstArrival = b.now // written by this batch
	timers, unresolved := sla.TimersOnArrival(p, per, m, b.firstLoaded(), b.now)
	e.setSLATimers(b, key, timers, unresolved)
	return nil
}

// postRunSensor handles a post-run sensor write as run.PostRunData
// decides (a dry-run pipeline: dryrun.Drift).
func (e *Engine) postRunSensor(ctx context.Context, b *batch, lp *loadedPipeline, s *store.Sensor, key run.Key, per schedule.Period, ruleKey string) error {
	p := lp.p
	if p.DryRun {
		return e.dryRunDrift(ctx, b, p, s, key, ruleKey)
	}
	r, err := b.run(ctx, key)
	if err != nil {
		return err
	}
	var prev *sensor.Object
	if base, err := b.f.baseline(ctx, key); err != nil {
		return err
	} else if base != nil {
		if data, ok := base.Sensors[ruleKey]; ok {
			prev = &data
		}
	}
	d := run.PostRunData(p, r, prev, s.Key, s.Data)
	if d.MarkArrived {
		b.marker(store.Marker{Key: key, Kind: run.MarkerPostRunArrived, At: b.now, Detail: run.Detail("sensorKey", s.Key)}, false)
	}
	b.notes(key, d.Notes)
	if d.Rerun {
		return e.rerun(ctx, b, lp, key, r, run.ReasonDrift, "sensor "+s.Key, s)
	}
	if d.JudgeRules {
		sensors, err := e.sensorsFor(ctx, b.f, p.ID, per, p.PostRun.Rules, s)
		if err != nil {
			return err
		}
		out := rule.EvaluateAll(rule.All, p.PostRun.Rules, sensors, b.now, e.rules)
		b.notes(key, []run.Note{run.PostRunVerdict(out, s.Key)})
	}
	return nil
}
