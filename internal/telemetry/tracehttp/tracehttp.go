// Package tracehttp traces HTTP when tracing is on (package telemetry
// turns it on): the job and alert clients' requests become client spans
// whose traceparent header carries the trace to the job's API or the
// alert's receiver, and serve's requests server spans that continue a
// caller's trace. Off, requests pass through untouched. It is a helper
// the HTTP adapters and the runtime share, not an adapter: it builds
// nothing and exports nothing.
package tracehttp

import (
	"net/http"
	"sync/atomic"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
)

var on atomic.Bool

// Enable says whether spans are exported (telemetry.Setup and its stop).
func Enable(v bool) { on.Store(v) }

// Enabled reports whether spans are exported by this process.
func Enabled() bool { return on.Load() }

// Transport returns base (nil: http.DefaultTransport) traced while
// tracing is on.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, traced: otelhttp.NewTransport(base)}
}

type transport struct {
	base, traced http.RoundTripper
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if on.Load() {
		return t.traced.RoundTrip(r)
	}
	return t.base.RoundTrip(r)
}

// Handler returns h traced while tracing is on: each request a server
// span named operation, continuing the caller's trace when the request
// carries a traceparent header.
func Handler(h http.Handler, operation string) http.Handler {
	traced := otelhttp.NewHandler(h, operation)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if on.Load() {
			traced.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}
