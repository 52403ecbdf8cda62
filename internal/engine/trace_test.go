package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/interlockhq/interlock/internal/store"
)

// BenchmarkSpanOff is what tracing costs an input when it is off (no
// provider installed): one input span and one attempt span, started and
// ended with their attributes, as PutSensor does. docs/telemetry.md
// calls this free; the figure says how free (124 ns and 2 allocations of
// the attribute lists on this machine; no span is made).
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
}

// TestAttemptSpanIgnoresConflicts: an attempt that lost a race is not an
// error of the trace (it is retried), any other failure is.
func TestAttemptSpanIgnoresConflicts(t *testing.T) {
	lost := fmt.Errorf("commit: %w", store.ErrConflict)
	if ignoreConflict(lost) != nil {
		t.Errorf("a conflict is recorded as the attempt's error")
	}
	if other := errors.New("store down"); ignoreConflict(other) != other {
		t.Errorf("a failure is not recorded as the attempt's error")
	}
}
