// Package otlptest is an OpenTelemetry collector for tests: an httptest
// server that decodes the OTLP/HTTP protobuf export requests posted to
// /v1/traces (with the OTLP proto module, not a parser of ours), and
// helpers to find spans and read their links and attributes.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/interlockhq/interlock/internal/seen"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver records the spans exported to it.
type Receiver struct {
	*httptest.Server
	spans    seen.List[*tracepb.Span]
	services seen.List[string]
	bad      seen.List[string]
}

// New starts a receiver, closed when the test ends.
func New(t testing.TB) *Receiver {
	rc := &Receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	fail := func(why string) {
		rc.bad.Add(why)
		http.Error(w, why, http.StatusBadRequest)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		fail(fmt.Sprintf("%s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type")))
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			fail(err.Error())
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		fail(err.Error())
		return
	}
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		fail("not an ExportTraceServiceRequest: " + err.Error())
		return
	}
	// A request's services are kept before its spans: a test that has
	// waited for a span finds its service.
	var services []string
	var spans []*tracepb.Span
	for _, rs := range req.GetResourceSpans() {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				services = append(services, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			spans = append(spans, ss.GetSpans()...)
		}
	}
	rc.services.Add(services...)
	rc.spans.Add(spans...)
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Spans are the spans received so far.
func (rc *Receiver) Spans() []*tracepb.Span {
	return rc.spans.All()
}

// Services are the service.name of each resource received.
func (rc *Receiver) Services() []string {
	return rc.services.All()
}

// Bad are the requests it refused (not OTLP protobuf on /v1/traces).
func (rc *Receiver) Bad() []string {
	return rc.bad.All()
}

// Find returns the spans named name whose attributes include want.
func Find(spans []*tracepb.Span, name string, want map[string]string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if s.GetName() != name {
			continue
		}
		ok := true
		for k, v := range want {
			if Attr(s, k) != v {
				ok = false
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// Attr is a span attribute's value as text ("" when absent).
func Attr(s *tracepb.Span, key string) string {
	for _, a := range s.GetAttributes() {
		if a.GetKey() != key {
			continue
		}
		v := a.GetValue()
		switch {
		case v.GetStringValue() != "":
			return v.GetStringValue()
		case v.GetIntValue() != 0:
			return fmt.Sprint(v.GetIntValue())
		default:
			return fmt.Sprint(v.GetBoolValue())
		}
	}
	return ""
}

// Children are the spans whose parent is p.
func Children(spans []*tracepb.Span, p *tracepb.Span) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if bytes.Equal(s.GetParentSpanId(), p.GetSpanId()) && bytes.Equal(s.GetTraceId(), p.GetTraceId()) {
			out = append(out, s)
		}
	}
	return out
}

// Names are the spans' names.
func Names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.GetName())
	}
	return out
}
