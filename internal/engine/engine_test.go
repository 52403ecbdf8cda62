package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/trigger"
)

var t0 = time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)

const orders = `
pipeline: {id: orders}
schedule:
  trigger: {key: orders-landed, check: exists}
validation:
  rules: [{key: orders-landed, check: exists}]
job: {type: glue, config: {jobName: orders}, pollInterval: 1m}
`

// countingJobs is a job system that counts starts; its jobs succeed at
// the first poll.
type countingJobs struct {
	starts  atomic.Int64
	onStart func(ctx context.Context)
}

func (c *countingJobs) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	c.starts.Add(1)
	if c.onStart != nil {
		c.onStart(ctx)
	}
	return trigger.Started{JobRunID: fmt.Sprintf("jr-%d", c.starts.Load()), Meta: map[string]string{"id": "x"}}, nil
}

func (c *countingJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusSucceeded}, nil
}

type fixture struct {
	path string
	clk  *clock.Virtual
	jobs *countingJobs
	st   store.Store
	eng  *engine.Engine
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{path: filepath.Join(t.TempDir(), "e.db"), clk: clock.NewVirtual(t0), jobs: &countingJobs{}}
	f.open(t)
	if _, err := f.eng.ApplyConfig(t.Context(), "orders.yaml", []byte(orders)); err != nil {
		t.Fatal(err)
	}
	return f
}

// open starts (or restarts) the engine on the fixture's store file.
func (f *fixture) open(t *testing.T) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f.st = st
	f.eng = engine.New(engine.Options{Store: st, Clock: f.clk, Jobs: f.jobs})
	if err := f.eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) events(t *testing.T, typ event.Type) []event.Event {
	t.Helper()
	evsPage, err := f.st.EventList(t.Context(), store.EventListParams{Types: []event.Type{typ}})
	evs := evsPage.Events
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func obj(kv ...any) sensor.Object { return run.Detail(kv...) }

// TestRacingSensorWritesTriggerOnce: ten writers race to start the same
// period with different content; exactly one run and one trigger result.
func TestRacingSensorWritesTriggerOnce(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.eng.PutSensor(t.Context(), "orders", "orders-landed", obj("batch", i))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("PutSensor: %v", err)
		}
	}
	// Run the timers from several goroutines too: the trigger step must
	// still happen once.
	var wg2 sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			if _, err := f.eng.RunDue(t.Context()); err != nil {
				t.Errorf("RunDue: %v", err)
			}
		}()
	}
	wg2.Wait()
	if n := f.jobs.starts.Load(); n != 1 {
		t.Fatalf("job started %d times, want 1", n)
	}
	if n := len(f.events(t, event.JobTriggered)); n != 1 {
		t.Fatalf("%d JOB_TRIGGERED events, want 1", n)
	}
	runs, err := f.st.RunList(t.Context(), store.RunListParams{PipelineID: "orders"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %d %v", len(runs), err)
	}
}

