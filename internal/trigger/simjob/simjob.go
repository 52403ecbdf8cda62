// Package simjob is the simulated job backend of `interlock simulate`: it
// stands in for every job type and behaves as the scenario says (how long a
// job takes, how it ends, how often the trigger call fails first). It plays
// an external system, so its state survives a simulated restart of the
// engine; it reads time only from the clock it is given.
package simjob

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Plan is how one simulated job behaves.
type Plan struct {
	Duration      time.Duration // trigger to result; 0 = synchronous
	Result        Result
	Category      run.Category // for ResultFail
	TriggerErrors int          // failed trigger calls before the call succeeds
	// Crash: the process that makes the trigger call stops during it,
	// after the job system received it (CrashAfterStart: the job runs) or
	// before (CrashBeforeStart: nothing runs); the call then succeeds.
	Crash Crash
}

// Crash is how a process stops during a trigger call.
type Crash string

// Crashes.
const (
	CrashAfterStart  Crash = "after-start"
	CrashBeforeStart Crash = "before-start"
)

// ErrProcessStopped is the answer of a trigger call whose process stopped
// during it (Plan.Crash); the process never records it.
var ErrProcessStopped = errors.New("simulated crash: the process stopped during the trigger call")

// Result is how a simulated job ends.
type Result string

// Results.
const (
	ResultSuccess Result = "success"
	ResultFail    Result = "fail"
	ResultTimeout Result = "timeout"
	ResultHang    Result = "hang"
)

// Default is used once a pipeline's plans are used up: success after 1m.
var Default = Plan{Duration: time.Minute, Result: ResultSuccess}

// ErrTriggerCall is the simulated infrastructure error of a trigger call.
var ErrTriggerCall = errors.New("simulated trigger call failure")

// Backend is the simulated job system.
type Backend struct {
	clk clock.Clock

	mu       sync.Mutex
	plans    map[string][]Plan
	next     map[string]int // next plan index per pipeline
	failures map[string]int // trigger-call failures already served for the next plan
	jobs     map[string]job
	started  map[string]int    // jobs started per pipeline
	byRunID  map[string]string // Interlock's run id → job id: the identity a lookup finds a job by
	crashed  map[string]bool   // the crash of the pipeline's next plan has happened
	onCrash  func()            // stops the process making the call (OnCrash)
}

// OnCrash sets what a Plan.Crash does to the process making the call: the
// simulator stops it (cancels the context its engine runs under) and
// starts a new one on the same store.
func (b *Backend) OnCrash(stop func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onCrash = stop
}

type job struct {
	plan    Plan
	started time.Time
}

var (
	_ trigger.Runner = (*Backend)(nil)
	_ trigger.Finder = (*Backend)(nil)
)

// New returns a backend that plays plans per pipeline id, in trigger order.
func New(clk clock.Clock, plans map[string][]Plan) *Backend {
	return &Backend{clk: clk, plans: plans, next: map[string]int{}, failures: map[string]int{}, jobs: map[string]job{}, started: map[string]int{}, byRunID: map[string]string{}, crashed: map[string]bool{}}
}

// Start consumes the pipeline's next plan.
func (b *Backend) Start(_ context.Context, req trigger.Request) (trigger.Started, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	plan := Default
	if i := b.next[req.PipelineID]; i < len(b.plans[req.PipelineID]) {
		plan = b.plans[req.PipelineID][i]
	}
	if b.failures[req.PipelineID] < plan.TriggerErrors {
		b.failures[req.PipelineID]++
		return trigger.Started{}, fmt.Errorf("%w (%d of %d)", ErrTriggerCall, b.failures[req.PipelineID], plan.TriggerErrors)
	}
	b.failures[req.PipelineID] = 0
	crash := plan.Crash != "" && !b.crashed[req.PipelineID]
	if crash && plan.Crash == CrashBeforeStart {
		b.crashed[req.PipelineID] = true // the next call gets through
		b.stop()
		return trigger.Started{}, ErrProcessStopped
	}
	b.crashed[req.PipelineID] = false
	b.next[req.PipelineID]++
	b.started[req.PipelineID]++
	id := req.PipelineID + "-sim-" + strconv.Itoa(b.started[req.PipelineID])
	now := b.clk.Now()
	b.jobs[id] = job{plan: plan, started: now}
	if req.RunID != "" {
		b.byRunID[req.RunID] = id
	}
	if crash {
		b.stop()
		return trigger.Started{}, ErrProcessStopped
	}
	st := trigger.Started{JobRunID: id, Meta: map[string]string{"simJobId": id}}
	if plan.Duration == 0 && plan.Result != ResultHang {
		r := outcome(plan)
		st.Result = &r
	}
	return st, nil
}

func (b *Backend) stop() {
	if b.onCrash != nil {
		b.onCrash()
	}
}

// Poll reports the job's result once its duration has passed.
func (b *Backend) Poll(_ context.Context, req trigger.Request) (trigger.Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	j, ok := b.jobs[req.Meta["simJobId"]]
	if !ok {
		return trigger.Result{}, fmt.Errorf("simulated job %q not found", req.Meta["simJobId"])
	}
	if j.plan.Result == ResultHang || b.clk.Now().Before(j.started.Add(j.plan.Duration)) {
		return trigger.Result{Status: trigger.StatusRunning}, nil
	}
	return outcome(j.plan), nil
}

func outcome(p Plan) trigger.Result {
	switch p.Result {
	case ResultFail:
		cat := p.Category
		if cat == "" {
			cat = run.Transient
		}
		return trigger.Result{Status: trigger.StatusFailed, Category: cat, Message: "simulated job failed (" + string(cat) + ")"}
	case ResultTimeout:
		return trigger.Result{Status: trigger.StatusFailed, Category: run.Timeout, Message: "simulated job timed out"}
	}
	return trigger.Result{Status: trigger.StatusSucceeded}
}

// findable are the job types whose real runners implement trigger.Finder
// (a test keeps this list equal to theirs): the simulated backend stands
// in for every type, and answers lookups only for these, so a simulation
// recovers an interrupted trigger call as the real job type would.
var findable = map[string]bool{"airflow": true, "databricks": true, "step-function": true, "emr-serverless": true}

// Finds reports whether jobs of typ can be looked up (trigger.Findable).
func (b *Backend) Finds(typ string) bool { return findable[typ] }

// Find looks up the job started under req's run id.
func (b *Backend) Find(_ context.Context, req trigger.Request) (trigger.Started, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id, ok := b.byRunID[req.RunID]
	if !ok || req.RunID == "" {
		return trigger.Started{}, false, nil
	}
	return trigger.Started{JobRunID: id, Meta: map[string]string{"simJobId": id}}, true, nil
}

// Started reports how many jobs the backend started for a pipeline.
func (b *Backend) Started(pipelineID string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.started[pipelineID]
}
