package engine

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/interlockhq/interlock/internal/store"
)

// The engine's spans (docs/telemetry.md): each input is one span — a
// sensor write, a timer, a job call, an operator action, a config load, a
// watchdog pass — and each attempt at its decision a child, under which
// the store's reads and the commit are spans of their own (the app's
// traced store) and a job call's HTTP request (the job clients'
// transport). The engine uses the OpenTelemetry API only, through
// Options.Tracer: without one (tracing off) a span is a shared no-op
// value and nothing is built for it.

// noSpan is the span of an input when tracing is off.
var noSpan trace.Span = noop.Span{}

// Span attribute keys.
const (
	attrPipeline   = attribute.Key("interlock.pipeline")
	attrPeriod     = attribute.Key("interlock.period")
	attrSchedule   = attribute.Key("interlock.schedule")
	attrSensor     = attribute.Key("interlock.sensor.key")
	attrTimer      = attribute.Key("interlock.timer.kind")
	attrAttempt    = attribute.Key("interlock.attempt")
	attrEvents     = attribute.Key("interlock.events")
	attrDecision   = attribute.Key("interlock.decision")
	attrConflict   = attribute.Key("interlock.conflict")
	attrJobType    = attribute.Key("interlock.job.type")
	attrChanged    = attribute.Key("interlock.sensor.changed")
	attrConfigFile = attribute.Key("interlock.config.file")
)

// Span names.
const (
	spanSensorWrite  = "interlock.sensor.write"
	spanSensorDelete = "interlock.sensor.delete"
	spanLineage      = "interlock.lineage.event"
	spanTimer        = "interlock.timer"
	spanJobCall      = "interlock.job.call"
	spanJobStart     = "interlock.job.start"
	spanJobPoll      = "interlock.job.poll"
	spanDecide       = "interlock.decide"
	spanOperator     = "interlock.operator."
	spanConfig       = "interlock.config.load"
	spanWatchdog     = "interlock.watchdog.pass"
)

// startSpan starts the span of an input or a step of one; attrs are set
// when it records.
func (e *Engine) startSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if e.tracer == nil {
		return ctx, noSpan
	}
	ctx, span := e.tracer.Start(ctx, name)
	if span.IsRecording() && len(attrs) > 0 {
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

// endSpan ends span with err: a refusal the caller hears about (an
// unknown pipeline, an invalid sensor, a conflict retried) is recorded as
// the span's error status too, for the trace to say why.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// ignoreConflict is err unless it is a conflict: an attempt that lost a
// race is retried, not an error of the trace.
func ignoreConflict(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}

// traceparent is the W3C traceparent of ctx's span, or "" when it is not
// traced.
func traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// callTrace is ctx, continuing the trace of the step that began c when
// ctx carries none (the call is made by another goroutine, process or
// Lambda invocation than the step's).
func callTrace(ctx context.Context, c Call) context.Context {
	if c.Trace == "" || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": c.Trace})
}
