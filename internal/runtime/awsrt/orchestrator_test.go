package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/testenv/sfnlocal"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/command"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
	lambdajob "github.com/interlockhq/interlock/internal/trigger/lambda"
)

// aslTestARN is the orchestrator's ARN the tests render the state machine
// with.
const aslTestARN = "arn:aws:lambda:us-east-1:000000000000:function:interlock-orchestrator"

// aslTestTaskTimeout is the Task states' timeout the tests render: the
// module's default orchestrator timeout (300 s) less 30.
const aslTestTaskTimeout = 270

// renderedASL is deploy/statemachine.asl.json rendered as Terraform
// would, with three trigger attempts.
func renderedASL(t *testing.T) []byte {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(sfnlocal.RepoRoot(t), "deploy", "statemachine.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	def, err := RenderASL(tmpl, ASLVars{OrchestratorARN: aslTestARN, TimeoutSeconds: 14400, TriggerMaxAttempts: 3, TaskTimeoutSeconds: aslTestTaskTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// invokeServer serves Lambda's Invoke route for the state machine's Task
// states: each invocation goes to the orchestrator of the execution's
// pipeline (one store, clock and job system per scenario), through
// lambda.NewHandler(...).Invoke, and an error answers as Lambda's does
// (X-Amz-Function-Error: Unhandled, {"errorType","errorMessage"}).
type invokeServer struct {
	mu    sync.Mutex
	sides map[string]*sfnSide
}

func (s *invokeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/2015-03-31/functions/") || !strings.HasSuffix(r.URL.Path, "/invocations") {
		http.Error(w, "not the Invoke route", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var in StepInput
	_ = json.Unmarshal(body, &in)
	s.mu.Lock()
	side := s.sides[in.Run.PipelineID]
	s.mu.Unlock()
	if side == nil {
		functionError(w, &InputError{Reason: "no scenario for pipeline " + in.Run.PipelineID})
		return
	}
	out, err := side.invoke(r.Context(), in, body)
	if err != nil {
		functionError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func functionError(w http.ResponseWriter, err error) {
	w.Header().Set("X-Amz-Function-Error", "Unhandled")
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"errorType": errorTypeOf(err), "errorMessage": err.Error()})
}

// fault is what the Invoke endpoint does to one trigger invocation.
type fault int

const (
	faultNone   fault = iota
	faultBefore       // the invocation fails before the handler runs (the store throttled)
	faultAfter        // the handler runs and commits, and its answer is lost
)

// sfnSide is one scenario's deployment behind the state machine.
type sfnSide struct {
	mu   sync.Mutex
	clk  *clock.Virtual
	st   store.Store
	jobs *scriptedJobs
	// fn is the orchestrator's handler; each invocation gets a Lambda
	// handler of its own (lambda.NewHandler's reuses one answer buffer,
	// as one instance runs one invocation at a time — concurrent
	// executions here are concurrent instances there).
	fn       any
	faults   []fault // by trigger invocation
	triggers int
	steps    []string // the run's step timer after each step
	// invocations counts the Task invocations (maxInvocations).
	invocations int
}

// maxInvocations bounds one scenario's invocations: a state machine that
// loops Wait → Task without the run moving (a Task arriving before its
// step is due, again and again) fails instead of running forever.
const maxInvocations = 200

// invoke runs one Task's invocation. The Wait before it ended at its due
// time as Step Functions counts it — the timestamp's fractional seconds
// truncated: the scenario's clock moves there first (the engine's clock
// is the one the state machine's Waits stand for).
func (s *sfnSide) invoke(ctx context.Context, in StepInput, body []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.invocations++
	if s.invocations > maxInvocations {
		return nil, &InputError{Reason: fmt.Sprintf("%d invocations: the state machine loops without the run moving", s.invocations)}
	}
	if arrive := in.Due.Truncate(time.Second); arrive.After(s.clk.Now()) {
		s.clk.Set(arrive)
	}
	f := faultNone
	if in.Mode == ModeTrigger {
		if s.triggers < len(s.faults) {
			f = s.faults[s.triggers]
		}
		s.triggers++
	}
	if f == faultBefore {
		return nil, &StepError{Mode: in.Mode, Err: errors.New("injected: throttled before the step")}
	}
	out, err := lambda.NewHandler(s.fn).Invoke(ctx, body)
	if err != nil {
		return nil, err
	}
	var so StepOutput
	if err := json.Unmarshal(out, &so); err != nil {
		return nil, err
	}
	if in.Mode != ModeContinue { // not a step: its answer ends this execution, not the run
		s.steps = appendStep(s.steps, so.Next, so.NextAt)
	}
	if f == faultAfter {
		return nil, &StepError{Mode: in.Mode, Err: errors.New("injected: the answer was lost")}
	}
	return out, nil
}

// appendStep appends a step (kind@instant) unless it is the last one.
func appendStep(steps []string, next, at string) []string {
	s := next + "@" + at
	if next == "" {
		s = "done"
	}
	if len(steps) > 0 && steps[len(steps)-1] == s {
		return steps
	}
	return append(steps, s)
}

// scriptedJobs is a job system answering from a script: the first
// startErrors calls fail (infrastructure errors), then jobs start; polls
// answer polls in order, the last one repeated.
type scriptedJobs struct {
	mu          sync.Mutex
	startErrors int
	polls       []trigger.Result
	starts      int
	polled      int
	// hang: a start call answers only when its context ends (a job
	// system that does not answer in time).
	hang bool
	// during runs inside the first start call, before it answers.
	during func()
}

func (j *scriptedJobs) Start(ctx context.Context, _ trigger.Request) (trigger.Started, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.starts++
	if f := j.during; f != nil {
		j.during = nil
		f()
	}
	if j.hang {
		<-ctx.Done()
		return trigger.Started{}, ctx.Err()
	}
	if j.starts <= j.startErrors {
		return trigger.Started{}, fmt.Errorf("ThrottlingException: rate exceeded (%d)", j.starts)
	}
	return trigger.Started{JobRunID: fmt.Sprintf("jr-%d", j.starts)}, nil
}

func (j *scriptedJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.polls[min(j.polled, len(j.polls)-1)]
	j.polled++
	return r, nil
}

// agreementScenario is a pipeline and the scripted outcomes of its job.
type agreementScenario struct {
	name        string
	age         string // validation: the landed sensor older than this (t0: just landed)
	window      string // evaluation window
	pollWindow  string
	maxRetries  int
	startErrors int
	polls       []trigger.Result
	faults      []fault // state machine side only: what the Invoke endpoint does to trigger invocations
	// offset moves the scenario's start (t0) by a fraction of a second:
	// its steps are then due at instants with fractional seconds.
	offset time.Duration
}

func (sc agreementScenario) pipeline() string {
	return fmt.Sprintf(`
pipeline: {id: %s, owner: data-eng}
schedule:
  trigger: {key: landed, check: equals, field: status, value: ready}
  evaluation: {window: %s, interval: 5m}
validation:
  rules: [{key: landed, check: age_gt, field: at, value: %s}]
job: {type: glue, config: {jobName: etl}, pollInterval: 2m, pollWindow: %s, maxRetries: %d, triggerRetries: 3}
`, sc.name, sc.window, sc.age, sc.pollWindow, sc.maxRetries)
}

var (
	running   = trigger.Result{Status: trigger.StatusRunning}
	succeeded = trigger.Result{Status: trigger.StatusSucceeded}
	failed    = trigger.Result{Status: trigger.StatusFailed, Category: run.Transient, Message: "executor lost"}
	timedOut  = trigger.Result{Status: trigger.StatusFailed, Category: run.Timeout, Message: "job timed out"}
)

var agreementScenarios = []agreementScenario{
	{name: "not-ready-then-ready", age: "12m", polls: []trigger.Result{succeeded}},
	{name: "validation-exhausted", age: "3h"},
	{name: "trigger-errors", age: "1s", startErrors: 2, polls: []trigger.Result{succeeded}},
	{name: "running-then-success", age: "1s", polls: []trigger.Result{running, running, running, succeeded}},
	{name: "failure-retry-success", age: "1s", maxRetries: 1, polls: []trigger.Result{running, failed, running, succeeded}},
	{name: "timeout", age: "1s", polls: []trigger.Result{running, timedOut}},
	{name: "poll-window-exhausted", age: "1s", pollWindow: "7m", polls: []trigger.Result{running}},
	{name: "lambda-retried", age: "1s", polls: []trigger.Result{succeeded}, faults: []fault{faultBefore, faultAfter}},
}

// start opens a store on a clock at t0 with the scenario's pipeline and
// its landed sensor, which starts the period's run.
func (sc agreementScenario) start(t *testing.T, passive bool) (*engine.Engine, store.Store, *clock.Virtual, *scriptedJobs, run.Key) {
	t.Helper()
	if sc.window == "" {
		sc.window = "1h"
	}
	if sc.pollWindow == "" {
		sc.pollWindow = "1h"
	}
	st := sqliteStore(t)
	start := t0.Add(sc.offset)
	clk := clock.NewVirtual(start)
	jobs := &scriptedJobs{startErrors: sc.startErrors, polls: sc.polls}
	if len(jobs.polls) == 0 {
		jobs.polls = []trigger.Result{running}
	}
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: jobs, Passive: passive})
	ctx := t.Context()
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.ApplyConfig(ctx, sc.name+".yaml", []byte(sc.pipeline())); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutSensor(ctx, sc.name, "landed", run.Detail("status", "ready", "at", start.Format(time.RFC3339Nano), "date", "2099-03-07")); err != nil {
		t.Fatal(err)
	}
	return eng, st, clk, jobs, run.Key{PipelineID: sc.name, ScheduleID: "stream", Period: "2099-03-07"}
}

// runLocal drives the local sequencer: every timer in due order through
// engine.ProcessTimer, the clock moved to each, and returns the run's step
// timer after each.
func (sc agreementScenario) runLocal(t *testing.T) (steps []string, st store.Store, jobs *scriptedJobs) {
	t.Helper()
	eng, st, clk, jobs, key := sc.start(t, false)
	ctx := t.Context()
	record := func() {
		cur, err := eng.Current(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		out := OutputOf(cur)
		steps = appendStep(steps, out.Next, out.NextAt)
	}
	record()
	for range 1000 {
		tm, err := st.TimerNext(ctx)
		if errors.Is(err, store.ErrNotFound) {
			return steps, st, jobs
		}
		if err != nil {
			t.Fatal(err)
		}
		if tm.DueAt.After(clk.Now()) {
			clk.Set(tm.DueAt)
		}
		if err := eng.ProcessTimer(ctx, tm); err != nil {
			t.Fatal(err)
		}
		record()
	}
	t.Fatalf("%s: the local sequencer did not settle in 1,000 timers", sc.name)
	return nil, nil, nil
}

// TestStateMachineAgreesWithLocalRuntime is the acceptance test of the
// state machine: deploy/statemachine.asl.json, rendered as Terraform
// renders it and linted by asl-validator, runs under
// aws-local-stepfunctions with its Tasks calling the real orchestrator
// handler over Lambda's Invoke route; for each scripted job outcome it
// takes the run through the same steps, at the same instants, and leaves
// the same runs and events as the local sequencer (engine.ProcessTimer in
// due order), and starts as many jobs — invocations the state machine
// retried (failed before the step, or after it with the answer lost)
// included.
func TestStateMachineAgreesWithLocalRuntime(t *testing.T) {
	sfnlocal.Driver(t)
	srv := &invokeServer{sides: map[string]*sfnSide{}}
	hs := httptest.NewServer(srv)
	defer hs.Close()

	var execs []sfnlocal.Execution
	for _, sc := range agreementScenarios {
		eng, st, clk, jobs, key := sc.start(t, true)
		cur, err := eng.Current(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Next == run.StepNone {
			t.Fatalf("%s: the sensor started no run step", sc.name)
		}
		o := &Orchestrator{Engine: eng}
		in := OutputOf(cur)
		srv.sides[sc.name] = &sfnSide{clk: clk, st: st, jobs: jobs, fn: o.Handle, faults: sc.faults,
			steps: appendStep(nil, in.Next, in.NextAt)}
		execs = append(execs, sfnlocal.Execution{Name: sc.name, Input: in})
	}
	res := sfnlocal.Run(t, hs.URL, renderedASL(t), execs)
	if !res.Validation.IsValid {
		t.Fatalf("asl-validator: the rendered state machine is not valid: %s", res.Validation.Errors)
	}
	if len(res.Executions) != len(agreementScenarios) {
		t.Fatalf("%d executions ran, want %d", len(res.Executions), len(agreementScenarios))
	}
	for i, sc := range agreementScenarios {
		ex := res.Executions[i]
		side := srv.sides[sc.name]
		t.Run(sc.name, func(t *testing.T) {
			if ex.Status != "SUCCEEDED" {
				t.Fatalf("execution %s: %s %s: %s (states %v)", ex.Name, ex.Status, ex.Error, ex.Cause, ex.States)
			}
			if last := ex.States[len(ex.States)-1]; last != "Done" {
				t.Errorf("execution ended in %s, want Done", last)
			}
			wantSteps, local, localJobs := sc.runLocal(t)
			if !slices.Equal(side.steps, wantSteps) {
				t.Errorf("steps on Step Functions:\n  %s\nlocal:\n  %s", strings.Join(side.steps, "\n  "), strings.Join(wantSteps, "\n  "))
			}
			gotRuns, gotEvents := decided(t, side.st, sc.name)
			wantRuns, wantEvents := decided(t, local, sc.name)
			if !slices.Equal(gotRuns, wantRuns) {
				t.Errorf("runs on Step Functions:\n  %s\nlocal:\n  %s", strings.Join(gotRuns, "\n  "), strings.Join(wantRuns, "\n  "))
			}
			if !slices.Equal(gotEvents, wantEvents) {
				t.Errorf("events on Step Functions:\n  %s\nlocal:\n  %s", strings.Join(gotEvents, "\n  "), strings.Join(wantEvents, "\n  "))
			}
			if len(sc.faults) > 0 && side.triggers != len(sc.faults)+1 {
				t.Errorf("%d trigger invocations, want %d: each injected failure retried by the state machine", side.triggers, len(sc.faults)+1)
			}
			if side.jobs.starts != localJobs.starts {
				t.Errorf("%d job starts on Step Functions, %d local", side.jobs.starts, localJobs.starts)
			}
			t.Logf("%d steps, states %v, events:\n  %s", len(wantSteps), ex.States, strings.Join(wantEvents, "\n  "))
		})
	}
}

// TestWaitsTruncatedToTheSecond: a run whose steps are due at instants
// with fractional seconds (its sensor landed at 06:00:00.3) runs to the
// end on the state machine whose Waits end at the truncated second, as
// Step Functions' do — each Task arrives when its step is due, because
// nextAt is announced rounded up to the second, and is taken there (the
// announced instant stands for the due time). With nextAt as the exact
// due time, every Task arrives up to a second early, is not due, and the
// machine loops Wait → Task → Choice on the same instant.
func TestWaitsTruncatedToTheSecond(t *testing.T) {
	sfnlocal.Driver(t)
	srv := &invokeServer{sides: map[string]*sfnSide{}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	sc := agreementScenario{name: "fractional", age: "12m", offset: 300 * time.Millisecond, polls: []trigger.Result{running, succeeded}}
	eng, st, clk, jobs, key := sc.start(t, true)
	cur, err := eng.Current(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if cur.NextAt.Nanosecond() == 0 {
		t.Fatalf("the first step is due at %s: the scenario needs fractional seconds", cur.NextAt)
	}
	in := OutputOf(cur)
	side := &sfnSide{clk: clk, st: st, jobs: jobs, fn: (&Orchestrator{Engine: eng}).Handle}
	srv.sides[sc.name] = side
	res := sfnlocal.Run(t, hs.URL, renderedASL(t), []sfnlocal.Execution{{Name: sc.name, Input: in}})
	if len(res.Executions) != 1 {
		t.Fatalf("%d executions ran", len(res.Executions))
	}
	ex := res.Executions[0]
	if ex.Status != "SUCCEEDED" || ex.States[len(ex.States)-1] != "Done" {
		t.Fatalf("execution: %s %s: %s after %d invocations (last states %v)", ex.Status, ex.Error, ex.Cause, side.invocations, ex.States[max(0, len(ex.States)-8):])
	}
	// evaluate (not ready) twice, evaluate (ready), trigger, poll
	// (running), poll (succeeded): one invocation each.
	if side.invocations != 6 {
		t.Errorf("%d invocations, want 6 (one per step: no Task arrived before its step); steps %v", side.invocations, side.steps)
	}
	if jobs.starts != 1 {
		t.Errorf("%d job starts, want 1", jobs.starts)
	}
	r, err := st.RunGet(t.Context(), key)
	if err != nil || r.State != run.Completed {
		t.Fatalf("the run: %+v %v, want it completed", r, err)
	}
}

// TestJobCallBoundedByTheInvocation: a job call that does not answer is
// cut RecordMargin before the invocation's deadline, and the invocation
// answers in time — the run's trigger step at the end of the call's
// lease, the call left in flight for the crash rules (its outcome is
// unknown: it is neither recorded as a failure, which would be retried
// and could start the job twice, nor lost with an invocation killed by
// Lambda's timeout).
func TestJobCallBoundedByTheInvocation(t *testing.T) {
	sc := agreementScenario{name: "hanging", age: "1s"}
	eng, st, clk, jobs, key := sc.start(t, true)
	o := &Orchestrator{Engine: eng}
	cur := toTriggerStep(t, o, clk, key)
	jobs.hang = true
	ctx, cancel := context.WithTimeout(t.Context(), RecordMargin+200*time.Millisecond)
	defer cancel()
	body, _ := json.Marshal(StepInput{Mode: ModeTrigger, StepRef: engine.StepRef{Run: key, Due: cur.NextAt}})
	out, err := o.Handle(ctx, body)
	if err != nil {
		t.Fatalf("the invocation failed: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the invocation answered after its deadline")
	}
	if out.Next != string(run.StepTrigger) || out.Done {
		t.Fatalf("answer %+v, want the trigger step (the end of the call's lease)", out)
	}
	r, err := st.RunGet(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if !r.CallInFlight() || jobs.starts != 1 {
		t.Fatalf("run %s in flight %v after %d starts: want the call left in flight, made once", r.State, r.TriggerInFlight, jobs.starts)
	}
}

// TestExecutionContinuesAsNew: an execution that would pass its limits
// before its next step starts its successor from its ContinueAsNew state
// and ends Done; the successor takes the run's steps from there. The
// interpreter's executions start by the wall clock while the run's steps
// fall in 2099, so every execution is past its time limit after one step:
// the run goes through a chain of executions, one step each, and takes
// the same steps, at the same instants, with as many job starts, as the
// local sequencer.
func TestExecutionContinuesAsNew(t *testing.T) {
	sfnlocal.Driver(t)
	srv := &invokeServer{sides: map[string]*sfnSide{}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	sc := agreementScenario{name: "continued", age: "1s", polls: []trigger.Result{running, running, succeeded}}
	eng, st, clk, jobs, key := sc.start(t, true)
	cur, err := eng.Current(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	fake := awsfake.NewStepFunctions(t)
	arn := fake.AddStateMachine("interlock-runs")
	o := &Orchestrator{Engine: eng, Executions: &ExecutionStarter{Client: sfn.NewFromConfig(awsfake.Config(fake.URL)), StateMachineARN: arn, Store: st}}
	in := OutputOf(cur)
	side := &sfnSide{clk: clk, st: st, jobs: jobs, fn: o.Handle, steps: appendStep(nil, in.Next, in.NextAt)}
	srv.sides[sc.name] = side

	ended := make(chan sfnlocal.Result, 100)
	m := sfnlocal.Serve(t, hs.URL, renderedASL(t), func(r sfnlocal.Result) { ended <- r })
	fake.OnStart(func(ex awsfake.Execution) {
		if err := m.Start(sfnlocal.Execution{Name: ex.Name, Input: json.RawMessage(ex.Input)}); err != nil {
			t.Error(err)
		}
	})
	if err := m.Start(sfnlocal.Execution{Name: "first", Input: in}); err != nil {
		t.Fatal(err)
	}
	var results []sfnlocal.Result
	deadline := time.After(2 * time.Minute) // only stops a test that would never end
	for len(results) == 0 || m.Running() > 0 {
		select {
		case r := <-ended:
			results = append(results, r)
		case <-deadline:
			t.Fatalf("executions still running after 2 minutes: %d ended, %v", len(results), m.Err())
		}
	}
	wantSteps, _, localJobs := sc.runLocal(t)
	if !slices.Equal(side.steps, wantSteps) {
		t.Errorf("steps through continued executions:\n  %s\nlocal:\n  %s", strings.Join(side.steps, "\n  "), strings.Join(wantSteps, "\n  "))
	}
	continued := 0
	for _, r := range results {
		if r.Status != "SUCCEEDED" || r.States[len(r.States)-1] != "Done" {
			t.Errorf("execution %s: %s %s %s (states %v)", r.Name, r.Status, r.Error, r.Cause, r.States)
		}
		if slices.Contains(r.States, "ContinueAsNew") {
			continued++
		}
	}
	if len(results) != len(fake.Executions())+1 || continued != len(results)-1 || len(results) < 3 {
		t.Errorf("%d executions ended, %d continued, %d successors started: want each but the last to continue as new", len(results), continued, len(fake.Executions()))
	}
	if jobs.starts != localJobs.starts {
		t.Errorf("%d job starts, %d local", jobs.starts, localJobs.starts)
	}
}

// TestContinueAsNew: the rule an execution continues as new by.
func TestContinueAsNew(t *testing.T) {
	started := t0
	limit := 4 * time.Hour
	cases := []struct {
		name   string
		steps  int
		nextAt time.Time
		limit  time.Duration
		want   bool
	}{
		{"early in its life", 10, started.Add(time.Hour), limit, false},
		{"the next step and its allowance (1 h) end at the limit", 10, started.Add(3 * time.Hour), limit, false},
		{"the next step's allowance would pass the limit", 10, started.Add(3*time.Hour + time.Second), limit, true},
		{"a Wait past the limit (a 7-day window)", 1, started.Add(24 * time.Hour), limit, true},
		{"the history bound", MaxExecutionSteps, started.Add(time.Minute), limit, true},
		{"just under the history bound", MaxExecutionSteps - 1, started.Add(time.Minute), limit, false},
		{"a short limit keeps a quarter of it for the step", 1, started.Add(46 * time.Second), time.Minute, true},
		{"a short limit, the step early enough", 1, started.Add(45 * time.Second), time.Minute, false},
		{"no limit known", 10, started.Add(1000 * time.Hour), 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ContinueAsNew(c.steps, started, c.nextAt, c.limit); got != c.want {
				t.Fatalf("ContinueAsNew = %v, want %v", got, c.want)
			}
		})
	}
	if ContinueAsNew(10, time.Time{}, t0.Add(1000*time.Hour), limit) {
		t.Errorf("no start known: continued")
	}
}

// TestCallBoundDefaultsAgree: the call bounds deploy-config judges by
// (pipeline.JobCallBound) are the trigger packages' own defaults.
func TestCallBoundDefaultsAgree(t *testing.T) {
	if pipeline.DefaultRequestTimeout != httpx.DefaultTimeout {
		t.Errorf("pipeline.DefaultRequestTimeout %s, httpx.DefaultTimeout %s", pipeline.DefaultRequestTimeout, httpx.DefaultTimeout)
	}
	if pipeline.DefaultCommandTimeout != command.DefaultTimeout {
		t.Errorf("pipeline.DefaultCommandTimeout %s, command.DefaultTimeout %s", pipeline.DefaultCommandTimeout, command.DefaultTimeout)
	}
	if pipeline.LambdaMaxTimeout+pipeline.LambdaAnswerSlack > lambdajob.DefaultInvokeTimeout {
		t.Errorf("a lambda job without a timeout is judged to wait %s, but its call is cut at %s", pipeline.LambdaMaxTimeout+pipeline.LambdaAnswerSlack, lambdajob.DefaultInvokeTimeout)
	}
}

// TestHandedOffDuringItsStepEnds: an execution whose run is handed to
// another while its step runs — a job call outlasting its lease, the step
// then resumed by the watchdog — records the call's answer (the job did
// start) and ends there: the new execution follows the run alone.
func TestHandedOffDuringItsStepEnds(t *testing.T) {
	sc := agreementScenario{name: "handed", age: "1s"}
	eng, _, clk, jobs, key := sc.start(t, true)
	o := &Orchestrator{Engine: eng}
	cur := toTriggerStep(t, o, clk, key)
	var handed bool
	jobs.during = func() {
		// The call outlasts its lease, and the watchdog resumes the step.
		lease, err := eng.Current(t.Context(), key)
		if err != nil {
			t.Error(err)
			return
		}
		clk.Set(lease.NextAt.Add(DefaultOverdue))
		_, handed, err = eng.HandOff(t.Context(), store.Timer{Key: "step/" + key.PipelineID + "/" + key.ScheduleID + "/" + key.Period, Kind: string(lease.Next), Run: key, DueAt: lease.NextAt}, DefaultOverdue)
		if err != nil {
			t.Error(err)
		}
	}
	out := handleStep(t, o, StepInput{Mode: ModeTrigger, StepRef: engine.StepRef{Run: key, Due: cur.NextAt, Since: cur.Since}})
	if !handed {
		t.Fatal("the watchdog did not hand the step off during the call")
	}
	if !out.Done || !out.Acted {
		t.Fatalf("the execution handed away during its call: %+v, want the answer recorded and the execution done", out)
	}
}

// toTriggerStep takes the run's steps through o until its trigger step is
// due, and returns it with the clock at its due time.
func toTriggerStep(t *testing.T, o *Orchestrator, clk *clock.Virtual, key run.Key) engine.StepResult {
	t.Helper()
	for range 10 {
		cur, err := o.Engine.Current(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		if cur.NextAt.After(clk.Now()) {
			clk.Set(cur.NextAt)
		}
		if cur.Next == run.StepTrigger {
			return cur
		}
		handleStep(t, o, StepInput{Mode: string(cur.Next), StepRef: engine.StepRef{Run: key, Due: cur.NextAt, Since: cur.Since}})
	}
	t.Fatal("the run never came to its trigger step")
	return engine.StepResult{}
}