// TestCrashDuringTriggerCallDoesNotTriggerAgain: the process dies after the
// job system accepted the start but before the result was recorded. After
// a restart, the run ends as outcome-unknown (INFRA_FAILURE) and the job is
// not started a second time.
func TestCrashDuringTriggerCallDoesNotTriggerAgain(t *testing.T) {
	f := newFixture(t)
	ctx, crash := context.WithCancel(t.Context())
	f.jobs.onStart = func(context.Context) { crash() } // the process dies mid-call
	if _, err := f.eng.PutSensor(ctx, "orders", "orders-landed", obj("n", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.RunDue(ctx); err == nil {
		t.Fatal("RunDue survived the crash")
	}
	if n := f.jobs.starts.Load(); n != 1 {
		t.Fatalf("starts before restart = %d", n)
	}
	r, err := f.st.RunGet(t.Context(), run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2026-03-10"})
	if err != nil || r.State != run.Triggering || !r.TriggerInFlight {
		t.Fatalf("stored run after crash: %+v %v", r, err)
	}

	f.jobs.onStart = nil
	f.open(t)                                   // restart
	f.clk.Advance(run.TriggerLease + time.Hour) // past the lease, which covers the call timeout
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := f.jobs.starts.Load(); n != 1 {
		t.Fatalf("job started %d times, want exactly 1", n)
	}
	r, _ = f.st.RunGet(t.Context(), r.Key)
	if r.State != run.FailedFinal || r.Outcome != run.OutcomeTriggerUnknown {
		t.Fatalf("run after restart: %s %s", r.State, r.Outcome)
	}
	if n := len(f.events(t, event.InfraFailure)); n != 1 {
		t.Fatalf("%d INFRA_FAILURE events, want 1", n)
	}
	if n := len(f.events(t, event.JobTriggered)); n != 0 {
		t.Fatalf("JOB_TRIGGERED recorded for an unknown outcome: %d", n)
	}
}

// TestRestartKeepsTimersAndState: a restart between trigger and completion
// loses nothing and repeats nothing.
func TestRestartKeepsTimersAndState(t *testing.T) {
	f := newFixture(t)
	if _, err := f.eng.PutSensor(t.Context(), "orders", "orders-landed", obj("n", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.open(t)
	due, ok, err := f.eng.NextDue(t.Context())
	if err != nil || !ok || !due.Equal(t0.Add(time.Minute)) {
		t.Fatalf("poll timer after restart: %v %v %v", due, ok, err)
	}
	f.clk.Set(due)
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if f.jobs.starts.Load() != 1 || len(f.events(t, event.JobCompleted)) != 1 || len(f.events(t, event.JobTriggered)) != 1 {
		t.Fatalf("starts %d completed %d triggered %d", f.jobs.starts.Load(), len(f.events(t, event.JobCompleted)), len(f.events(t, event.JobTriggered)))
	}
}

func TestSensorErrors(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name     string
		pipeline string
		key      string
		data     sensor.Object
		want     error
	}{
		{"unknown pipeline", "nope", "k", obj(), engine.ErrUnknownPipeline},
		{"empty key", "orders", "", obj(), engine.ErrInvalidSensor},
		{"control characters in key", "orders", "a\nb", obj(), engine.ErrInvalidSensor},
		{"malformed date field", "orders", "orders-landed", obj("date", "2026-13-40"), engine.ErrInvalidSensor},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := f.eng.PutSensor(t.Context(), c.pipeline, c.key, c.data); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
	if _, err := f.st.SensorGet(t.Context(), "orders", "orders-landed"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused write was stored: %v", err)
	}
}

func TestIdenticalRewriteIsNotNewData(t *testing.T) {
	f := newFixture(t)
	first, err := f.eng.PutSensor(t.Context(), "orders", "orders-landed", obj("n", 1))
	if err != nil || !first.Changed {
		t.Fatalf("first write: %+v %v", first, err)
	}
	f.clk.Advance(time.Minute)
	again, err := f.eng.PutSensor(t.Context(), "orders", "orders-landed", obj("n", 1))
	if err != nil || again.Changed || !again.Sensor.ChangedAt.Equal(first.Sensor.ChangedAt) {
		t.Fatalf("rewrite: %+v %v", again, err)
	}
	f.clk.Set(t0.Add(24 * time.Hour))
	nextDay, err := f.eng.PutSensor(t.Context(), "orders", "orders-landed", obj("n", 1))
	if err != nil || !nextDay.Changed || nextDay.Period != "2026-03-11" {
		t.Fatalf("same content next day: %+v %v", nextDay, err)
	}
}

// TestRuleOptionsReachDecisions: the engine's rule options
// (Options.Rules) are the ones its decisions evaluate rules with (each
// batch's decide.Env): trigger data stamped 10m ahead of now passes an
// age rule within a 15m clock skew, and not within the default 5m.
func TestRuleOptionsReachDecisions(t *testing.T) {
	const doc = `
pipeline: {id: fresh}
schedule:
  trigger: {key: landed, check: age_lt, field: updatedAt, value: 2h}
job: {type: glue, config: {jobName: fresh}, pollInterval: 1m}
`
	for _, c := range []struct {
		skew    time.Duration
		started bool
	}{{15 * time.Minute, true}, {0, false}} {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "e.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		eng := engine.New(engine.Options{Store: st, Clock: clock.NewVirtual(t0), Jobs: &countingJobs{}, Rules: rule.Options{MaxClockSkew: c.skew}})
		if err := eng.Open(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.ApplyConfig(t.Context(), "fresh.yaml", []byte(doc)); err != nil {
			t.Fatal(err)
		}
		res, err := eng.PutSensor(t.Context(), "fresh", "landed", obj("updatedAt", t0.Add(10*time.Minute).Format(time.RFC3339)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.RunGet(t.Context(), run.Key{PipelineID: "fresh", ScheduleID: "stream", Period: res.Period})
		if started := err == nil; started != c.started {
			t.Errorf("skew %v: run started %v, want %v (%v)", c.skew, started, c.started, err)
		}
	}
}

// newEngineOn builds a second engine on st (a decorated store) with the
// fixture's clock and jobs, and loads its configs.
func newEngineOn(t *testing.T, f *fixture, st store.Store) *engine.Engine {
	t.Helper()
	eng := engine.New(engine.Options{Store: st, Clock: f.clk, Jobs: f.jobs})
	if err := eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	return eng
}

func TestRerunReasonReservedForRetries(t *testing.T) {
	f := newFixture(t)
	if _, err := f.eng.RequestRerun(t.Context(), "orders", "2026-03-10", "job-fail-retry"); !errors.Is(err, engine.ErrInvalidRequest) {
		t.Fatalf("err = %v", err)
	}
}

// TestConfigInvalidOncePerContent: a refused file is reported once per
// content, across restarts (each `watchdog --once` is one), and again
// after it was fixed and broken anew.
func TestConfigInvalidOncePerContent(t *testing.T) {
	f := newFixture(t)
	broken := []byte(orders + "bogus: 1\n")
	apply := func(doc []byte) {
		t.Helper()
		_, _ = f.eng.ApplyConfig(t.Context(), "orders.yaml", doc)
	}
	want := func(n int, when string) {
		t.Helper()
		if got := len(f.events(t, event.ConfigInvalid)); got != n {
			t.Fatalf("%s: %d CONFIG_INVALID, want %d", when, got, n)
		}
	}
	apply(broken)
	want(1, "first refusal")
	apply(broken)
	f.open(t)
	apply(broken)
	want(1, "same content again and after a restart")
	apply(append(broken, []byte("other: 2\n")...))
	want(2, "different broken content")
	apply([]byte(orders))
	apply(broken)
	want(3, "broken again after a fix")
}
