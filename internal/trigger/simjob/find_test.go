package simjob

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/trigger"
)

// TestFindsTheRealTypes: the simulated backend answers lookups for exactly
// the job types whose real runners can look their jobs up, so a simulated
// restart recovers an interrupted call as serve would.
func TestFindsTheRealTypes(t *testing.T) {
	real := app.Jobs(func(string) (string, bool) { return "", false }, nil)
	b := New(clock.NewVirtual(time.Time{}), nil)
	for _, jt := range pipeline.JobTypes() {
		if got, want := trigger.Findable(b, string(jt)), trigger.Findable(real, string(jt)); got != want {
			t.Errorf("%s: simulated findable %v, real %v", jt, got, want)
		}
	}
}

func TestFindByRunID(t *testing.T) {
	b := New(clock.NewVirtual(time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)), nil)
	ctx := context.Background()
	req := trigger.Request{PipelineID: "p", RunID: "p-stream-2026-03-10-g0-a1", Type: "airflow"}
	if _, found, err := b.Find(ctx, req); found || err != nil {
		t.Fatalf("before the start: found %v, %v", found, err)
	}
	st, err := b.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := b.Find(ctx, req)
	if err != nil || !found || got.JobRunID != st.JobRunID || got.Meta["simJobId"] != st.JobRunID {
		t.Fatalf("Find = %+v %v %v, want %s", got, found, err, st.JobRunID)
	}
	other := req
	other.RunID = "p-stream-2026-03-10-g0-a2"
	if _, found, _ := b.Find(ctx, other); found {
		t.Fatal("another attempt's identity found a job")
	}
	if b.Started("p") != 1 {
		t.Fatalf("started %d", b.Started("p"))
	}
}

// TestCrash: a plan's crash stops the process making the call — after the
// job exists (after-start) or before (before-start) — once; the call after
// it gets through, and the job system holds one job per plan.
func TestCrash(t *testing.T) {
	for _, c := range []Crash{CrashAfterStart, CrashBeforeStart} {
		t.Run(string(c), func(t *testing.T) {
			b := New(clock.NewVirtual(time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)), map[string][]Plan{"p": {{Duration: time.Minute, Result: ResultSuccess, Crash: c}}})
			stops := 0
			b.OnCrash(func() { stops++ })
			req := trigger.Request{PipelineID: "p", RunID: "p-stream-2026-03-10-g0-a1", Type: "airflow"}
			if _, err := b.Start(context.Background(), req); !errors.Is(err, ErrProcessStopped) || stops != 1 {
				t.Fatalf("first call: %v, stops %d", err, stops)
			}
			_, found, _ := b.Find(context.Background(), req)
			if found != (c == CrashAfterStart) || b.Started("p") != map[Crash]int{CrashAfterStart: 1, CrashBeforeStart: 0}[c] {
				t.Fatalf("after the crash: found %v, started %d", found, b.Started("p"))
			}
			if c == CrashBeforeStart {
				st, err := b.Start(context.Background(), req)
				if err != nil || st.JobRunID == "" || stops != 1 || b.Started("p") != 1 {
					t.Fatalf("the call after the crash: %+v %v, stops %d", st, err, stops)
				}
			}
		})
	}
}
