package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

// The step entry points on the real SQLite store: each one taken twice,
// stale, concurrently, or after the run moved on acts once and otherwise
// returns the run's current next step.

// waiting is a pipeline whose run waits for a second sensor: its
// evaluations are timers, one a minute.
const waiting = `
pipeline: {id: waits}
schedule:
  trigger: {key: go, check: exists}
  evaluation: {window: 1h, interval: 1m}
validation:
  rules: [{key: ready, check: exists}]
job: {type: glue, config: {jobName: w}, pollInterval: 1m}
`

var waitsKey = run.Key{PipelineID: "waits", ScheduleID: "stream", Period: "2026-03-10"}

func (f *fixture) run(t *testing.T, k run.Key) run.Run {
	t.Helper()
	r, err := f.st.RunGet(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) step(t *testing.T, k run.Key) engine.StepResult {
	t.Helper()
	res, err := f.eng.Current(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// triggerDue starts the orders run: its rules pass at once, so its
// trigger step is due now.
func (f *fixture) triggerDue(t *testing.T) engine.StepRef {
	t.Helper()
	if _, err := f.eng.PutSensor(t.Context(), "orders", "orders-landed", obj("n", 1)); err != nil {
		t.Fatal(err)
	}
	cur := f.step(t, ordersKey)
	if cur.Next != run.StepTrigger || !cur.NextAt.Equal(f.clk.Now()) {
		t.Fatalf("after the sensor: %+v", cur)
	}
	return engine.StepRef{Run: ordersKey, Due: cur.NextAt}
}

// begin takes the orders run's trigger step up to its call.
func (f *fixture) begin(t *testing.T) engine.Call {
	t.Helper()
	_, call, err := f.eng.TriggerBegin(t.Context(), f.triggerDue(t))
	if err != nil || call == nil {
		t.Fatalf("TriggerBegin: %v %v", call, err)
	}
	return *call
}

// called begins the orders run's trigger call and makes it.
func (f *fixture) called(t *testing.T) (engine.Call, engine.CallResult) {
	t.Helper()
	call := f.begin(t)
	res, err := f.eng.TriggerCall(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	return call, res
}

// triggered takes the orders run's trigger step whole: its next step is
// the first poll.
func (f *fixture) triggered(t *testing.T) engine.StepResult {
	t.Helper()
	call, res := f.called(t)
	next, err := f.eng.TriggerRecord(t.Context(), call, res)
	if err != nil || next.Next != run.StepPoll {
		t.Fatalf("TriggerRecord: %+v %v", next, err)
	}
	return next
}

func sameStep(a, b engine.StepResult) bool {
	return a.Run == b.Run && a.Next == b.Next && a.NextAt.Equal(b.NextAt)
}

func TestEvaluateActsOncePerDueStep(t *testing.T) {
	f := newFixture(t)
	if _, err := f.eng.ApplyConfig(t.Context(), "waits.yaml", []byte(waiting)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.PutSensor(t.Context(), "waits", "go", obj("n", 1)); err != nil {
		t.Fatal(err)
	}
	first := f.step(t, waitsKey)
	if first.Next != run.StepEvaluate || !first.NextAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after the sensor: %+v", first)
	}
	ref := engine.StepRef{Run: waitsKey, Due: first.NextAt}

	early, err := f.eng.Evaluate(t.Context(), ref)
	if err != nil || early.Acted || !sameStep(early, first) {
		t.Fatalf("Evaluate before the step is due: %+v %v", early, err)
	}
	f.clk.Set(first.NextAt)
	v := f.run(t, waitsKey).Version
	got, err := f.eng.Evaluate(t.Context(), ref)
	if err != nil || !got.Acted || got.Next != run.StepEvaluate || !got.NextAt.Equal(first.NextAt.Add(time.Minute)) {
		t.Fatalf("Evaluate: %+v %v", got, err)
	}
	if r := f.run(t, waitsKey); r.Version != v+1 || !r.UpdatedAt.Equal(first.NextAt) {
		t.Fatalf("run after Evaluate: version %d (was %d), updated %s", r.Version, v, r.UpdatedAt)
	}
	for name, ref := range map[string]engine.StepRef{
		"the same step again":                       ref,
		"no due time (the next one is not due yet)": {Run: waitsKey},
	} {
		again, err := f.eng.Evaluate(t.Context(), ref)
		if err != nil || again.Acted || !sameStep(again, got) {
			t.Fatalf("%s: %+v %v, want %+v", name, again, err, got)
		}
	}
	if r := f.run(t, waitsKey); r.Version != v+1 {
		t.Fatalf("a repeated Evaluate wrote the run: version %d", r.Version)
	}

	// Racing callers of one due step: one evaluation.
	f.clk.Set(got.NextAt)
	ref = engine.StepRef{Run: waitsKey, Due: got.NextAt}
	var wg sync.WaitGroup
	acted := make(chan bool, 8)
	for range 8 {
		wg.Go(func() {
			res, err := f.eng.Evaluate(t.Context(), ref)
			if err != nil {
				t.Error(err)
			}
			acted <- res.Acted
		})
	}
	wg.Wait()
	close(acted)
	n := 0
	for a := range acted {
		if a {
			n++
		}
	}
	if n != 1 || f.run(t, waitsKey).Version != v+2 {
		t.Fatalf("%d of 8 racing Evaluates acted; run version %d, want %d", n, f.run(t, waitsKey).Version, v+2)
	}
}

// TestAStaleStepTimerDoesNotDropTheNextStep: a copy of the run's
// evaluate timer, listed by a process before another one took the step,
// whose next step (trigger) is due at the very same instant, must not be
// taken for the trigger step's timer and drop it.
func TestAStaleStepTimerDoesNotDropTheNextStep(t *testing.T) {
	f := newFixture(t)
	if _, err := f.eng.ApplyConfig(t.Context(), "waits.yaml", []byte(waiting)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.PutSensor(t.Context(), "waits", "go", obj("n", 1)); err != nil {
		t.Fatal(err)
	}
	listed, err := f.eng.DueTimers(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Minute)
	if listed, err = f.eng.DueTimers(t.Context(), 10); err != nil || len(listed) != 1 || listed[0].Kind != string(run.StepEvaluate) {
		t.Fatalf("due timers: %+v %v", listed, err)
	}
	stale := listed[0]
	// Meanwhile the rules pass (a sensor write evaluates at once): the
	// trigger step is due now, at the evaluate timer's due time.
	if _, err := f.eng.PutSensor(t.Context(), "waits", "ready", obj("n", 1)); err != nil {
		t.Fatal(err)
	}
	if cur := f.step(t, waitsKey); cur.Next != run.StepTrigger || !cur.NextAt.Equal(stale.DueAt) {
		t.Fatalf("after the rules passed: %+v", cur)
	}
	if _, err := f.eng.ProcessTimerUntilCall(t.Context(), stale); err != nil {
		t.Fatal(err)
	}
	if cur := f.step(t, waitsKey); cur.Next != run.StepTrigger {
		t.Fatalf("the stale evaluate timer dropped the trigger step: %+v", cur)
	}
}

func TestTriggerBeginOnce(t *testing.T) {
	f := newFixture(t)
	ref := f.triggerDue(t)
	var wg sync.WaitGroup
	calls := make(chan *engine.Call, 8)
	for range 8 {
		wg.Go(func() {
			_, call, err := f.eng.TriggerBegin(t.Context(), ref)
			if err != nil {
				t.Error(err)
			}
			calls <- call
		})
	}
	wg.Wait()
	close(calls)
	var begun []engine.Call
	for c := range calls {
		if c != nil {
			begun = append(begun, *c)
		}
	}
	if len(begun) != 1 {
		t.Fatalf("%d of 8 racing TriggerBegins began a call", len(begun))
	}
	r := f.run(t, ordersKey)
	if !r.TriggerInFlight || begun[0].ID != r.Call() || begun[0].ID.Attempt != 1 {
		t.Fatalf("run %+v, call %+v", r, begun[0])
	}
	// The step is now the call's lease: a repeated begin returns it.
	cur := f.step(t, ordersKey)
	lease := t0.Add(run.CallTimeout(f.config(t, "orders")) + run.TriggerLease)
	if cur.Next != run.StepTrigger || !cur.NextAt.Equal(lease) {
		t.Fatalf("step after the begin: %+v, want trigger at %s", cur, lease)
	}
	res, call, err := f.eng.TriggerBegin(t.Context(), ref)
	if err != nil || call != nil || res.Acted || !sameStep(res, cur) {
		t.Fatalf("repeated TriggerBegin: %+v %v %v", res, call, err)
	}
	if f.jobs.starts.Load() != 0 {
		t.Fatal("TriggerBegin called the job system")
	}
}

// config is a running pipeline's config.
func (f *fixture) config(t *testing.T, id string) *pipeline.Pipeline {
	t.Helper()
	p, _, err := f.eng.Pipeline(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (f *fixture) count(t *testing.T, typ event.Type) int { t.Helper(); return len(f.events(t, typ)) }

func TestTriggerCallAndRecordOnce(t *testing.T) {
	f := newFixture(t)
	call := f.begin(t)
	v := f.run(t, ordersKey).Version
	res, err := f.eng.TriggerCall(t.Context(), call)
	if err != nil || res.Err != "" || res.NotMade != "" || res.Started.JobRunID != "jr-1" {
		t.Fatalf("TriggerCall: %+v %v", res, err)
	}
	if r := f.run(t, ordersKey); !r.TriggerInFlight || r.Version != v {
		t.Fatalf("TriggerCall wrote the run: %+v", r)
	}
	got, err := f.eng.TriggerRecord(t.Context(), call, res)
	if err != nil || !got.Acted || got.Next != run.StepPoll || !got.NextAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("TriggerRecord: %+v %v", got, err)
	}
	r := f.run(t, ordersKey)
	if r.State != run.Running || r.TriggerInFlight || r.JobRunID != "jr-1" || r.Attempt != 1 {
		t.Fatalf("run after the record: %+v", r)
	}
	again, err := f.eng.TriggerRecord(t.Context(), call, res)
	if err != nil || again.Acted || !sameStep(again, got) {
		t.Fatalf("repeated TriggerRecord: %+v %v, want %+v", again, err, got)
	}
	// A repeated call is refused: the run no longer waits for it.
	late, err := f.eng.TriggerCall(t.Context(), call)
	if err != nil || late.NotMade == "" {
		t.Fatalf("TriggerCall after the record: %+v %v", late, err)
	}
	if f.jobs.starts.Load() != 1 || f.count(t, event.JobTriggered) != 1 || f.count(t, event.InfraFailure) != 0 || f.run(t, ordersKey).Version != r.Version {
		t.Fatalf("starts %d, JOB_TRIGGERED %d, INFRA_FAILURE %d", f.jobs.starts.Load(), f.count(t, event.JobTriggered), f.count(t, event.InfraFailure))
	}
}

// TestTriggerRecordOfAnErrorOnce: a failed call recorded twice counts
// one infrastructure error, and the retried call is not taken for it.
func TestTriggerRecordOfAnErrorOnce(t *testing.T) {
	f := newFixture(t)
	call := f.begin(t)
	failed := engine.CallResult{Err: "503 from the job system"}
	got, err := f.eng.TriggerRecord(t.Context(), call, failed)
	if err != nil || !got.Acted || got.Next != run.StepTrigger || !got.NextAt.Equal(t0.Add(run.TriggerBackoff(1))) {
		t.Fatalf("TriggerRecord of an error: %+v %v", got, err)
	}
	check := func(when string) {
		t.Helper()
		again, err := f.eng.TriggerRecord(t.Context(), call, failed)
		if err != nil || again.Acted {
			t.Fatalf("%s: repeated TriggerRecord: %+v %v", when, again, err)
		}
		if r := f.run(t, ordersKey); r.TriggerErrors != 1 {
			t.Fatalf("%s: %d trigger errors, want 1", when, r.TriggerErrors)
		}
	}
	check("before the retry")
	f.clk.Set(got.NextAt)
	_, retry, err := f.eng.TriggerBegin(t.Context(), engine.StepRef{Run: ordersKey, Due: got.NextAt})
	if err != nil || retry == nil || retry.ID == call.ID {
		t.Fatalf("the retried call: %+v %v", retry, err)
	}
	check("while the retried call is in flight")
	if r := f.run(t, ordersKey); !r.Awaits(retry.ID) {
		t.Fatalf("the retried call is not awaited: %+v", r)
	}
	if n := f.count(t, event.InfraFailure); n != 0 {
		t.Fatalf("%d INFRA_FAILURE", n)
	}
}

// syncJobs answers every start with a finished job.
type syncJobs struct {
	countingJobs
	result trigger.Result
}

func (s *syncJobs) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	st, err := s.countingJobs.Start(ctx, req)
	st.Result = &s.result
	return st, err
}

// TestTriggerRecordOfASynchronousVerdictOnce: a synchronous job's verdict
// (success: the run completes; failure: a retry is counted) is recorded
// once however often its answer is.
func TestTriggerRecordOfASynchronousVerdictOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result trigger.Result
		state  run.State
		next   run.Step
		event  event.Type
	}{
		{"success", trigger.Result{Status: trigger.StatusSucceeded}, run.Completed, run.StepNone, event.JobCompleted},
		{"failure, retried", trigger.Result{Status: trigger.StatusFailed, Category: run.Transient, Message: "boom"}, run.Triggering, run.StepTrigger, event.JobFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			jobs := &syncJobs{result: tc.result}
			f.jobs = &jobs.countingJobs
			f.eng = engine.New(engine.Options{Store: f.st, Clock: f.clk, Jobs: jobs})
			retried := strings.Replace(orders, "pollInterval: 1m", "pollInterval: 1m, maxRetries: 1", 1)
			if _, err := f.eng.ApplyConfig(t.Context(), "orders.yaml", []byte(retried)); err != nil {
				t.Fatal(err)
			}
			call, res := f.called(t)
			for i := range 2 {
				got, err := f.eng.TriggerRecord(t.Context(), call, res)
				if err != nil || got.Acted != (i == 0) || got.Next != tc.next {
					t.Fatalf("record %d: %+v %v", i+1, got, err)
				}
			}
			if r := f.run(t, ordersKey); r.State != tc.state || r.Attempt != 1 {
				t.Fatalf("run %s attempt %d, want %s attempt 1", r.State, r.Attempt, tc.state)
			}
			if n := f.count(t, tc.event); n != 1 {
				t.Fatalf("%d %s", n, tc.event)
			}
			ledger, err := f.st.LedgerList(t.Context(), ordersKey)
			if want := map[bool]int{true: 1, false: 0}[tc.state == run.Triggering]; err != nil || len(ledger) != want {
				t.Fatalf("ledger %+v %v, want %d entries", ledger, err, want)
			}
		})
	}
}

// TestATriggerAnswerAfterTheWatchdogTimedTheRunOut: the watchdog ended
// the run while its call was in flight; the call's answer is reported
// once (INFRA_FAILURE), however often it is recorded, and a call not yet
// made is not made.
func TestATriggerAnswerAfterTheWatchdogTimedTheRunOut(t *testing.T) {
	f := newFixture(t)
	call, res := f.called(t)
	f.clk.Advance(2 * time.Hour) // past the run's time-to-live
	if _, err := f.eng.WatchdogPass(t.Context(), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if r := f.run(t, ordersKey); r.Outcome != run.OutcomeTimedOut {
		t.Fatalf("run after the watchdog: %s %s", r.State, r.Outcome)
	}
	if again, err := f.eng.TriggerCall(t.Context(), call); err != nil || again.NotMade == "" || f.jobs.starts.Load() != 1 {
		t.Fatalf("a call for a timed-out run: %+v %v, %d starts", again, err, f.jobs.starts.Load())
	}
	for i := range 2 {
		got, err := f.eng.TriggerRecord(t.Context(), call, res)
		if err != nil || got.Acted || got.Next != run.StepNone {
			t.Fatalf("record %d: %+v %v", i+1, got, err)
		}
	}
	late := f.events(t, event.InfraFailure)
	if len(late) != 1 || !strings.Contains(late[0].Message, "returned after the run had ended (FAILED_FINAL): it started job jr-1") {
		t.Fatalf("INFRA_FAILURE %+v", late)
	}
	if r := f.run(t, ordersKey); r.Outcome != run.OutcomeTimedOut || r.JobRunID != "" {
		t.Fatalf("the late answer was recorded: %+v", r)
	}
}

// TestTriggerRecordWithACancelledContextRecordsNothing: a process that
// is stopping mid-call (kill, a simulated crash) records nothing; the
// mark stays for the crash rules.
func TestTriggerRecordWithACancelledContextRecordsNothing(t *testing.T) {
	f := newFixture(t)
	call, res := f.called(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.eng.TriggerRecord(ctx, call, res); !errors.Is(err, context.Canceled) {
		t.Fatalf("TriggerRecord: %v", err)
	}
	if r := f.run(t, ordersKey); !r.TriggerInFlight {
		t.Fatalf("run %+v", r)
	}
}

func TestPollAndPollRecordOnce(t *testing.T) {
	f := newFixture(t)
	next := f.triggered(t)
	ref := engine.StepRef{Run: ordersKey, Due: next.NextAt}
	if got, polled, err := f.eng.Poll(t.Context(), ref); err != nil || polled != nil || got.Acted || !sameStep(got, next) {
		t.Fatalf("Poll before it is due: %+v %+v %v", got, polled, err)
	}
	f.clk.Set(next.NextAt)
	v := f.run(t, ordersKey).Version
	got, polled, err := f.eng.Poll(t.Context(), ref)
	if err != nil || polled == nil || got.Acted || polled.Result.Status != trigger.StatusSucceeded || polled.JobRunID != "jr-1" || !polled.Due.Equal(next.NextAt) {
		t.Fatalf("Poll: %+v %+v %v", got, polled, err)
	}
	if f.run(t, ordersKey).Version != v {
		t.Fatal("Poll wrote the run")
	}
	done, err := f.eng.PollRecord(t.Context(), *polled)
	if err != nil || !done.Acted || done.Next != run.StepNone {
		t.Fatalf("PollRecord: %+v %v", done, err)
	}
	again, err := f.eng.PollRecord(t.Context(), *polled)
	if err != nil || again.Acted || again.Next != run.StepNone {
		t.Fatalf("repeated PollRecord: %+v %v", again, err)
	}
	if r := f.run(t, ordersKey); r.State != run.Completed || f.count(t, event.JobCompleted) != 1 {
		t.Fatalf("run %s, %d JOB_COMPLETED", r.State, f.count(t, event.JobCompleted))
	}
}

// stillRunning reports every polled job as running.
type stillRunning struct{ countingJobs }

func (*stillRunning) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusRunning}, nil
}

// TestAStalePollAnswerIsNotRecorded: a poll answer recorded once moves
// the step; the same answer again, or an answer about another job, is not
// recorded.
func TestAStalePollAnswerIsNotRecorded(t *testing.T) {
	f := newFixture(t)
	jobs := &stillRunning{}
	f.jobs = &jobs.countingJobs
	f.eng = engine.New(engine.Options{Store: f.st, Clock: f.clk, Jobs: jobs})
	next := f.triggered(t)
	f.clk.Set(next.NextAt)
	_, polled, err := f.eng.Poll(t.Context(), engine.StepRef{Run: ordersKey, Due: next.NextAt})
	if err != nil || polled == nil {
		t.Fatal(polled, err)
	}
	other := *polled
	other.JobRunID = "someone-else"
	if got, err := f.eng.PollRecord(t.Context(), other); err != nil || got.Acted || !sameStep(got, next) {
		t.Fatalf("PollRecord of another job: %+v %v", got, err)
	}
	got, err := f.eng.PollRecord(t.Context(), *polled)
	if err != nil || !got.Acted || got.Next != run.StepPoll || !got.NextAt.Equal(next.NextAt.Add(time.Minute)) {
		t.Fatalf("PollRecord: %+v %v", got, err)
	}
	v := f.run(t, ordersKey).Version
	if again, err := f.eng.PollRecord(t.Context(), *polled); err != nil || again.Acted || !sameStep(again, got) || f.run(t, ordersKey).Version != v {
		t.Fatalf("repeated PollRecord: %+v %v", again, err)
	}
}

// roundTrip passes v through JSON, as a state machine passes one Task's
// output to the next.
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStepsSequencedThroughJSON: a run from its trigger to its end, each
// step's input the JSON of the step before's output, as Step Functions
// would pass them.
func TestStepsSequencedThroughJSON(t *testing.T) {
	f := newFixture(t)
	ref := roundTrip(t, f.triggerDue(t))
	_, call, err := f.eng.TriggerBegin(t.Context(), ref)
	if err != nil || call == nil {
		t.Fatal(call, err)
	}
	c := roundTrip(t, *call)
	res, err := f.eng.TriggerCall(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	next, err := f.eng.TriggerRecord(t.Context(), roundTrip(t, c), roundTrip(t, res))
	if err != nil || !next.Acted || next.Next != run.StepPoll {
		t.Fatalf("TriggerRecord: %+v %v", next, err)
	}
	next = roundTrip(t, next)
	f.clk.Set(next.NextAt)
	_, polled, err := f.eng.Poll(t.Context(), engine.StepRef{Run: next.Run, Due: next.NextAt})
	if err != nil || polled == nil {
		t.Fatal(polled, err)
	}
	end, err := f.eng.PollRecord(t.Context(), roundTrip(t, *polled))
	if err != nil || !end.Acted || end.Next != run.StepNone || f.run(t, ordersKey).State != run.Completed {
		t.Fatalf("PollRecord: %+v %v", end, err)
	}
}
