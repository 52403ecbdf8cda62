package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// TestLongSynchronousJobIsNotTimedOutWhileItRuns: a command that runs
// for 90 minutes (timeout 2h) is not declared dead by the watchdog during
// its call, and its success is recorded.
func TestLongSynchronousJobIsNotTimedOutWhileItRuns(t *testing.T) {
	f := newFixture(t)
	const doc = `
pipeline: {id: long}
schedule: {trigger: {key: k, check: exists}}
job: {type: command, config: {command: [/bin/true], timeout: 2h}}
`
	if _, err := f.eng.ApplyConfig(t.Context(), "long.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	f.jobs.onStart = func(ctx context.Context) {
		// The job runs 90 minutes; the watchdog keeps passing meanwhile.
		for i := 0; i < 18; i++ {
			f.clk.Advance(5 * time.Minute)
			if _, err := f.eng.WatchdogPass(ctx, 24*time.Hour); err != nil {
				t.Error(err)
			}
		}
	}
	if _, err := f.eng.PutSensor(t.Context(), "long", "k", obj("n", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(f.events(t, event.SFNTimeout)); n != 0 {
		t.Fatalf("SFN_TIMEOUT during the call: %d", n)
	}
	r, err := f.st.RunGet(t.Context(), run.Key{PipelineID: "long", ScheduleID: "stream", Period: "2026-03-10"})
	if err != nil || r.State != run.Running {
		t.Fatalf("run after the call: %s %v (want RUNNING: the fixture's job system is polled)", r.State, err)
	}
	if n := len(f.events(t, event.JobTriggered)); n != 1 {
		t.Fatalf("JOB_TRIGGERED = %d", n)
	}
}
