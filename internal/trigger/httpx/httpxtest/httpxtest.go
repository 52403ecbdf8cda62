// Package httpxtest helps the tests of HTTP-family job types: a client
// allowed to reach exactly one httptest server (through the SSRF guard's
// allow-list — the guard is never switched off), and a job request built
// the way a pipeline file is loaded.
package httpxtest

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
)

// Allow is the allow-list that admits srv's address and port, and only
// them.
func Allow(t testing.TB, srv *httptest.Server) []pipeline.AllowAddress {
	t.Helper()
	ap, err := netip.ParseAddrPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("server address: %v", err)
	}
	return []pipeline.AllowAddress{{Prefix: netip.PrefixFrom(ap.Addr(), ap.Addr().BitLen()), Port: ap.Port()}}
}

// Client is a guarded client that may reach srv.
func Client(t testing.TB, srv *httptest.Server) *httpx.Client {
	t.Helper()
	return httpx.NewClient(Allow(t, srv))
}

// Vars are the template variables of the requests Request builds: an
// hourly period.
var Vars = pipeline.TemplateVars{Pipeline: "orders", Schedule: "stream", Date: "2026-03-10", Hour: "05", RunID: "orders-stream-2026-03-10T05-g0-a1"}

// Request is a request for a job of type jobType whose job.config is
// config (YAML flow style), checked by the real pipeline loader.
func Request(t testing.TB, jobType pipeline.JobType, config string) trigger.Request {
	t.Helper()
	doc := "pipeline: {id: orders}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: " + string(jobType) + ", config: " + config + "}\n"
	p, err := pipeline.ParsePipeline("orders.yaml", []byte(doc), pipeline.Options{})
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	return trigger.Request{PipelineID: "orders", ScheduleID: "stream", Period: "2026-03-10T05", RunID: Vars.RunID, Attempt: 1,
		Type: string(jobType), Config: p.Job.Config, Vars: Vars}
}
