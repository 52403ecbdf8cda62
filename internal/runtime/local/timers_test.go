package local

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/trigger"
)

// blockingJobs blocks the start of pipeline "slow" until released, and
// signals the start of the others. A slow start whose context was
// cancelled fails, so a shutdown that cuts the call short shows.
type blockingJobs struct {
	release     chan struct{}
	started     chan struct{} // closed when the slow job's start begins
	otherDone   chan struct{} // closed when another pipeline's job started
	once, other sync.Once
}

func newBlockingJobs() *blockingJobs {
	return &blockingJobs{release: make(chan struct{}), started: make(chan struct{}), otherDone: make(chan struct{})}
}

func (j *blockingJobs) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	if req.PipelineID != "slow" {
		j.other.Do(func() { close(j.otherDone) })
		return trigger.Started{JobRunID: "sync", Result: &trigger.Result{Status: trigger.StatusSucceeded}}, nil
	}
	j.once.Do(func() { close(j.started) })
	select {
	case <-j.release:
	case <-ctx.Done():
	}
	if err := ctx.Err(); err != nil {
		return trigger.Started{}, err
	}
	return trigger.Started{JobRunID: "sync", Result: &trigger.Result{Status: trigger.StatusSucceeded}}, nil
}

func (j *blockingJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusSucceeded}, nil
}

// TestALongJobDoesNotHoldUpOtherPipelines: while one pipeline's
// synchronous job runs, another pipeline's trigger still happens.
func TestALongJobDoesNotHoldUpOtherPipelines(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	jobs := newBlockingJobs()
	clk := clock.NewVirtual(time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC))
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: jobs})
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"slow", "quick"} {
		doc := "pipeline: {id: " + id + "}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: command, config: {command: [x]}}\n"
		if _, err := eng.ApplyConfig(ctx, id+".yaml", []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	wake := make(chan struct{}, 1)
	eng.OnTimersChanged(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	go RunTimers(ctx, eng, wake, slog.New(slog.DiscardHandler))
	if _, err := eng.PutSensor(ctx, "slow", "k", run.Detail("n", 1)); err != nil {
		t.Fatal(err)
	}
	select { // the slow job is now being started, and blocks
	case <-jobs.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the slow job never started")
	}
	if _, err := eng.PutSensor(ctx, "quick", "k", run.Detail("n", 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-jobs.otherDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the quick pipeline's job waited for the slow one")
	}
	close(jobs.release)
}

// TestShutdownLetsATriggerCallFinish: a graceful stop during a trigger
// call waits for it and records its result, instead of cancelling the job
// and leaving the run "in flight" for a person to sort out.
func TestShutdownLetsATriggerCallFinish(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	jobs := newBlockingJobs()
	eng := engine.New(engine.Options{Store: st, Clock: clock.NewVirtual(time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)), Jobs: jobs})
	if err := eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	doc := "pipeline: {id: slow}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: command, config: {command: [x]}}\n"
	if _, err := eng.ApplyConfig(t.Context(), "slow.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutSensor(t.Context(), "slow", "k", run.Detail("n", 1)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { RunTimers(ctx, eng, make(chan struct{}), slog.New(slog.DiscardHandler)); close(done) }()
	select { // the call is in flight
	case <-jobs.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the slow job never started")
	}
	cancel()            // SIGTERM: a call run under this context would see it cancelled now
	close(jobs.release) // the job answers after the shutdown began
	<-done
	r, err := st.RunGet(t.Context(), run.Key{PipelineID: "slow", ScheduleID: "stream", Period: "2026-03-10"})
	if err != nil || r.TriggerInFlight || r.State != run.Completed {
		t.Fatalf("run after a graceful stop: %s in-flight=%v %v", r.State, r.TriggerInFlight, err)
	}
}
