// Package enginetest is the crash-and-restart kit: a job type whose runner
// can look up its jobs (trigger.Finder) shows, with its real runner against
// a fake of its job system, that a real engine on a SQLite store recovers a
// run interrupted during its trigger call. It sits beside the engine (it
// drives one) so that the job types' contract kit, triggertest, stays below
// the engine.
package enginetest

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Crash is a crash-and-restart case of a job type whose runner can look
// up its jobs (trigger.Finder), against a fake of its job system.
type Crash struct {
	// Pipeline is the pipeline document: id, a trigger sensor "k" (check:
	// exists), and a job of the type whose config points at the fake.
	Pipeline string
	// NewRunner returns the type's real runner, as a new process makes it.
	NewRunner func() trigger.Runner
	// Jobs is the number of jobs the fake has started.
	Jobs func() int
	// Succeed makes the fake report success for every job from now on.
	Succeed func()
}

// ErrCrashed is the trigger call's answer in a process that is dying.
var ErrCrashed = errors.New("the process stopped during the trigger call")

// crashing is the runner of a process that dies during its trigger call:
// after the job system received the call (reach), or before.
type crashing struct {
	next  trigger.Runner
	reach bool
	die   context.CancelFunc
}

func (c *crashing) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	if c.reach {
		if _, err := c.next.Start(ctx, req); err != nil {
			return trigger.Started{}, err
		}
	}
	c.die() // the answer is never recorded
	return trigger.Started{}, ErrCrashed
}

func (c *crashing) Poll(ctx context.Context, req trigger.Request) (trigger.Result, error) {
	return c.next.Poll(ctx, req)
}

// CrashAndRestart shows that a run interrupted during its trigger call
// needs no person: the process dies after committing the "call in flight"
// mark and before recording the call's answer — once after the job system
// received the call, once before — and a new engine on the same SQLite
// store, with the type's real runner, says at once that the outcome is
// being established (TRIGGER_OUTCOME_UNKNOWN, not repeated by a second
// restart), looks the job up, adopts it (the call had started it) or
// triggers again (it had not), and the run ends COMPLETED with one
// JOB_TRIGGERED, no failure, no rerun, and exactly one job on the fake's
// side.
func CrashAndRestart(t *testing.T, newCase func(t *testing.T) Crash) {
	for _, reached := range []bool{true, false} {
		name := map[bool]string{true: "the call had started the job: adopted", false: "the call had started nothing: triggered again"}[reached]
		t.Run(name, func(t *testing.T) { crashAndRestart(t, newCase(t), reached) })
	}
}

func crashAndRestart(t *testing.T, c Crash, reached bool) {
	ctx := t.Context()
	clk := clock.NewVirtual(time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "interlock.db")
	open := func(jobs trigger.Runner) (store.Store, *engine.Engine) {
		t.Helper()
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: jobs})
		if err := eng.Open(ctx); err != nil {
			t.Fatalf("Open: %v", err)
		}
		return st, eng
	}
	registry := func(r trigger.Runner) trigger.Registry {
		return trigger.Registry{jobType(t, c.Pipeline): r}
	}

	// The first process: the call is in flight when it dies.
	callCtx, die := context.WithCancel(ctx)
	st, eng := open(registry(&crashing{next: c.NewRunner(), reach: reached, die: die}))
	p, err := eng.ApplyConfig(ctx, "p.yaml", []byte(c.Pipeline))
	if err != nil {
		t.Fatalf("ApplyConfig: %v", err)
	}
	if _, err := eng.PutSensor(ctx, p.ID, "k", run.Detail("n", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.RunDue(callCtx); err == nil {
		t.Fatal("the process survived its crash")
	}
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	if r, err := st.RunGet(ctx, key); err != nil || r.State != run.Triggering || !r.TriggerInFlight {
		t.Fatalf("run after the crash: %+v %v", r, err)
	}
	if n, want := c.Jobs(), map[bool]int{true: 1, false: 0}[reached]; n != want {
		t.Fatalf("%d jobs on the job system after the crash, want %d", n, want)
	}
	_ = st.Close()

	// A new process on the same store says at once what it does.
	clk.Advance(2 * time.Minute)
	st, eng = open(registry(c.NewRunner()))
	events := func(typ event.Type) []event.Event {
		t.Helper()
		evs, err := st.EventList(ctx, store.EventListParams{Types: []event.Type{typ}})
		if err != nil {
			t.Fatal(err)
		}
		return evs.Events
	}
	found := events(event.TriggerOutcomeUnknown)
	if len(found) != 1 || !found[0].Time.Equal(clk.Now()) || !strings.Contains(found[0].Message, "looking up") {
		t.Fatalf("at restart: TRIGGER_OUTCOME_UNKNOWN %+v", found)
	}
	x, err := eng.Explain(ctx, p.ID, key.Period)
	if err != nil || x.Run == nil || !strings.Contains(x.Run.TriggerCall, "being looked up") {
		t.Fatalf("explain before the lookup: %+v %v", x.Run, err)
	}
	// A second restart does not say it again for the same call.
	_ = st.Close()
	st, eng = open(registry(c.NewRunner()))
	if n := len(events(event.TriggerOutcomeUnknown)); n != 1 {
		t.Fatalf("a second restart repeated TRIGGER_OUTCOME_UNKNOWN: %d", n)
	}

	// The lookup is due at once: the job is adopted, or triggered again.
	if _, err := eng.RunDue(ctx); err != nil {
		t.Fatalf("RunDue: %v", err)
	}
	r, err := st.RunGet(ctx, key)
	if err != nil || r.State != run.Running || r.TriggerInFlight || r.JobRunID == "" {
		t.Fatalf("run after the lookup: %+v %v", r, err)
	}
	triggered := events(event.JobTriggered)
	if len(triggered) != 1 {
		t.Fatalf("%d JOB_TRIGGERED, want 1", len(triggered))
	}
	adopted, _ := triggered[0].Detail.Get("adopted")
	// Databricks and EMR Serverless look up by repeating their idempotent
	// start, so a job the call never started is "found" too, started by
	// the lookup itself; either way one job holds the identity.
	if reached && adopted.String() != "true" {
		t.Fatalf("the job the call started was not adopted: %s", triggered[0].Message)
	}
	if c.Jobs() != 1 {
		t.Fatalf("%d jobs on the job system, want 1", c.Jobs())
	}

	// The run goes on as usual and ends without a person.
	c.Succeed()
	for i := 0; i < 10 && !r.State.Terminal(); i++ {
		due, ok, err := eng.NextDue(ctx)
		if err != nil || !ok {
			t.Fatalf("no timer for a running run: %v", err)
		}
		clk.Set(due)
		if _, err := eng.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if r, err = st.RunGet(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if r.State != run.Completed {
		t.Fatalf("run ended %s/%s, want COMPLETED", r.State, r.Outcome)
	}
	for typ, want := range map[event.Type]int{
		event.TriggerOutcomeUnknown: 1, event.JobTriggered: 1, event.JobCompleted: 1,
		event.InfraFailure: 0, event.RetryExhausted: 0, event.JobFailed: 0, event.RerunAccepted: 0,
	} {
		if n := len(events(typ)); n != want {
			t.Errorf("%d %s, want %d", n, typ, want)
		}
	}
	if c.Jobs() != 1 {
		t.Fatalf("%d jobs on the job system, want exactly 1", c.Jobs())
	}
}

// jobType is the pipeline document's job.type.
func jobType(t *testing.T, doc string) string {
	t.Helper()
	p, err := pipeline.ParsePipeline("p.yaml", []byte(doc), pipeline.Options{})
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	return string(p.Job.Type)
}
