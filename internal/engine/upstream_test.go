package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
)

// revenue waits for orders (the fixture's pipeline) and is started by it.
const revenue = `
pipeline: {id: revenue}
validation:
  rules: [{check: upstream, pipeline: orders}]
job: {type: glue, config: {jobName: revenue}, pollInterval: 1m}
`

func TestUpstreamExplainAndStart(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.eng.ApplyConfig(ctx, "revenue.yaml", []byte(revenue)); err != nil {
		t.Fatal(err)
	}
	x, err := f.eng.Explain(ctx, "revenue", "2026-03-10")
	if err != nil {
		t.Fatal(err)
	}
	if x.Validation.Passed || len(x.Validation.Rules) != 1 {
		t.Fatalf("validation before the upstream ran: %+v", x.Validation)
	}
	r := x.Validation.Rules[0]
	if r.Check != "upstream" || r.Upstream != "orders" || r.Reason != "upstream orders for period 2026-03-10: not yet (no run yet)" {
		t.Fatalf("upstream rule: %+v", r)
	}
	if _, err := f.eng.PutSensor(ctx, "orders", "orders-landed", obj("ok", true)); err != nil {
		t.Fatal(err)
	}
	for range 5 { // trigger, poll (success), then the downstream's timers
		f.clk.Advance(time.Minute)
		if _, err := f.eng.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := f.run(t, run.Key{PipelineID: "revenue", ScheduleID: "stream", Period: "2026-03-10"})
	if got.Cause != run.CauseUpstream {
		t.Fatalf("revenue's run: cause %q, want upstream", got.Cause)
	}
	x, err = f.eng.Explain(ctx, "revenue", "2026-03-10")
	if err != nil {
		t.Fatal(err)
	}
	if r := x.Validation.Rules[0]; !r.Passed || r.Reason != "upstream orders for period 2026-03-10: succeeded" {
		t.Fatalf("upstream rule after the upstream's success: %+v", r)
	}
}

func TestUpstreamCycleRefusedAndIndexFollowsConfig(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.eng.ApplyConfig(ctx, "revenue.yaml", []byte(revenue)); err != nil {
		t.Fatal(err)
	}
	downstreams := func() []string {
		ms, err := f.st.MarkerListOf(ctx, run.Key{PipelineID: "orders"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			if k, err := run.ParseMarkerKind(m.Kind); err == nil && k.Name == run.MarkerDownstream {
				out = append(out, m.Kind)
			}
		}
		return out
	}
	if got := downstreams(); len(got) != 1 || got[0] != "downstream:revenue" {
		t.Fatalf("orders' downstream index: %v", got)
	}
	// orders waiting for revenue closes orders -> revenue -> orders.
	cyclic := strings.Replace(orders, "rules: [{key: orders-landed, check: exists}]", "rules: [{check: upstream, pipeline: revenue}]", 1)
	_, err := f.eng.ApplyConfig(ctx, "orders.yaml", []byte(cyclic))
	if err == nil || !strings.Contains(err.Error(), "validation.rules: upstream cycle: orders -> revenue -> orders") {
		t.Fatalf("cyclic config: %v", err)
	}
	if n := f.count(t, "CONFIG_INVALID"); n != 1 {
		t.Fatalf("%d CONFIG_INVALID, want 1", n)
	}
	if p := f.config(t, "orders"); len(p.Upstreams) != 0 {
		t.Fatalf("the refused version runs: %+v", p.Upstreams)
	}
	// revenue no longer depends on orders: the index entry goes.
	alone := strings.Replace(revenue, "rules: [{check: upstream, pipeline: orders}]", "rules: [{key: x, check: exists}]\nschedule: {cron: '0 6 * * *'}", 1)
	if _, err := f.eng.ApplyConfig(ctx, "revenue.yaml", []byte(alone)); err != nil {
		t.Fatal(err)
	}
	if got := downstreams(); len(got) != 0 {
		t.Fatalf("orders' downstream index after revenue dropped its rule: %v", got)
	}
}
