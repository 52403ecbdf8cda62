package engine

import (
	"context"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// MaxSensorKey bounds sensor key length.
const MaxSensorKey = decide.MaxSensorKey

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
func CheckSensorKey(key string) error { return decide.CheckSensorKey(key) }

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
	_, res, err := e.putSensor(ctx, pipelineID, key, &data, false)
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
	return e.putSensor(ctx, pipelineID, key, nil, false)
}

// putSensor decides a sensor write of data, or of the inbox item's
// content when data is nil: needs → one batch read → decide.SensorWrite
// → one commit. A lineage write (PutLineage) the decision finds stale
// against the stored content (lineage.Stale, in the same attempt) writes
// nothing: the result is Skipped.
func (e *Engine) putSensor(ctx context.Context, pipelineID, key string, data *sensor.Object, lineageWrite bool) (sensor.Object, PutResult, error) {
	var res PutResult
	var got sensor.Object
	err := e.retry(ctx, "sensor "+pipelineID+"/"+key, func(ctx context.Context) error {
		now := e.clk.Now()
		f, err := e.loadFacts(ctx, func(f *facts, cfg needs.Configs) needs.Set {
			return decide.SensorWriteNeeds(f.Facts, cfg, pipelineID, key, data, now)
		})
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.SensorWriteIn{PipelineID: pipelineID, Key: key, Data: data, Lineage: lineageWrite, Env: b.env()}
		w, err := decideWith(ctx, b, decide.SensorWrite, in, now)
		if err != nil {
			return err
		}
		got = w.Data
		if w.Skipped {
			res = PutResult{Sensor: w.Sensor, Period: w.Period, Skipped: true}
			return nil
		}
		return b.commitThen(ctx, func() {
			s := w.Sensor
			s.Version = w.Old.Version + 1
			res = PutResult{Sensor: s, Changed: w.Changed, Period: w.Period}
		})
	})
	return got, res, err
}

// DeleteSensor removes a stored sensor (decide.DeleteSensor): a sensor
// that disappears only makes rules that need it fail at their next
// evaluation.
func (e *Engine) DeleteSensor(ctx context.Context, pipelineID, key string) (err error) {
	ctx, span := e.startSpan(ctx, spanSensorDelete, attrPipeline.String(pipelineID), attrSensor.String(key))
	defer func() { endSpan(span, err) }()
	return e.retry(ctx, "delete sensor "+pipelineID+"/"+key, func(ctx context.Context) error {
		f, err := e.loadFor(ctx, pipelineID, func(*facts, needs.Configs) needs.Set { return needs.DeleteSensor(pipelineID) })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.DeleteSensorIn{PipelineID: pipelineID, Key: key, Env: b.env()}
		if _, err := decideWith(ctx, b, decide.DeleteSensor, in, e.clk.Now()); err != nil {
			return err
		}
		return b.commit(ctx)
	})
}
