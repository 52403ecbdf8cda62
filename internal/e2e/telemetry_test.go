package e2e_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/interlockhq/interlock/internal/testenv/otlptest"
)

// traceparentHeaders records the traceparent header of every request.
type traceparentHeaders struct {
	mu   sync.Mutex
	seen []string
}

func (h *traceparentHeaders) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen = append(h.seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Traceparent"))
		h.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (h *traceparentHeaders) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// TestTracesOverOTLP: a serve whose environment names an OTLP endpoint
// exports the span tree of a sensor write that triggers a job — the API's
// server span continuing the writer's traceparent, the write, its decision,
// the store's reads and commit under it — and of the timer step that
// triggers the job, whose call's HTTP request carries the trace to the fake
// Airflow (traceparent naming the client span) and whose alert delivery is
// a span too; the log's lines under a span carry its trace id. Without an
// endpoint nothing is exported and no traceparent leaves the process.
func TestTracesOverOTLP(t *testing.T) {
	t.Parallel()
	otlp := otlptest.New(t)
	airflow := newFakeAirflow(t)
	airflow.set("success")
	hookHeaders := &traceparentHeaders{}
	hook := httptest.NewServer(hookHeaders.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	t.Cleanup(hook.Close)

	project := func(t *testing.T, telemetry string) string {
		dir := t.TempDir()
		write := projectWriter(t, dir)
		write("interlock.yaml", fmt.Sprintf(`store: sqlite:./state.db
server:
  tokens: [{name: etl, role: admin, tokenEnv: TOKEN}]
triggers: {allowAddresses: [127.0.0.1/32]}
alerts:
  - {type: webhook, url: %q, match: {types: [JOB_TRIGGERED]}}
%s`, hook.URL, telemetry))
		write("pipelines/gold.yaml", airflowPipeline("gold", airflow.URL))
		return dir
	}

	t.Run("on", func(t *testing.T) {
		srv := start(t, project(t, "telemetry: {serviceName: interlock-e2e}\n"), []string{"TOKEN=tok",
			"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.URL, "OTEL_BSP_SCHEDULE_DELAY=50"}, "--log-format", "json")
		// The writer's own trace: serve continues it.
		const writerTrace, writerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
		req, _ := http.NewRequest("PUT", srv.url+"/v1/pipelines/gold/sensors/upstream", strings.NewReader(`{"rows": 10}`))
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Traceparent", "00-"+writerTrace+"-"+writerSpan+"-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("sensor write: %d", resp.StatusCode)
		}
		eventually(t, "the job's trigger and its alert to be exported", func() bool {
			s := otlp.Spans()
			return len(otlptest.Find(s, "interlock.job.start", nil)) > 0 && len(otlptest.Find(s, "interlock.alert.deliver", nil)) > 0 &&
				len(otlptest.Find(s, "interlock.sensor.write", nil)) > 0
		})
		srv.stop(t)
		spans := otlp.Spans()
		if otlp.Bad() != nil {
			t.Errorf("malformed exports: %v", otlp.Bad())
		}
		if len(otlp.Services()) == 0 || otlp.Services()[0] != "interlock-e2e" {
			t.Errorf("service names %v, want interlock-e2e (telemetry.serviceName)", otlp.Services())
		}

		// The sensor write: API server span (child of the writer's) →
		// interlock.sensor.write → interlock.decide → store reads + commit.
		writes := otlptest.Find(spans, "interlock.sensor.write", map[string]string{"interlock.pipeline": "gold", "interlock.sensor.key": "upstream"})
		if len(writes) != 1 {
			t.Fatalf("%d sensor write spans, want 1; spans: %v", len(writes), otlptest.Names(spans))
		}
		w := writes[0]
		if hex.EncodeToString(w.GetTraceId()) != writerTrace {
			t.Errorf("the write's trace %x, want the writer's %s (traceparent continued)", w.GetTraceId(), writerTrace)
		}
		var server *tracepb.Span
		for _, s := range spans {
			if bytes.Equal(s.GetSpanId(), w.GetParentSpanId()) {
				server = s
			}
		}
		if server == nil || server.GetKind() != tracepb.Span_SPAN_KIND_SERVER || hex.EncodeToString(server.GetParentSpanId()) != writerSpan {
			t.Fatalf("the write's parent %v: want the API's server span, child of the writer's span %s", server, writerSpan)
		}
		if otlptest.Attr(w, "interlock.period") == "" || otlptest.Attr(w, "interlock.sensor.changed") != "true" {
			t.Errorf("write attributes: period %q, changed %q", otlptest.Attr(w, "interlock.period"), otlptest.Attr(w, "interlock.sensor.changed"))
		}
		decides := otlptest.Children(spans, w)
		if len(decides) == 0 || decides[0].GetName() != "interlock.decide" || otlptest.Attr(decides[0], "interlock.attempt") != "1" {
			t.Fatalf("the write's children %v, want its decision's attempt", otlptest.Names(decides))
		}
		under := otlptest.Names(otlptest.Children(spans, decides[0]))
		if !slices.Equal(under, []string{"store.Facts", "store.Commit"}) {
			t.Errorf("under the decision: %v; want the store's one read of the write's facts (store.Facts), then its commit", under)
		}
		for _, s := range otlptest.Children(spans, decides[0]) {
			if s.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || otlptest.Attr(s, "db.system.name") != "sqlite" {
				t.Errorf("store span %s: kind %v, db.system.name %q", s.GetName(), s.GetKind(), otlptest.Attr(s, "db.system.name"))
			}
		}

		// The trigger: its step's timer span; the call continues its
		// trace; the HTTP request carries it to Airflow.
		timers := otlptest.Find(spans, "interlock.timer", map[string]string{"interlock.timer.kind": "trigger", "interlock.pipeline": "gold"})
		starts := otlptest.Find(spans, "interlock.job.start", map[string]string{"interlock.job.type": "airflow"})
		calls := otlptest.Find(spans, "interlock.job.call", map[string]string{"interlock.pipeline": "gold"})
		if len(timers) != 1 || len(starts) != 1 || len(calls) != 1 {
			t.Fatalf("trigger timer %d, job call %d, job start %d spans; want one each: %v", len(timers), len(calls), len(starts), otlptest.Names(spans))
		}
		if !bytes.Equal(calls[0].GetTraceId(), timers[0].GetTraceId()) || !bytes.Equal(starts[0].GetParentSpanId(), calls[0].GetSpanId()) {
			t.Errorf("the job call is not in its step's trace, or the start is not the call's child")
		}
		clients := otlptest.Children(spans, starts[0])
		if len(clients) != 1 || clients[0].GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
			t.Fatalf("under the job start: %v; want the HTTP request's client span", otlptest.Names(clients))
		}
		want := fmt.Sprintf("POST /api/v1/dags/gold/dagRuns 00-%x-%x-01", clients[0].GetTraceId(), clients[0].GetSpanId())
		if !contains(airflow.requested(), want) {
			t.Errorf("Airflow got %v; want %q (the client span's traceparent)", airflow.requested(), want)
		}

		// The alert's delivery: a span, and its request carries it.
		delivers := otlptest.Find(spans, "interlock.alert.deliver", map[string]string{"interlock.event.type": "JOB_TRIGGERED", "interlock.pipeline": "gold"})
		if len(delivers) != 1 || !strings.HasPrefix(otlptest.Attr(delivers[0], "interlock.sink"), "webhook") {
			t.Fatalf("alert delivery spans %d (sink %q), want 1 of the webhook", len(delivers), otlptest.Attr(delivers[0], "interlock.sink"))
		}
		if got := hookHeaders.all(); len(got) == 0 || !strings.Contains(got[0], fmt.Sprintf("-%x-", delivers[0].GetTraceId())) {
			t.Errorf("the webhook got %v; want the delivery's trace %x", got, delivers[0].GetTraceId())
		}

		// A log line under a span names its trace.
		if !strings.Contains(srv.out.String(), `"msg":"sensor written"`) ||
			!strings.Contains(srv.out.String(), `"trace_id":"`+writerTrace+`"`) {
			t.Errorf("no log line carries the write's trace id %s:\n%s", writerTrace, srv.out.String())
		}
	})

	t.Run("off", func(t *testing.T) {
		before := len(otlp.Spans())
		jobsBefore := len(airflow.requested())
		dir := project(t, "")
		srv := start(t, dir, []string{"TOKEN=tok", "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="})
		if code, body := request(t, "PUT", srv.url+"/v1/pipelines/gold/sensors/upstream", "tok", `{"rows": 1}`); code != 200 {
			t.Fatalf("sensor write: %d %s", code, body)
		}
		eventually(t, "the job to be triggered", func() bool { return len(airflow.requested()) > jobsBefore })
		srv.stop(t)
		for _, h := range airflow.requested()[jobsBefore:] {
			if !strings.HasSuffix(h, " ") {
				t.Errorf("with tracing off a job call carried a traceparent: %q", h)
			}
		}
		if got := len(otlp.Spans()); got != before {
			t.Errorf("with tracing off %d spans were exported", got-before)
		}
		if strings.Contains(srv.out.String(), "tracing on") {
			t.Errorf("serve says tracing is on without an endpoint:\n%s", srv.out.String())
		}
	})
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
