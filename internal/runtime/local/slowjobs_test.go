package local

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/command"
)

// asyncJobs is a job system whose jobs start at once and have succeeded
// by their first poll.
type asyncJobs struct{ n atomic.Int64 }

func (a *asyncJobs) Start(context.Context, trigger.Request) (trigger.Started, error) {
	return trigger.Started{JobRunID: fmt.Sprintf("async-%d", a.n.Add(1))}, nil
}

func (a *asyncJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusSucceeded}, nil
}

// TestSlowCommandsDoNotDelayOtherPipelinesTimers: more slow `command`
// jobs than there are timer workers run at once — real programs, on a
// real SQLite store, through RunTimers — and while every one of them is
// still running, another pipeline's SLA warning, evaluation and poll, and
// a third pipeline's trigger, all happen. Then the slow jobs finish and
// their answers are recorded.
func TestSlowCommandsDoNotDelayOtherPipelinesTimers(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(t0)
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: trigger.Registry{
		"command": command.Runner{},
		"glue":    &asyncJobs{},
	}})
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	release := filepath.Join(dir, "release")
	slow := Workers + 2
	docs := map[string]string{
		"watch": `
pipeline: {id: watch}
schedule:
  trigger: {key: k, check: exists}
  evaluation: {window: 2h, interval: 1m}
validation:
  rules: [{key: ready, check: exists}]
sla: {deadline: "09:00", expectedDuration: 30m}
job: {type: command, config: {command: [/bin/true]}}
`,
		"async": `
pipeline: {id: async}
schedule: {trigger: {key: k, check: exists}}
job: {type: glue, config: {jobName: j}, pollInterval: 1m}
`,
	}
	for i := range slow {
		id := fmt.Sprintf("slow%d", i)
		script := fmt.Sprintf("touch %s; while [ ! -e %s ]; do sleep 0.05; done", filepath.Join(dir, "started."+id), release)
		docs[id] = fmt.Sprintf("pipeline: {id: %s}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: command, config: {command: [/bin/sh, -c, %q]}}\n", id, script)
	}
	for id, doc := range docs {
		if _, err := eng.ApplyConfig(ctx, id+".yaml", []byte(doc)); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	wake := make(chan struct{}, 1)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	eng.OnTimersChanged(poke)
	stopped := make(chan struct{})
	go func() { RunTimers(ctx, eng, wake, slog.New(slog.DiscardHandler)); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	defer os.WriteFile(release, nil, 0o600) // whatever happens, the programs end

	key := func(id string) run.Key { return run.Key{PipelineID: id, ScheduleID: "stream", Period: "2026-03-10"} }
	getRun := func(id string) run.Run {
		t.Helper()
		r, err := st.RunGet(ctx, key(id))
		if err != nil {
			t.Fatalf("run of %s: %v", id, err)
		}
		return r
	}
	// waitFor polls the store for cond; the bound only keeps a broken
	// runtime from hanging the test.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for end := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("never happened: %s", what)
			}
		}
	}
	slowRunning := func() int {
		n := 0
		for i := range slow {
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("started.slow%d", i))); err == nil {
				n++
			}
		}
		return n
	}

	for i := range slow {
		if _, err := eng.PutSensor(ctx, fmt.Sprintf("slow%d", i), "k", run.Detail("n", 1)); err != nil {
			t.Fatal(err)
		}
	}
	// As many slow programs as there are timer workers run: were the calls
	// holding the workers, nothing else would happen from here on.
	waitFor(fmt.Sprintf("%d slow programs running", Workers), func() bool { return slowRunning() >= Workers })

	// Another pipeline's trigger, while every slow job runs.
	if _, err := eng.PutSensor(ctx, "async", "k", run.Detail("n", 1)); err != nil {
		t.Fatal(err)
	}
	waitFor("the async pipeline's trigger", func() bool { return getRun("async").State == run.Running })
	// A run that waits for its rules: its next evaluation is a timer.
	if _, err := eng.PutSensor(ctx, "watch", "k", run.Detail("n", 1)); err != nil {
		t.Fatal(err)
	}
	if r := getRun("watch"); r.State != run.Evaluating || !r.UpdatedAt.Equal(t0) {
		t.Fatalf("watch run: %s updated %s", r.State, r.UpdatedAt)
	}

	// Time passes: the SLA warning (08:30), the watch run's evaluation
	// and the async job's poll come due.
	at := t0.Add(31 * time.Minute)
	clk.Set(at)
	poked := time.Now()
	poke()
	waitFor("the SLA warning", func() bool {
		page, err := st.EventList(ctx, store.EventListParams{Types: []event.Type{event.SLAWarning}})
		return err == nil && len(page.Events) == 1 && page.Events[0].PipelineID == "watch"
	})
	waitFor("the evaluation", func() bool { return getRun("watch").UpdatedAt.Equal(at) })
	waitFor("the poll", func() bool { return getRun("async").State == run.Completed })
	t.Logf("SLA warning, evaluation and poll taken %s after they came due, with %d slow jobs running", time.Since(poked).Round(time.Millisecond), slowRunning())
	waitFor(fmt.Sprintf("all %d slow programs running at once (%d timer workers)", slow, Workers), func() bool { return slowRunning() == slow })
	for i := range slow {
		if r := getRun(fmt.Sprintf("slow%d", i)); r.State != run.Triggering || !r.TriggerInFlight {
			t.Fatalf("slow%d: %s in flight %v before its program ended", i, r.State, r.TriggerInFlight)
		}
	}

	// The slow jobs end; their answers are recorded.
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range slow {
		id := fmt.Sprintf("slow%d", i)
		waitFor(id+" completed", func() bool { return getRun(id).State == run.Completed })
	}
	page, err := st.EventList(ctx, store.EventListParams{Types: []event.Type{event.JobTriggered}})
	if err != nil {
		t.Fatal(err)
	}
	var triggered []string
	for _, e := range page.Events {
		triggered = append(triggered, e.PipelineID)
	}
	if len(triggered) != slow+1 {
		t.Fatalf("JOB_TRIGGERED for %s, want each slow pipeline and async once", strings.Join(triggered, ", "))
	}
}

