package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/trigger"
)

// A job system that keeps one job per identity (the run id), as Airflow,
// Databricks, Step Functions and EMR Serverless do, and can be asked by it
// (trigger.Finder). The job types' own crash tests run against fakes of the
// real APIs (enginetest.CrashAndRestart); these tests cover the engine's
// side: the decisions' sequencing, dedup across restarts, backoff, explain.
type identityJobs struct {
	mu        sync.Mutex
	jobs      map[string]string // run id → job run id
	starts    int               // Start calls
	finds     int               // Find calls
	findErr   error             // every Find fails with it
	crash     func()            // set: the process dies during the next Start
	reach     bool              // … after the job system received the call
	blockNext chan struct{}     // set: the next Start blocks (after registering its job) until closed
	started   chan struct{}     // closed when a blocked Start has registered its job
}

func newIdentityJobs() *identityJobs { return &identityJobs{jobs: map[string]string{}} }

func (j *identityJobs) Finds(string) bool { return true }

func (j *identityJobs) register(runID string) string {
	if id, ok := j.jobs[runID]; ok {
		return id
	}
	id := fmt.Sprintf("job-%d", len(j.jobs)+1)
	j.jobs[runID] = id
	return id
}

func (j *identityJobs) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	j.mu.Lock()
	j.starts++
	crash, reach, block, started := j.crash, j.reach, j.blockNext, j.started
	j.crash, j.blockNext = nil, nil
	var id string
	if crash == nil || reach {
		id = j.register(req.RunID)
	}
	j.mu.Unlock()
	if crash != nil {
		crash()
		return trigger.Started{}, errors.New("the process stopped")
	}
	if block != nil {
		close(started)
		<-block
	}
	return trigger.Started{JobRunID: id, Meta: map[string]string{"id": id}}, nil
}

func (j *identityJobs) Find(_ context.Context, req trigger.Request) (trigger.Started, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.finds++
	if j.findErr != nil {
		return trigger.Started{}, false, j.findErr
	}
	id, ok := j.jobs[req.RunID]
	if !ok {
		return trigger.Started{}, false, nil
	}
	return trigger.Started{JobRunID: id, Meta: map[string]string{"id": id}}, true, nil
}

func (j *identityJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusSucceeded}, nil
}

func (j *identityJobs) count() (jobs, starts, finds int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.jobs), j.starts, j.finds
}

const airflowOrders = `
pipeline: {id: orders}
schedule:
  trigger: {key: orders-landed, check: exists}
job: {type: airflow, config: {url: "https://airflow.example.com", dagId: orders}, pollInterval: 1m}
`

var ordersKey = run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2026-03-10"}

// stack is one process after another on the same SQLite file.
type stack struct {
	path string
	clk  *clock.Virtual
	jobs trigger.Runner
	st   store.Store
	eng  *engine.Engine
}

