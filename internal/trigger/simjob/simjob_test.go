package simjob

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

func TestPlansPlayInTriggerOrder(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC))
	b := New(clk, map[string][]Plan{"p": {
		{Duration: 10 * time.Minute, Result: ResultFail, Category: run.Permanent, TriggerErrors: 2},
		{Duration: 0, Result: ResultSuccess},
		{Duration: time.Minute, Result: ResultHang},
	}})
	ctx := context.Background()
	req := trigger.Request{PipelineID: "p"}
	for i := 1; i <= 2; i++ {
		if _, err := b.Start(ctx, req); !errors.Is(err, ErrTriggerCall) {
			t.Fatalf("trigger call %d: err = %v, want a simulated infrastructure error", i, err)
		}
	}
	st, err := b.Start(ctx, req)
	if err != nil || st.Result != nil {
		t.Fatalf("third call: %+v %v", st, err)
	}
	req.Meta = st.Meta
	if r, _ := b.Poll(ctx, req); r.Status != trigger.StatusRunning {
		t.Fatalf("before its duration: %+v", r)
	}
	clk.Advance(10 * time.Minute)
	if r, _ := b.Poll(ctx, req); r.Status != trigger.StatusFailed || r.Category != run.Permanent {
		t.Fatalf("after its duration: %+v", r)
	}
	sync, err := b.Start(ctx, trigger.Request{PipelineID: "p"})
	if err != nil || sync.Result == nil || sync.Result.Status != trigger.StatusSucceeded {
		t.Fatalf("synchronous job: %+v %v", sync, err)
	}
	hang, _ := b.Start(ctx, trigger.Request{PipelineID: "p"})
	clk.Advance(24 * time.Hour)
	if r, _ := b.Poll(ctx, trigger.Request{PipelineID: "p", Meta: hang.Meta}); r.Status != trigger.StatusRunning {
		t.Fatalf("a hanging job reported %+v", r)
	}
	def, _ := b.Start(ctx, trigger.Request{PipelineID: "p"})
	clk.Advance(Default.Duration)
	if r, _ := b.Poll(ctx, trigger.Request{PipelineID: "p", Meta: def.Meta}); r.Status != trigger.StatusSucceeded {
		t.Fatalf("plans used up: default job reported %+v", r)
	}
}

func TestUnknownJobIsAnError(t *testing.T) {
	b := New(clock.NewVirtual(time.Time{}), nil)
	if _, err := b.Poll(context.Background(), trigger.Request{Meta: map[string]string{"simJobId": "nope"}}); err == nil {
		t.Fatal("polling an unknown job succeeded")
	}
}

func TestRegistry(t *testing.T) {
	b := New(clock.NewVirtual(time.Time{}), nil)
	reg := trigger.Registry{"glue": b}
	if _, err := reg.Start(context.Background(), trigger.Request{Type: "glue", PipelineID: "p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Start(context.Background(), trigger.Request{Type: "emr"}); !errors.Is(err, trigger.ErrUnknownType) {
		t.Fatalf("unknown type: %v", err)
	}
}
