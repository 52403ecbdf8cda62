package alert

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

var tracer = otel.Tracer("github.com/interlockhq/interlock/internal/alert")

// deliver is one attempt at delivering a to sink, as a span
// ("interlock.alert.deliver"; docs/telemetry.md) under which an HTTP
// sink's request is a client span of its own.
func deliver(ctx context.Context, sink Sink, a Alert, attempt int) (retry bool, err error) {
	ctx, span := tracer.Start(ctx, "interlock.alert.deliver", trace.WithSpanKind(trace.SpanKindProducer))
	if span.IsRecording() {
		span.SetAttributes(attribute.String("interlock.sink", sink.Name()), attribute.String("interlock.event.id", a.Event.ID),
			attribute.String("interlock.event.type", string(a.Event.Type)), attribute.String("interlock.pipeline", a.Event.PipelineID),
			attribute.Int("interlock.attempt", attempt))
	}
	retry, err = sink.Deliver(ctx, a)
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.Bool("interlock.alert.retry", retry))
	}
	span.End()
	return retry, err
}
