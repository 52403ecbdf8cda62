package telemetry

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// Store is a store whose every read and commit is a span ("store.<Method>",
// kind client) under the caller's: the app wraps the store in it when
// tracing is on (Wrap), and only then. A method the port adds later and
// this type does not name passes through untraced (embedding).
type Store struct {
	store.Store
	system attribute.KeyValue
}

// Wrap returns st traced when tracing is on, else st itself. system names
// the backend (db.system.name: sqlite, postgresql, aws.dynamodb).
func Wrap(st store.Store, system string) store.Store {
	if !Enabled() {
		return st
	}
	return &Store{Store: st, system: attribute.String("db.system.name", system)}
}

var _ store.FactsReader = (*Store)(nil)

// Facts reads a decision's facts in one span: the backend's batch
// (store.ReadFacts), or its single reads when it offers none, so the
// traced store is a FactsReader whatever it wraps.
func (s *Store) Facts(ctx context.Context, q store.FactsQuery) (store.Facts, error) {
	return call(ctx, s.system, "Facts", func(ctx context.Context) (store.Facts, error) { return store.ReadFacts(ctx, s.Store, q) })
}

var tracer = otel.Tracer("github.com/interlockhq/interlock/internal/store")

func start(ctx context.Context, system attribute.KeyValue, op string) (context.Context, trace.Span) {
	return tracer.Start(ctx, "store."+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(system))
}

