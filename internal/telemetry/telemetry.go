// Package telemetry exports Interlock's traces over OTLP (product issue
// 29): each input (a sensor write, a timer, an operator action) is a span,
// with children for the store's reads, the decision, the commit, each job
// call (the outgoing HTTP request carries the trace context) and each
// alert delivery.
//
// It is off by default and free when off: nothing is exported, the store
// is not wrapped, and the engine's spans are the OpenTelemetry API's
// non-recording ones. It is on when interlock.yaml's `telemetry:` names an
// endpoint, or when the standard environment does
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or
// OTEL_TRACES_EXPORTER=otlp); OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none turns it off whatever the file says. The
// exporter is OTLP over HTTP (protobuf); the other OTEL_* settings
// (OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER, OTEL_BSP_*) apply as the OpenTelemetry SDK reads them.
//
// It is an adapter: the app sets it up; the engine and the job and alert
// clients use only the OpenTelemetry API.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/interlockhq/interlock/internal/telemetry/tracehttp"
)

// Config is interlock.yaml's `telemetry:` section (pipeline.Telemetry),
// with the process's identity.
type Config struct {
	// Endpoint is the OTLP/HTTP endpoint's base URL (traces go to
	// Endpoint/v1/traces); empty: the environment's, if any.
	Endpoint string
	// ServiceName names the service (default "interlock"; the
	// environment's OTEL_SERVICE_NAME wins).
	ServiceName string
	// SampleRatio is the share of traces kept, 0 < r <= 1 (0: every one;
	// the environment's OTEL_TRACES_SAMPLER wins).
	SampleRatio float64
	// Version is the binary's version, a resource attribute.
	Version string
	// LookupEnv reads the environment (nil: none is set).
	LookupEnv func(string) (string, bool)
}

// DefaultServiceName is the service name when nothing sets one.
const DefaultServiceName = "interlock"

// Enabled reports whether traces are exported by this process (Setup
// installed an exporting provider): the store wrapper and the HTTP
// transports (tracehttp) ask it.
func Enabled() bool { return tracehttp.Enabled() }

// On reports whether cfg and the environment turn tracing on, and why
// (for serve's start-up line).
func On(cfg Config) (bool, string) {
	env := func(k string) string {
		if cfg.LookupEnv == nil {
			return ""
		}
		v, _ := cfg.LookupEnv(k)
		return strings.TrimSpace(v)
	}
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return false, "OTEL_SDK_DISABLED=true"
	}
	switch exp := strings.ToLower(env("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, "OTEL_TRACES_EXPORTER=none"
	case "", "otlp":
		if cfg.Endpoint != "" {
			return true, "telemetry.endpoint " + cfg.Endpoint
		}
		if e := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); e != "" {
			return true, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT " + e
		}
		if e := env("OTEL_EXPORTER_OTLP_ENDPOINT"); e != "" {
			return true, "OTEL_EXPORTER_OTLP_ENDPOINT " + e
		}
		if exp == "otlp" {
			return true, "OTEL_TRACES_EXPORTER=otlp (the default endpoint, http://localhost:4318)"
		}
		return false, "no endpoint (telemetry.endpoint or OTEL_EXPORTER_OTLP_ENDPOINT)"
	default:
		return false, "OTEL_TRACES_EXPORTER=" + exp + " is not supported (otlp or none)"
	}
}

// Setup installs the global tracer provider and the W3C trace-context
// propagator when cfg or the environment turn tracing on, and returns the
// function that flushes and stops it (a no-op when off). It is called
// once, before the app is opened.
func Setup(ctx context.Context, cfg Config) (shutdown func(context.Context) error, err error) {
	noop := func(context.Context) error { return nil }
	on, why := On(cfg)
	if !on {
		if strings.Contains(why, "not supported") {
			return noop, errors.New("telemetry: " + why)
		}
		return noop, nil
	}
	var opts []otlptracehttp.Option
	if cfg.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimRight(cfg.Endpoint, "/")+"/v1/traces"))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return noop, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	name := cfg.ServiceName
	if name == "" {
		name = DefaultServiceName
	}
	// The environment's OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// come last, so they win.
	attrs := []attribute.KeyValue{semconv.ServiceName(name)}
	if cfg.Version != "" {
		attrs = append(attrs, semconv.ServiceVersion(cfg.Version))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...),
		resource.WithTelemetrySDK(), resource.WithHost(), resource.WithFromEnv())
	if err != nil && res == nil {
		return noop, fmt.Errorf("telemetry: resource: %w", err)
	}
	popts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	if _, set := lookup(cfg, "OTEL_TRACES_SAMPLER"); !set && cfg.SampleRatio > 0 && cfg.SampleRatio < 1 {
		popts = append(popts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))))
	}
	tp := sdktrace.NewTracerProvider(popts...)
	provider.Store(tp)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	tracehttp.Enable(true)
	return func(ctx context.Context) error {
		tracehttp.Enable(false)
		provider.CompareAndSwap(tp, nil)
		return tp.Shutdown(ctx)
	}, nil
}

// provider is the exporting provider Setup installed (nil: none).
var provider atomic.Pointer[sdktrace.TracerProvider]

// Flush sends the spans ended so far and waits for the collector's
// answer (a no-op when tracing is off): a Lambda function calls it at the
// end of each invocation, since the runtime may freeze the process before
// the batch's timer fires.
func Flush(ctx context.Context) error {
	if tp := provider.Load(); tp != nil {
		return tp.ForceFlush(ctx)
	}
	return nil
}

func lookup(cfg Config, k string) (string, bool) {
	if cfg.LookupEnv == nil {
		return "", false
	}
	return cfg.LookupEnv(k)
}

// Tracer is the named tracer when tracing is on, else nil: the engine
// makes no span at all without one (engine.Options.Tracer).
func Tracer(name string) trace.Tracer {
	if !Enabled() {
		return nil
	}
	return otel.Tracer(name)
}
