package engine_test

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
)

// TestARemovedPipelineBackKeepsOrRestartsItsFirstLoad: a pipeline whose
// file was removed and comes back changed starts from now when its cron
// changed and keeps its first-load time when not, judged on the removed
// row's config (resolved beside the batch: the rounds resolve no removed
// row's), with every SLA fact the decision reads named ahead — no late
// read (decide.ConfigLoadNeeds).
func TestARemovedPipelineBackKeepsOrRestartsItsFirstLoad(t *testing.T) {
	doc := func(cron, job string) []byte {
		return []byte("pipeline: {id: s1}\nschedule: {cron: '" + cron + "'}\nsla: {deadline: '07:00'}\njob: {type: glue, config: {jobName: " + job + "}}\n")
	}
	for _, c := range []struct {
		name      string
		back      []byte
		restarted bool
	}{
		{name: "another cron", back: doc("0 5 * * *", "j"), restarted: true},
		{name: "the same cron", back: doc("0 6 * * *", "j2")},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := t.Context()
			f.clk.Set(t0.Add(-48 * time.Hour))
			if _, err := f.eng.ApplyConfig(ctx, "s1.yaml", doc("0 6 * * *", "j")); err != nil {
				t.Fatal(err)
			}
			first := f.clk.Now()
			f.clk.Set(t0) // 08:00: today's 07:00 breach passed
			if forgot, err := f.eng.Forget(ctx, "s1"); err != nil || !forgot {
				t.Fatalf("Forget = %v, %v", forgot, err)
			}
			late := engine.ProcessFactsStats().LateReads
			if _, err := f.eng.ApplyConfig(ctx, "s1.yaml", c.back); err != nil {
				t.Fatal(err)
			}
			if n := engine.ProcessFactsStats().LateReads - late; n > 0 {
				t.Fatalf("%d late reads loading it back: %s", n, engine.ProcessFactsStats().LastLate)
			}
			_, row, err := f.eng.Pipeline(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			want := first
			if c.restarted {
				want = t0
			}
			if !row.FirstLoadedAt.Equal(want) {
				t.Fatalf("first loaded %v, want %v", row.FirstLoadedAt, want)
			}
		})
	}
}