// gateJobs blocks every start until released, and counts the starts
// under way.
type gateJobs struct {
	release chan struct{}
	running atomic.Int64
}

func (g *gateJobs) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	g.running.Add(1)
	<-g.release
	return trigger.Started{JobRunID: "sync", Result: &trigger.Result{Status: trigger.StatusSucceeded}}, nil
}

func (g *gateJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusSucceeded}, nil
}

// TestATriggerWaitsForACallWorkerBeforeItBegins: with every call worker
// busy, a due trigger step is not begun (no in-flight mark whose call
// would wait in memory, to be taken for interrupted if the process
// stopped) while the other timers go on; it begins when a call ends.
func TestATriggerWaitsForACallWorkerBeforeItBegins(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(t0)
	jobs := &gateJobs{release: make(chan struct{})}
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: jobs})
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		doc := "pipeline: {id: " + id + "}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: command, config: {command: [x]}}\n"
		if _, err := eng.ApplyConfig(ctx, id+".yaml", []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	watch := "pipeline: {id: watch}\nschedule: {trigger: {key: k, check: exists}, evaluation: {window: 2h, interval: 1m}}\nvalidation: {rules: [{key: ready, check: exists}]}\njob: {type: command, config: {command: [x]}}\n"
	if _, err := eng.ApplyConfig(ctx, "watch.yaml", []byte(watch)); err != nil {
		t.Fatal(err)
	}
	wake := make(chan struct{}, 1)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	eng.OnTimersChanged(poke)
	stopped := make(chan struct{})
	go func() { runTimers(ctx, eng, wake, slog.New(slog.DiscardHandler), 2, 2, Drain); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	released := false
	defer func() {
		if !released {
			close(jobs.release)
		}
	}()
	getRun := func(id string) run.Run {
		t.Helper()
		r, err := st.RunGet(ctx, run.Key{PipelineID: id, ScheduleID: "stream", Period: "2026-03-10"})
		if err != nil {
			t.Fatalf("run of %s: %v", id, err)
		}
		return r
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for end := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("never happened: %s", what)
			}
		}
	}
	for _, id := range []string{"a", "b"} {
		if _, err := eng.PutSensor(ctx, id, "k", run.Detail("n", 1)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("two calls in flight", func() bool { return jobs.running.Load() == 2 })
	for _, id := range []string{"c", "watch"} {
		if _, err := eng.PutSensor(ctx, id, "k", run.Detail("n", 1)); err != nil {
			t.Fatal(err)
		}
	}
	// The watch run's evaluation is due after c's trigger step: once it
	// was taken, the loop had c's step in hand and left it due.
	at := t0.Add(time.Minute)
	clk.Set(at)
	poke()
	waitFor("the evaluation", func() bool { return getRun("watch").UpdatedAt.Equal(at) })
	if r := getRun("c"); r.State != run.Triggering || r.TriggerInFlight || jobs.running.Load() != 2 {
		t.Fatalf("c with every call worker busy: %s in flight %v, %d calls", r.State, r.TriggerInFlight, jobs.running.Load())
	}
	close(jobs.release)
	released = true
	for _, id := range []string{"a", "b", "c"} {
		waitFor(id+" completed", func() bool { return getRun(id).State == run.Completed })
	}
}