// end ends a store span: a record that is not there or a commit whose
// condition failed is an answer, not an error of the store.
func end(span trace.Span, err error) {
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		span.SetAttributes(attribute.Bool("interlock.store.not_found", true))
	case errors.Is(err, store.ErrConflict):
		span.SetAttributes(attribute.Bool("interlock.store.conflict", true))
	default:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

func call[T any](ctx context.Context, system attribute.KeyValue, op string, f func(context.Context) (T, error)) (T, error) {
	ctx, span := start(ctx, system, op)
	v, err := f(ctx)
	end(span, err)
	return v, err
}

func (s *Store) PipelineGet(ctx context.Context, id string) (store.Pipeline, error) {
	return call(ctx, s.system, "PipelineGet", func(ctx context.Context) (store.Pipeline, error) { return s.Store.PipelineGet(ctx, id) })
}

func (s *Store) PipelineList(ctx context.Context) ([]store.Pipeline, error) {
	return call(ctx, s.system, "PipelineList", func(ctx context.Context) ([]store.Pipeline, error) { return s.Store.PipelineList(ctx) })
}

func (s *Store) CalendarGet(ctx context.Context, name string) (store.Calendar, error) {
	return call(ctx, s.system, "CalendarGet", func(ctx context.Context) (store.Calendar, error) { return s.Store.CalendarGet(ctx, name) })
}

func (s *Store) CalendarList(ctx context.Context) ([]store.Calendar, error) {
	return call(ctx, s.system, "CalendarList", func(ctx context.Context) ([]store.Calendar, error) { return s.Store.CalendarList(ctx) })
}

func (s *Store) SensorGet(ctx context.Context, pipelineID string, key string) (store.Sensor, error) {
	return call(ctx, s.system, "SensorGet", func(ctx context.Context) (store.Sensor, error) { return s.Store.SensorGet(ctx, pipelineID, key) })
}

func (s *Store) SensorList(ctx context.Context, pipelineID string) ([]store.Sensor, error) {
	return call(ctx, s.system, "SensorList", func(ctx context.Context) ([]store.Sensor, error) { return s.Store.SensorList(ctx, pipelineID) })
}

func (s *Store) SensorGetMany(ctx context.Context, p store.SensorGetManyParams) ([]store.Sensor, error) {
	return call(ctx, s.system, "SensorGetMany", func(ctx context.Context) ([]store.Sensor, error) { return s.Store.SensorGetMany(ctx, p) })
}

func (s *Store) SensorListPrefix(ctx context.Context, p store.SensorListPrefixParams) ([]store.Sensor, error) {
	return call(ctx, s.system, "SensorListPrefix", func(ctx context.Context) ([]store.Sensor, error) { return s.Store.SensorListPrefix(ctx, p) })
}

func (s *Store) SensorListChanged(ctx context.Context, p store.SensorListChangedParams) ([]store.Sensor, error) {
	return call(ctx, s.system, "SensorListChanged", func(ctx context.Context) ([]store.Sensor, error) { return s.Store.SensorListChanged(ctx, p) })
}

func (s *Store) RunGet(ctx context.Context, key run.Key) (run.Run, error) {
	return call(ctx, s.system, "RunGet", func(ctx context.Context) (run.Run, error) { return s.Store.RunGet(ctx, key) })
}

func (s *Store) RunList(ctx context.Context, p store.RunListParams) ([]run.Run, error) {
	return call(ctx, s.system, "RunList", func(ctx context.Context) ([]run.Run, error) { return s.Store.RunList(ctx, p) })
}

func (s *Store) LedgerList(ctx context.Context, key run.Key) ([]store.LedgerEntry, error) {
	return call(ctx, s.system, "LedgerList", func(ctx context.Context) ([]store.LedgerEntry, error) { return s.Store.LedgerList(ctx, key) })
}

func (s *Store) BaselineGet(ctx context.Context, key run.Key) (store.Baseline, error) {
	return call(ctx, s.system, "BaselineGet", func(ctx context.Context) (store.Baseline, error) { return s.Store.BaselineGet(ctx, key) })
}

func (s *Store) MarkerGet(ctx context.Context, key run.Key, kind string) (store.Marker, error) {
	return call(ctx, s.system, "MarkerGet", func(ctx context.Context) (store.Marker, error) { return s.Store.MarkerGet(ctx, key, kind) })
}

func (s *Store) MarkerListOf(ctx context.Context, key run.Key) ([]store.Marker, error) {
	return call(ctx, s.system, "MarkerListOf", func(ctx context.Context) ([]store.Marker, error) { return s.Store.MarkerListOf(ctx, key) })
}

func (s *Store) MarkerList(ctx context.Context, p store.MarkerListParams) ([]store.Marker, error) {
	return call(ctx, s.system, "MarkerList", func(ctx context.Context) ([]store.Marker, error) { return s.Store.MarkerList(ctx, p) })
}

func (s *Store) TimerListDue(ctx context.Context, now time.Time, limit int) ([]store.Timer, error) {
	return call(ctx, s.system, "TimerListDue", func(ctx context.Context) ([]store.Timer, error) { return s.Store.TimerListDue(ctx, now, limit) })
}

func (s *Store) TimerNext(ctx context.Context) (store.Timer, error) {
	return call(ctx, s.system, "TimerNext", func(ctx context.Context) (store.Timer, error) { return s.Store.TimerNext(ctx) })
}

func (s *Store) TimerGet(ctx context.Context, key string) (store.Timer, error) {
	return call(ctx, s.system, "TimerGet", func(ctx context.Context) (store.Timer, error) { return s.Store.TimerGet(ctx, key) })
}

func (s *Store) TimerList(ctx context.Context, p store.TimerListParams) ([]store.Timer, error) {
	return call(ctx, s.system, "TimerList", func(ctx context.Context) ([]store.Timer, error) { return s.Store.TimerList(ctx, p) })
}

func (s *Store) EventList(ctx context.Context, p store.EventListParams) (store.EventPage, error) {
	return call(ctx, s.system, "EventList", func(ctx context.Context) (store.EventPage, error) { return s.Store.EventList(ctx, p) })
}

func (s *Store) Expire(ctx context.Context, p store.ExpireParams) (store.ExpireResult, error) {
	return call(ctx, s.system, "Expire", func(ctx context.Context) (store.ExpireResult, error) { return s.Store.Expire(ctx, p) })
}

func (s *Store) DeliveryCursorGet(ctx context.Context, sink string) (store.DeliveryCursor, error) {
	return call(ctx, s.system, "DeliveryCursorGet", func(ctx context.Context) (store.DeliveryCursor, error) { return s.Store.DeliveryCursorGet(ctx, sink) })
}

func (s *Store) DeliveryCursorList(ctx context.Context) ([]store.DeliveryCursor, error) {
	return call(ctx, s.system, "DeliveryCursorList", func(ctx context.Context) ([]store.DeliveryCursor, error) { return s.Store.DeliveryCursorList(ctx) })
}

func (s *Store) DeadLetterList(ctx context.Context, sink string) ([]store.DeadLetter, error) {
	return call(ctx, s.system, "DeadLetterList", func(ctx context.Context) ([]store.DeadLetter, error) { return s.Store.DeadLetterList(ctx, sink) })
}

func (s *Store) AlertThreadGet(ctx context.Context, sink string, key run.Key) (store.AlertThread, error) {
	return call(ctx, s.system, "AlertThreadGet", func(ctx context.Context) (store.AlertThread, error) { return s.Store.AlertThreadGet(ctx, sink, key) })
}

func (s *Store) AlertSentGet(ctx context.Context, sink string, key run.Key, typ event.Type, hash string) (store.AlertSent, error) {
	return call(ctx, s.system, "AlertSentGet", func(ctx context.Context) (store.AlertSent, error) {
		return s.Store.AlertSentGet(ctx, sink, key, typ, hash)
	})
}

func (s *Store) AlertAlertedGet(ctx context.Context, sink string, key run.Key) (store.AlertAlerted, error) {
	return call(ctx, s.system, "AlertAlertedGet", func(ctx context.Context) (store.AlertAlerted, error) { return s.Store.AlertAlertedGet(ctx, sink, key) })
}

func (s *Store) LeaseGet(ctx context.Context, name string) (store.Lease, error) {
	return call(ctx, s.system, "LeaseGet", func(ctx context.Context) (store.Lease, error) { return s.Store.LeaseGet(ctx, name) })
}

func (s *Store) BackfillGet(ctx context.Context, pipelineID string, id string) (store.Backfill, error) {
	return call(ctx, s.system, "BackfillGet", func(ctx context.Context) (store.Backfill, error) { return s.Store.BackfillGet(ctx, pipelineID, id) })
}

func (s *Store) BackfillList(ctx context.Context, pipelineID string) ([]store.Backfill, error) {
	return call(ctx, s.system, "BackfillList", func(ctx context.Context) ([]store.Backfill, error) { return s.Store.BackfillList(ctx, pipelineID) })
}

func (s *Store) SilenceGet(ctx context.Context, id string) (store.Silence, error) {
	return call(ctx, s.system, "SilenceGet", func(ctx context.Context) (store.Silence, error) { return s.Store.SilenceGet(ctx, id) })
}

func (s *Store) SilenceList(ctx context.Context, p store.SilenceListParams) ([]store.Silence, error) {
	return call(ctx, s.system, "SilenceList", func(ctx context.Context) ([]store.Silence, error) { return s.Store.SilenceList(ctx, p) })
}

func (s *Store) Commit(ctx context.Context, c store.Change) error {
	ctx, span := start(ctx, s.system, "Commit")
	err := s.Store.Commit(ctx, c)
	end(span, err)
	return err
}