func newStack(t *testing.T, jobs trigger.Runner, doc string) *stack {
	t.Helper()
	s := &stack{path: filepath.Join(t.TempDir(), "e.db"), clk: clock.NewVirtual(t0), jobs: jobs}
	s.st, s.eng = s.open(t)
	if _, err := s.eng.ApplyConfig(t.Context(), "orders.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	return s
}

// open starts a process on the stack's store; the previous one stops.
func (s *stack) open(t *testing.T) (store.Store, *engine.Engine) {
	t.Helper()
	if s.st != nil {
		_ = s.st.Close()
	}
	st, err := sqlite.Open(t.Context(), s.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	eng := engine.New(engine.Options{Store: st, Clock: s.clk, Jobs: s.jobs})
	if err := eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st, eng
}

func (s *stack) restart(t *testing.T) { s.st, s.eng = s.open(t) }

func (s *stack) events(t *testing.T, typ event.Type) []event.Event {
	t.Helper()
	evsPage, err := s.st.EventList(t.Context(), store.EventListParams{Types: []event.Type{typ}})
	evs := evsPage.Events
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func (s *stack) run(t *testing.T) run.Run {
	t.Helper()
	r, err := s.st.RunGet(t.Context(), ordersKey)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (s *stack) due(t *testing.T) {
	t.Helper()
	if _, err := s.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// next jumps to the next timer and processes it.
func (s *stack) next(t *testing.T) {
	t.Helper()
	at, ok, err := s.eng.NextDue(t.Context())
	if err != nil || !ok {
		t.Fatalf("no timer: %v", err)
	}
	s.clk.Set(at)
	s.due(t)
}

// crashDuringTrigger writes the trigger sensor and lets the trigger call
// begin; the process dies during it (die is what jobs call).
func (s *stack) crashDuringTrigger(t *testing.T, arm func(die func())) {
	t.Helper()
	ctx, die := context.WithCancel(t.Context())
	arm(die)
	if _, err := s.eng.PutSensor(t.Context(), "orders", "orders-landed", obj("n", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.RunDue(ctx); err == nil {
		t.Fatal("RunDue survived the crash")
	}
	if r := s.run(t); r.State != run.Triggering || !r.TriggerInFlight {
		t.Fatalf("run after the crash: %s in-flight=%v", r.State, r.TriggerInFlight)
	}
}

func (s *stack) explainCall(t *testing.T) string {
	t.Helper()
	x, err := s.eng.Explain(t.Context(), "orders", ordersKey.Period)
	if err != nil || x.Run == nil {
		t.Fatalf("explain: %+v %v", x, err)
	}
	return x.Run.TriggerCall
}

// TestInterruptedCallOfATypeThatCannotBeAskedWaits: a glue job cannot be
// looked up by the identity Interlock gave it, so a restarted engine says
// at once that the call was interrupted and until when the run waits,
// says it once across restarts, explain says the same, and at the lease's
// end the run ends as outcome unknown, the job not started again.
func TestInterruptedCallOfATypeThatCannotBeAskedWaits(t *testing.T) {
	jobs := &countingJobs{}
	s := newStack(t, jobs, orders) // glue
	s.crashDuringTrigger(t, func(die func()) { jobs.onStart = func(context.Context) { die() } })
	jobs.onStart = nil
	lease := t0.Add(time.Minute + run.TriggerLease) // glue's call timeout, then the lease
	s.clk.Advance(2 * time.Minute)
	s.restart(t)

	found := s.events(t, event.TriggerOutcomeUnknown)
	if len(found) != 1 || !found[0].Time.Equal(s.clk.Now()) || found[0].Level() != event.LevelWarning {
		t.Fatalf("TRIGGER_OUTCOME_UNKNOWN at restart: %+v", found)
	}
	for _, want := range []string{"glue jobs cannot be looked up by the identity Interlock gave them", "outcome unknown at " + lease.Format(time.RFC3339)} {
		if !strings.Contains(found[0].Message, want) {
			t.Errorf("message %q lacks %q", found[0].Message, want)
		}
	}
	for _, want := range []string{"the process stopped during the trigger call", "glue jobs cannot be looked up by the identity Interlock gave them", "the run ends as outcome unknown at " + lease.Format(time.RFC3339) + " unless"} {
		if call := s.explainCall(t); !strings.Contains(call, want) {
			t.Errorf("explain %q lacks %q", call, want)
		}
	}
	s.restart(t)
	if n := len(s.events(t, event.TriggerOutcomeUnknown)); n != 1 {
		t.Fatalf("a second restart repeated it: %d", n)
	}
	s.due(t) // nothing is due before the lease ends
	if r := s.run(t); r.State != run.Triggering || !r.TriggerInFlight {
		t.Fatalf("the run did not wait for its lease: %s", r.State)
	}
	s.next(t)
	r := s.run(t)
	if !s.clk.Now().Equal(lease) || r.State != run.FailedFinal || r.Outcome != run.OutcomeTriggerUnknown {
		t.Fatalf("at %v: run %s/%s, want FAILED_FINAL trigger-unknown at %v", s.clk.Now(), r.State, r.Outcome, lease)
	}
	if n := jobs.starts.Load(); n != 1 {
		t.Fatalf("job started %d times", n)
	}
	infra := s.events(t, event.InfraFailure)
	if len(infra) != 1 || !strings.Contains(infra[0].Message, "glue jobs cannot be looked up") || !strings.Contains(infra[0].Message, "request a rerun") {
		t.Fatalf("INFRA_FAILURE: %+v", infra)
	}
	if call := s.explainCall(t); call != "" {
		t.Fatalf("explain of an ended run still talks of its call: %q", call)
	}
	if _, err := s.st.MarkerGet(t.Context(), ordersKey, run.MarkerTriggerOutcome); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the recovery marker outlived the recovery: %v", err)
	}
}

// TestInterruptedCallAdoptedOrRetried: a findable job is looked up at
// once after the restart — adopted when the call had started it, started
// again (same identity) when it had not — and the run completes.
func TestInterruptedCallAdoptedOrRetried(t *testing.T) {
	for _, reach := range []bool{true, false} {
		t.Run(fmt.Sprintf("reached=%v", reach), func(t *testing.T) {
			jobs := newIdentityJobs()
			s := newStack(t, jobs, airflowOrders)
			s.crashDuringTrigger(t, func(die func()) { jobs.crash, jobs.reach = die, reach })
			s.clk.Advance(time.Minute)
			s.restart(t)
			if n := len(s.events(t, event.TriggerOutcomeUnknown)); n != 1 {
				t.Fatalf("%d TRIGGER_OUTCOME_UNKNOWN at restart", n)
			}
			if _, _, finds := jobs.count(); finds != 0 {
				t.Fatalf("Open looked up itself (%d): lookups belong to the trigger step", finds)
			}
			if call := s.explainCall(t); !strings.Contains(call, "being looked up") || !strings.Contains(call, "next lookup at "+s.clk.Now().Format(time.RFC3339)) {
				t.Fatalf("explain: %q", call)
			}
			s.due(t) // the lookup, at once
			r := s.run(t)
			if r.State != run.Running || r.JobRunID != "job-1" || r.TriggerInFlight {
				t.Fatalf("after the lookup: %+v", r)
			}
			trig := s.events(t, event.JobTriggered)
			adopted, _ := trig[0].Detail.Get("adopted")
			if len(trig) != 1 || (adopted.String() == "true") != reach {
				t.Fatalf("JOB_TRIGGERED %+v", trig)
			}
			if _, err := s.st.MarkerGet(t.Context(), ordersKey, run.MarkerTriggerOutcome); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the recovery marker outlived the recovery: %v", err)
			}
			s.next(t) // poll: success
			if r := s.run(t); r.State != run.Completed {
				t.Fatalf("run %s", r.State)
			}
			if n, starts, _ := jobs.count(); n != 1 || starts != map[bool]int{true: 1, false: 2}[reach] {
				t.Fatalf("jobs %d, starts %d", n, starts)
			}
			if n := len(s.events(t, event.InfraFailure)) + len(s.events(t, event.RerunAccepted)); n != 0 {
				t.Fatalf("%d failures or reruns", n)
			}
		})
	}
}

// TestLookupsThatFailEndAsOutcomeUnknown: while the job system cannot be
// asked, lookups repeat with backoff — across a restart, which neither
// repeats the announcement nor resets the count — until the lookup window
// closes; then the run ends as outcome unknown and nothing is started.
func TestLookupsThatFailEndAsOutcomeUnknown(t *testing.T) {
	jobs := newIdentityJobs()
	s := newStack(t, jobs, airflowOrders)
	s.crashDuringTrigger(t, func(die func()) { jobs.crash, jobs.reach = die, true })
	jobs.findErr = errors.New("airflow: status 503")
	s.clk.Advance(2 * time.Minute)
	s.restart(t)
	giveUp := s.clk.Now().Add(run.LookupWindow) // later than the lease (t0+16m)
	s.due(t)
	if _, _, finds := jobs.count(); finds != 1 {
		t.Fatalf("lookups: %d", finds)
	}
	at, _, _ := s.eng.NextDue(t.Context())
	if want := s.clk.Now().Add(run.LookupBackoff(1)); !at.Equal(want) {
		t.Fatalf("next lookup at %v, want %v", at, want)
	}
	if call := s.explainCall(t); !strings.Contains(call, "1 lookup(s) failed, the last: airflow: status 503") || !strings.Contains(call, giveUp.Format(time.RFC3339)) {
		t.Fatalf("explain: %q", call)
	}
	s.next(t)
	s.restart(t)
	s.next(t)
	if call := s.explainCall(t); !strings.Contains(call, "3 lookup(s) failed") {
		t.Fatalf("the restart lost the count: %q", call)
	}
	for i := 0; i < 30 && s.run(t).State == run.Triggering; i++ {
		s.next(t)
	}
	r := s.run(t)
	if r.State != run.FailedFinal || r.Outcome != run.OutcomeTriggerUnknown || !r.EndedAt.Equal(giveUp) {
		t.Fatalf("run %s/%s ended at %v, want trigger-unknown at %v", r.State, r.Outcome, r.EndedAt, giveUp)
	}
	_, starts, finds := jobs.count()
	if starts != 1 || finds < 5 {
		t.Fatalf("starts %d, lookups %d", starts, finds)
	}
	if n := len(s.events(t, event.TriggerOutcomeUnknown)); n != 1 {
		t.Fatalf("%d TRIGGER_OUTCOME_UNKNOWN", n)
	}
	infra := s.events(t, event.InfraFailure)
	if len(infra) != 1 || !strings.Contains(infra[0].Message, fmt.Sprintf("%d lookup(s) failed, the last: airflow: status 503", finds)) {
		t.Fatalf("INFRA_FAILURE %+v", infra)
	}
	if n := len(s.events(t, event.JobTriggered)); n != 0 {
		t.Fatalf("JOB_TRIGGERED for an unknown outcome: %d", n)
	}
}

// TestARetriedCallInterruptedAgainIsAnnouncedAgain: the announcement is
// once per interrupted call, not once per period: a call made again after
// a lookup found nothing, and interrupted too, is said again.
func TestARetriedCallInterruptedAgainIsAnnouncedAgain(t *testing.T) {
	jobs := newIdentityJobs()
	s := newStack(t, jobs, airflowOrders)
	s.crashDuringTrigger(t, func(die func()) { jobs.crash = die })
	s.restart(t)
	ctx, die := context.WithCancel(t.Context())
	jobs.mu.Lock()
	jobs.crash = die
	jobs.mu.Unlock()
	if _, err := s.eng.RunDue(ctx); err == nil { // lookup: not found; retry: dies again
		t.Fatal("the second process survived its crash")
	}
	s.restart(t)
	if n := len(s.events(t, event.TriggerOutcomeUnknown)); n != 2 {
		t.Fatalf("%d TRIGGER_OUTCOME_UNKNOWN, want one per interrupted call", n)
	}
	s.due(t)
	s.next(t)
	if r := s.run(t); r.State != run.Completed {
		t.Fatalf("run %s", r.State)
	}
	if n, _, _ := jobs.count(); n != 1 {
		t.Fatalf("%d jobs", n)
	}
}

// TestLeaseEndInARunningEngineLooksUp: the process that made the call
// stopped while another kept running; at the lease's end the running one
// finds the call unanswered, says so and looks the job up in one step.
func TestLeaseEndInARunningEngineLooksUp(t *testing.T) {
	jobs := newIdentityJobs()
	s := newStack(t, jobs, airflowOrders)
	otherSt, err := sqlite.Open(t.Context(), s.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = otherSt.Close() })
	other := engine.New(engine.Options{Store: otherSt, Clock: s.clk, Jobs: jobs})
	if err := other.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.crashDuringTrigger(t, func(die func()) { jobs.crash, jobs.reach = die, true })
	s.clk.Set(t0.Add(time.Minute + run.TriggerLease))
	if _, err := other.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(s.events(t, event.TriggerOutcomeUnknown)); n != 1 {
		t.Fatalf("%d TRIGGER_OUTCOME_UNKNOWN", n)
	}
	if r := s.run(t); r.State != run.Running || r.JobRunID != "job-1" {
		t.Fatalf("run %+v", r)
	}
}

// TestACallThatAnswersAfterItsJobWasAdopted: on a store shared with a
// process that took this one for stopped, the other adopted the job while
// this call was still in flight; the call's answer, the same job, is then
// already recorded — no INFRA_FAILURE, one JOB_TRIGGERED, one job.
func TestACallThatAnswersAfterItsJobWasAdopted(t *testing.T) {
	jobs := newIdentityJobs()
	s := newStack(t, jobs, airflowOrders)
	release := make(chan struct{})
	jobs.blockNext, jobs.started = release, make(chan struct{})
	if _, err := s.eng.PutSensor(t.Context(), "orders", "orders-landed", obj("n", 1)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.eng.RunDue(t.Context()); done <- err }()
	<-jobs.started // the call is in flight and the job exists

	otherSt, err := sqlite.Open(t.Context(), s.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = otherSt.Close() })
	other := engine.New(engine.Options{Store: otherSt, Clock: s.clk, Jobs: jobs})
	if err := other.Open(t.Context()); err != nil { // takes the call for interrupted
		t.Fatal(err)
	}
	if _, err := other.RunDue(t.Context()); err != nil { // and adopts its job
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the first process: %v", err)
	}
	if n := len(s.events(t, event.InfraFailure)); n != 0 {
		t.Fatalf("%d INFRA_FAILURE: %+v", n, s.events(t, event.InfraFailure))
	}
	if n := len(s.events(t, event.JobTriggered)); n != 1 {
		t.Fatalf("%d JOB_TRIGGERED", n)
	}
	if r := s.run(t); r.State != run.Running || r.JobRunID != "job-1" {
		t.Fatalf("run %+v", r)
	}
}

// TestAPassiveEngineLeavesCallsInFlightAlone: `interlock watchdog --once`
// opens a passive engine beside a serve that may be making the call right
// now; it neither announces the call as interrupted nor arms a lookup.
// The next non-passive start does.
func TestAPassiveEngineLeavesCallsInFlightAlone(t *testing.T) {
	jobs := newIdentityJobs()
	s := newStack(t, jobs, airflowOrders)
	s.crashDuringTrigger(t, func(die func()) { jobs.crash, jobs.reach = die, true })
	s.clk.Advance(time.Minute)
	passive := engine.New(engine.Options{Store: s.st, Clock: s.clk, Jobs: s.jobs, Passive: true})
	if err := passive.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(s.events(t, event.TriggerOutcomeUnknown)); n != 0 {
		t.Fatalf("a passive engine announced %d interrupted calls", n)
	}
	if r := s.run(t); !r.TriggerInFlight {
		t.Fatalf("a passive engine touched the call in flight: %+v", r)
	}
	s.restart(t)
	if n := len(s.events(t, event.TriggerOutcomeUnknown)); n != 1 {
		t.Fatalf("%d TRIGGER_OUTCOME_UNKNOWN after a real restart, want 1", n)
	}
}
