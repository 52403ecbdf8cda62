package engine

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// BenchmarkSpanOff is what tracing costs an input when it is off (no
// provider installed): one input span and one attempt span, started and
// ended with their attributes, as PutSensor does. docs/telemetry.md
// calls this free; the figure says how free (tens of ns, no attribute
// built).
func BenchmarkSpanOff(b *testing.B) {
	e := &Engine{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ictx, in := e.startSpan(ctx, spanSensorWrite, attrPipeline.String("gold"), attrSensor.String("upstream"))
		_, at := e.startSpan(ictx, spanDecide, attrAttempt.Int(1))
		endSpan(at, nil)
		endSpan(in, nil)
	}
}

// TestTraceparentRoundTrip: a call begun under a traced step carries the
// step's traceparent, and making it where no span is in the context
// continues that trace; an untraced step's call carries nothing.
func TestTraceparentRoundTrip(t *testing.T) {
	if got := traceparent(context.Background()); got != "" {
		t.Fatalf("untraced context: traceparent %q", got)
	}
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	step := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	c := Call{Trace: traceparent(step)}
	if c.Trace != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Fatalf("traceparent %q", c.Trace)
	}
	sc := trace.SpanContextFromContext(callTrace(context.Background(), c))
	if sc.TraceID() != tid || sc.SpanID() != sid || !sc.IsRemote() {
		t.Errorf("the call's context %v: want the step's span as its remote parent", sc)
	}
	// A context already traced keeps its own span.
	other, _ := trace.SpanIDFromHex("1111111111111111")
	own := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: other}))
	if trace.SpanContextFromContext(callTrace(own, c)).SpanID() != other {
		t.Errorf("callTrace replaced the caller's own span")
	}
	if !errors.Is(ignoreConflict(nil), nil) {
		t.Fatal("unreachable")
	}
}
