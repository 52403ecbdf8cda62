package telemetry

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/telemetry/tracehttp"
)

func envOf(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestOn: tracing is on only when something names where spans go, and the
// standard switches turn it off whatever the file says.
func TestOn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint string
		env      []string
		on       bool
		why      string
	}{
		{"nothing", "", nil, false, "no endpoint"},
		{"file", "http://c:4318", nil, true, "telemetry.endpoint http://c:4318"},
		{"env", "", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://e:4318"}, true, "OTEL_EXPORTER_OTLP_ENDPOINT http://e:4318"},
		{"env traces", "", []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://e:4318/v1/traces"}, true, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{"exporter otlp alone", "", []string{"OTEL_TRACES_EXPORTER", "otlp"}, true, "default endpoint"},
		{"empty env", "", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", " "}, false, "no endpoint"},
		{"disabled", "http://c:4318", []string{"OTEL_SDK_DISABLED", "TRUE"}, false, "OTEL_SDK_DISABLED=true"},
		{"exporter none", "http://c:4318", []string{"OTEL_TRACES_EXPORTER", "none"}, false, "OTEL_TRACES_EXPORTER=none"},
		{"exporter unsupported", "http://c:4318", []string{"OTEL_TRACES_EXPORTER", "zipkin"}, false, "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			on, why := On(Config{Endpoint: tc.endpoint, LookupEnv: envOf(tc.env...)})
			if on != tc.on || !strings.Contains(why, tc.why) {
				t.Errorf("On = %v, %q; want %v, …%q…", on, why, tc.on, tc.why)
			}
		})
	}
}

// TestSetupOffIsFree: off, Setup installs nothing (the store is not
// wrapped, spans do not record); an unsupported exporter is an error that
// names it, not a silent off.
func TestSetupOffIsFree(t *testing.T) {
	ctx := context.Background()
	stop, err := Setup(ctx, Config{LookupEnv: envOf()})
	if err != nil {
		t.Fatal(err)
	}
	defer stop(ctx)
	if Enabled() {
		t.Fatal("enabled with no endpoint")
	}
	st, err := sqlite.Open(ctx, sqlite.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := Wrap(st, "sqlite"); got != store.Store(st) {
		t.Errorf("off, Wrap returned %T, want the store itself", got)
	}
	if _, err := Setup(ctx, Config{Endpoint: "http://c:4318", LookupEnv: envOf("OTEL_TRACES_EXPORTER", "jaeger")}); err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_EXPORTER=jaeger") {
		t.Errorf("unsupported exporter: %v", err)
	}
}

// TestWrapPassesReads: on, Wrap returns the traced store, which answers
// what the backend answers.
func TestWrapPassesReads(t *testing.T) {
	ctx := context.Background()
	w, ok := Wrap(openTraced(t), "sqlite").(*Store)
	if !ok {
		t.Fatalf("on, Wrap returned %T", w)
	}
	if _, err := w.PipelineGet(ctx, "none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a read through the wrapper lost the backend's answer: %v", err)
	}
}

// TestLogHandler: a line logged under a span names its trace and span;
// one without a span is unchanged.
func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewTextHandler(&buf, nil))).With("component", "test")
	log.InfoContext(context.Background(), "plain")
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
	log.WithGroup("g").InfoContext(ctx, "traced", "k", "v")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "trace_id") {
		t.Fatalf("lines: %q", lines)
	}
	if !strings.Contains(lines[1], "trace_id=4bf92f3577b34da6a3ce929d0e0e4736") || !strings.Contains(lines[1], "span_id=00f067aa0ba902b7") || !strings.Contains(lines[1], "component=test") {
		t.Errorf("traced line: %q", lines[1])
	}
}

// TestWrapTracesFacts: the traced store reads a decision's facts in one
// span, and answers what the backend answers.
func TestWrapTracesFacts(t *testing.T) {
	ctx := context.Background()
	st := openTraced(t)
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	defer otel.SetTracerProvider(prev)
	if err := st.Commit(ctx, store.Change{Timers: []store.TimerWrite{{Timer: store.Timer{Key: "t", Kind: "evaluate", Run: run.Key{PipelineID: "p"}, DueAt: time.Unix(1e9, 0)}}}}); err != nil {
		t.Fatal(err)
	}
	w, ok := Wrap(st, "sqlite").(store.FactsReader)
	if !ok {
		t.Fatal("the traced store is no FactsReader")
	}
	q := store.FactsQuery{Pipelines: []string{"p"}, Timers: []string{"t", "u"}, Runs: []run.Key{{PipelineID: "p", ScheduleID: "s", Period: "2026-03-10"}},
		MarkersOf: []run.Key{{PipelineID: "p"}}, Sensors: []store.SensorRef{{PipelineID: "p", Key: "k"}}}
	f, err := w.Facts(ctx, q)
	if err != nil || len(f.Timers) != 1 || f.Timers["t"].Key != "t" || len(f.Pipelines)+len(f.Runs)+len(f.Markers)+len(f.Sensors) != 0 {
		t.Fatalf("Facts through the wrapper: %+v, %v; want timer t alone", f, err)
	}
	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
	}
	if len(names) != 1 || names[0] != "store.Facts" {
		t.Errorf("spans %q; want one store.Facts", names)
	}
}

// openTraced opens an in-memory SQLite store with tracing on, both undone
// when the test ends.
func openTraced(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlite.Memory)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tracehttp.Enable(true)
	t.Cleanup(func() { tracehttp.Enable(false) })
	return st
}
