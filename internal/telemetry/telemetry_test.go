package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

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

// TestWrapKeepsSensorFacts: the traced store keeps the optional
// interface the engine asks for, and only when the backend has it.
func TestWrapKeepsSensorFacts(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tracehttp.Enable(true)
	defer tracehttp.Enable(false)
	w := Wrap(st, "sqlite")
	if _, ok := w.(*Store); !ok {
		if _, ok := w.(*factsStore); !ok {
			t.Fatalf("on, Wrap returned %T", w)
		}
	}
	_, backendHas := store.Store(st).(store.SensorFactsReader)
	if _, wrapperHas := w.(store.SensorFactsReader); wrapperHas != backendHas {
		t.Errorf("SensorFactsReader: backend %v, wrapper %v", backendHas, wrapperHas)
	}
	if _, err := w.PipelineGet(ctx, "none"); err == nil {
		t.Errorf("a read through the wrapper lost the backend's answer")
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
