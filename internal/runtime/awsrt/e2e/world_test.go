package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/runtime/awsrt"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
	"github.com/interlockhq/interlock/internal/testenv/ddbstream"
	"github.com/interlockhq/interlock/internal/testenv/sfnlocal"
	"github.com/interlockhq/interlock/internal/trigger"
)

// The deployment's names, as Terraform would make them.
const (
	bus             = "interlock-events"
	orchestratorARN = "arn:aws:lambda:us-east-1:000000000000:function:interlock-orchestrator"
	monitorARN      = "arn:aws:lambda:us-east-1:000000000000:function:interlock-sla-monitor"
	schedulerGroup  = "interlock"
	schedulerRole   = "arn:aws:iam::000000000000:role/interlock-scheduler"
)

// retention keeps everything the test writes: DynamoDB Local's TTL really
// deletes, and the scenarios are dated in the past.
const retention = 100 * 365 * 24 * time.Hour

// world is an Interlock deployment on AWS, run here: the four tables on
// DynamoDB Local with their real streams, read by event source mappings
// (ddbstream) that invoke the stream-router, the sla-monitor and the
// event-publisher through lambda.NewHandler(...).Invoke; the state
// machine (deploy/statemachine.asl.json, rendered as Terraform renders
// it) under aws-local-stepfunctions, its Tasks invoking the orchestrator
// over Lambda's Invoke route; Step Functions' StartExecution, EventBridge
// Scheduler and EventBridge as fakes the functions reach through the real
// SDK clients; the watchdog invoked as its EventBridge rule would.
//
// Each function has its own store client and engine, as separate Lambda
// containers do; all share one virtual clock. The world is a discrete
// event simulation, like simulate's loop: it moves the clock to the next
// instant anything is due (a timeline action, an execution's Wait ending,
// a schedule, the watchdog's rule), lets what is due there happen, and
// waits until the deployment is quiet (every stream read to its end, no
// invocation running, every execution waiting or ended) before moving on.
// A Wait state takes no time in the Node process; the orchestrator's
// Invoke endpoint holds the invocation after it until the clock reaches
// the instant the Wait waited for (the Task's `due`).
type world struct {
	t      *testing.T
	ctx    context.Context
	clk    *clock.Virtual
	ddb    *dynamodb.Client
	tables ddbstore.Tables
	writer *ddbstore.Store // the users' side: sensors, rerun requests, configs

	router   *awsrt.Router
	monitor  *awsrt.SLAMonitor
	watchdog *awsrt.Watchdog
	streams  []*ddbstream.Mapping

	sfn     *awsfake.StepFunctions
	sched   *awsfake.Scheduler
	eb      *awsfake.EventBridge
	machine *sfnlocal.Machine
	invoke  *invokeEndpoint

	mu      sync.Mutex
	pending []awsfake.Execution // started by the router, not yet handed to the machine
	ended   []sfnlocal.Result
	bus     []event.Event // what the outbox put on the bus
	errs    []string      // what went wrong on the way (failed firings, records)
}

// worldOptions are what a world runs.
type worldOptions struct {
	start    time.Time
	jobsOf   func(*world) trigger.Runner // the orchestrator's jobs; nil: its own runners (app.Jobs), configured by env
	env      map[string]string           // the orchestrator's environment
	settings scenarioSettings
}

// scenarioSettings are the settings a scenario gives the functions.
type scenarioSettings struct {
	maxClockSkew      time.Duration
	envAllow          []string
	stuckRunThreshold time.Duration
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newWorld builds a deployment on fresh tables at opt.start.
func newWorld(t *testing.T, opt worldOptions) *world {
	t.Helper()
	ctx := t.Context()
	w := &world{t: t, ctx: ctx, clk: clock.NewVirtual(opt.start), ddb: ddblocal.Client(t), tables: ddbstore.TablesFor(ddblocal.Prefix(t))}
	if err := ddbstore.CreateTables(ctx, w.ddb, w.tables); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ddbstore.DeleteTables(context.Background(), w.ddb, w.tables) })
	w.writer = w.openStore()

	rules := rule.Options{MaxClockSkew: opt.settings.maxClockSkew}
	passive := func() *engine.Engine {
		return w.engine(engine.Options{Jobs: noJobs{}, Rules: rules, EnvAllow: opt.settings.envAllow})
	}

	// Step Functions: StartExecution is the fake's; each execution started
	// runs in the Node process.
	w.sfn = awsfake.NewStepFunctions(t)
	machineARN := w.sfn.AddStateMachine("interlock-run")
	w.sfn.OnStart(func(ex awsfake.Execution) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.pending = append(w.pending, ex)
	})

	// stream-router (control and job-log streams).
	routerStore := w.openStore()
	w.router = &awsrt.Router{Engine: passive(), Store: routerStore, Tables: w.tables, Log: discard(),
		Executions: &awsrt.ExecutionStarter{Client: sfn.NewFromConfig(awsfake.Config(w.sfn.URL)), StateMachineARN: machineARN, Store: routerStore, Log: discard()}}

	// sla-monitor (control stream; the schedules it makes fire it).
	w.sched = awsfake.NewScheduler(t, w.clk)
	monitorStore := w.openStore()
	w.monitor = &awsrt.SLAMonitor{Engine: passive(), Store: monitorStore, Tables: w.tables,
		Scheduler: scheduler.NewFromConfig(awsfake.Config(w.sched.URL)), Group: schedulerGroup, RoleARN: schedulerRole, TargetARN: monitorARN,
		Clock: w.clk, Log: discard()}
	monitorInvoke := lambda.NewHandler(w.monitor.Handle).Invoke
	w.sched.Target(monitorARN, func(ctx context.Context, input string) error {
		_, err := monitorInvoke(ctx, []byte(input))
		return err
	})

	// event-publisher (events stream) → the bus, where the test reads.
	w.eb = awsfake.NewEventBridge(t, w.clk, bus)
	w.eb.Route(func(awsfake.BusEvent) bool { return true }, func(be awsfake.BusEvent) {
		w.collect(be.JSON)
	})
	pub, err := awsrt.NewPublisher(awsrt.PublisherConfig{EventBridge: eventbridge.NewFromConfig(awsfake.Config(w.eb.URL)), Bus: bus,
		EventsTable: w.tables.Events, Clock: w.clk, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}

	// watchdog (its EventBridge rule is the world's loop).
	w.watchdog = &awsrt.Watchdog{Engine: passive(), StuckRunThreshold: opt.settings.stuckRunThreshold, Clock: w.clk, Log: discard()}

	// orchestrator, behind the Invoke endpoint the Node process calls: the
	// function's own job runners configured by its environment, or the
	// scenario's simulated jobs.
	var orch *awsrt.Orchestrator
	if opt.jobsOf != nil {
		orch = &awsrt.Orchestrator{Engine: w.engine(engine.Options{Jobs: opt.jobsOf(w), Rules: rules, EnvAllow: opt.settings.envAllow}), Log: discard()}
	} else {
		orch, err = awsrt.NewOrchestrator(ctx, w.openStore(), w.clk, awsrt.EnvOf(opt.env), discard())
		if err != nil {
			t.Fatal(err)
		}
	}
	w.invoke = &invokeEndpoint{clk: w.clk, handler: lambda.NewHandler(orch.Handle)}
	hs := httptest.NewServer(w.invoke)
	t.Cleanup(hs.Close)
	t.Cleanup(w.invoke.stop)
	w.machine = sfnlocal.Serve(t, hs.URL, renderedASL(t), w.executionEnded)

	// The event source mappings of deploy/terraform/lambda.tf.
	routerInvoke := lambda.NewHandler(w.router.Handle).Invoke
	monitorBatch := lambda.NewHandler(w.monitor.Handle).Invoke
	for _, m := range []struct {
		table  string
		invoke ddbstream.Invoke
	}{
		{w.tables.Control, routerInvoke},
		{w.tables.JobLog, routerInvoke},
		{w.tables.Control, monitorBatch},
		{w.tables.Events, lambda.NewHandler(pub.Handle).Invoke},
	} {
		arn, err := ddbstream.StreamARN(ctx, w.ddb, m.table)
		if err != nil {
			t.Fatal(err)
		}
		w.streams = append(w.streams, ddbstream.New(ddbstream.FromDynamoDB(w.ddb), arn, 10, m.invoke))
	}
	return w
}

// openStore opens a store on the world's tables: each function has its
// own, as each Lambda container does.
func (w *world) openStore() *ddbstore.Store {
	st, err := ddbstore.Open(w.ctx, ddbstore.Config{Client: w.ddb, Tables: w.tables, Retention: retention})
	if err != nil {
		w.t.Fatal(err)
	}
	return st
}

// engine opens a passive engine on its own store and the world's clock.
func (w *world) engine(o engine.Options) *engine.Engine {
	o.Store, o.Clock, o.Logger, o.Passive = w.openStore(), w.clk, discard(), true
	eng := engine.New(o)
	if err := eng.Open(w.ctx); err != nil {
		w.t.Fatal(err)
	}
	return eng
}

// renderedASL is deploy/statemachine.asl.json as Terraform renders it.
func renderedASL(t *testing.T) []byte {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(sfnlocal.RepoRoot(t), "deploy", "statemachine.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	def, err := awsrt.RenderASL(tmpl, awsrt.ASLVars{OrchestratorARN: orchestratorARN, TimeoutSeconds: 86400, TriggerMaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// deploy loads configs and calendars as `interlock deploy-config` does:
// through an engine on the control table (the stream-router then sees the
// config items).
func (w *world) deploy(cals map[string]schedule.Calendar, docs []scenario.Doc) {
	w.t.Helper()
	eng := w.engine(engine.Options{Jobs: noJobs{}})
	if len(cals) > 0 {
		if _, err := eng.SetCalendars(w.ctx, cals); err != nil {
			w.t.Fatal(err)
		}
	}
	for _, d := range docs {
		if _, err := eng.ApplyConfig(w.ctx, d.File, d.Data); err != nil {
			w.t.Fatalf("deploy %s: %v", d.File, err)
		}
	}
}

// putSensor writes a sensor as anyone's code does: one PutItem of
// PIPELINE#<id> / SENSOR#<key> through the SDK.
func (w *world) putSensor(pipelineID, key string, data sensor.Object) {
	w.t.Helper()
	if err := w.writer.PutSensorItem(w.ctx, pipelineID, key, data); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) collect(body []byte) {
	be, err := awsrt.ParseBusEvent(body)
	if err == nil {
		var e event.Event
		e, _, err = be.Event(w.clk.Now())
		if err == nil {
			w.mu.Lock()
			w.bus = append(w.bus, e)
			w.mu.Unlock()
			return
		}
	}
	w.fail("bus event %s: %v", body, err)
}

func (w *world) executionEnded(r sfnlocal.Result) {
	w.mu.Lock()
	w.ended = append(w.ended, r)
	w.mu.Unlock()
	if r.Status != "SUCCEEDED" {
		w.fail("execution %s: %s %s: %s (states %v)", r.Name, r.Status, r.Error, r.Cause, r.States)
	}
}

// fail records what went wrong on the way; the test reports it at its
// end (a goroutine may not call t.Fatal).
func (w *world) fail(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, fmt.Sprintf(format, args...))
}

// events is what the bus received, in order.
func (w *world) events() []event.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]event.Event(nil), w.bus...)
}

// settle waits until the deployment is quiet at the clock's instant: the
// streams read to their ends, the executions started handed to the
// machine, no orchestrator invocation running and every execution either
// ended or held at a Wait — twice in a row, so that what the last
// invocation wrote has been read. Bounded to a minute.
func (w *world) settle() {
	w.t.Helper()
	deadline := time.Now().Add(time.Minute)
	quiet := 0
	for quiet < 2 {
		if time.Now().After(deadline) {
			w.t.Fatalf("the deployment did not settle at %s: %d executions running, %d held, %d invocations active",
				w.clk.Now().Format(time.RFC3339), w.machine.Running(), w.invoke.held(), w.invoke.activeCount())
		}
		if err := w.machine.Err(); err != nil {
			w.t.Fatal(err)
		}
		moved := 0
		for _, m := range w.streams {
			res, err := m.Drain(w.ctx, 1000)
			if err != nil {
				w.t.Fatal(err)
			}
			for _, r := range res {
				if r.Failed > 0 || r.Error != nil {
					w.fail("at %s: a batch of %d records from %s: %d failed, error %v", w.clk.Now().Format(time.RFC3339), len(r.Records), r.Shard, r.Failed, r.Error)
				}
				moved += len(r.Records)
			}
		}
		w.mu.Lock()
		starts := w.pending
		w.pending = nil
		w.mu.Unlock()
		for _, ex := range starts {
			var input any
			if err := json.Unmarshal([]byte(ex.Input), &input); err != nil {
				w.t.Fatal(err)
			}
			if err := w.machine.Start(sfnlocal.Execution{Name: ex.Name, Input: input}); err != nil {
				w.t.Fatal(err)
			}
			moved++
		}
		if moved == 0 && w.invoke.activeCount() == 0 && w.machine.Running() == w.invoke.held() {
			quiet++
			continue
		}
		quiet = 0
		if moved == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// next is the earliest instant after the clock's that something is due
// at: a held invocation, a schedule, or one of extra.
func (w *world) next(extra ...time.Time) (time.Time, bool) {
	var at time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	if t, ok := w.invoke.nextDue(); ok {
		consider(t)
	}
	if t, ok := w.sched.Next(); ok {
		consider(t)
	}
	for _, t := range extra {
		consider(t)
	}
	return at, !at.IsZero()
}

// runDue lets everything due by the clock happen: held invocations go on,
// schedules fire; again until nothing more is due at this instant.
func (w *world) runDue() {
	w.t.Helper()
	for range 1000 {
		w.settle()
		now := w.clk.Now()
		released := w.invoke.release(now)
		fired := w.sched.Fire(w.ctx, now)
		for _, f := range fired {
			if f.Err != nil {
				w.fail("at %s: schedule %s (%s) failed: %v", now.Format(time.RFC3339), f.Name, f.At.Format(time.RFC3339), f.Err)
			}
		}
		if released == 0 && len(fired) == 0 {
			return
		}
	}
	w.t.Fatalf("at %s: still due after 1,000 rounds", w.clk.Now())
}

// watchdogPass is one invocation of the watchdog function by its rule.
func (w *world) watchdogPass() awsrt.WatchdogResult {
	w.t.Helper()
	res, err := w.watchdog.Handle(w.ctx, nil)
	if err != nil {
		w.fail("at %s: watchdog: %v", w.clk.Now().Format(time.RFC3339), err)
	}
	w.settle()
	return res
}

// action is something the test does at an instant (a user writing a
// sensor, deleting a schedule by hand).
type action struct {
	at time.Time
	do func()
}

// play runs the deployment from the clock's instant to end, as simulate's
// loop runs the local runtime: at each instant something is due, the
// actions of that instant first (in order), then what the deployment has
// due (held steps, schedules), then the watchdog when its rule is due —
// every interval from the start (0: never).
func (w *world) play(actions []action, end time.Time, interval time.Duration) {
	w.t.Helper()
	nextWatchdog := w.clk.Now()
	i := 0
	for {
		w.settle()
		var extra []time.Time
		if i < len(actions) {
			extra = append(extra, actions[i].at)
		}
		if interval > 0 {
			extra = append(extra, nextWatchdog)
		}
		at, ok := w.next(extra...)
		if !ok || at.After(end) {
			if end.After(w.clk.Now()) {
				w.clk.Set(end)
			}
			return
		}
		if at.After(w.clk.Now()) {
			w.clk.Set(at)
		}
		now := w.clk.Now()
		for i < len(actions) && !actions[i].at.After(now) {
			actions[i].do()
			i++
		}
		w.runDue()
		if interval > 0 && !nextWatchdog.After(now) {
			w.watchdogPass()
			for !nextWatchdog.After(now) {
				nextWatchdog = nextWatchdog.Add(interval)
			}
		}
	}
}

// check fails the test with what went wrong on the way.
func (w *world) check() {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) > 0 {
		w.t.Errorf("on the way:\n  %s", strings.Join(w.errs, "\n  "))
	}
}

// invokeEndpoint serves Lambda's Invoke route for the state machine's
// Tasks: the orchestrator through lambda.NewHandler(...).Invoke, an error
// answered as Lambda answers one (X-Amz-Function-Error: Unhandled). An
// invocation whose `due` is after the clock is held until the world's
// clock gets there: that is when its Wait state would have ended.
type invokeEndpoint struct {
	clk     *clock.Virtual
	handler lambda.Handler

	mu      sync.Mutex
	holds   []*hold
	active  int
	stopped chan struct{}
	once    sync.Once
}

type hold struct {
	due time.Time
	go_ chan struct{}
}

func (e *invokeEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/2015-03-31/functions/") || !strings.HasSuffix(r.URL.Path, "/invocations") {
		http.Error(w, "not the Invoke route", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var in awsrt.StepInput
	_ = json.Unmarshal(body, &in) // a bad input is the handler's to refuse
	if !e.wait(r.Context(), in.Due) {
		http.Error(w, "the test ended", http.StatusServiceUnavailable)
		return
	}
	defer e.done()
	out, err := e.handler.Invoke(r.Context(), body)
	if err != nil {
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		w.Header().Set("Content-Type", "application/json")
		typ := fmt.Sprintf("%T", err)
		var se *awsrt.StepError
		var ie *awsrt.InputError
		switch {
		case errors.As(err, &se):
			typ = "StepError"
		case errors.As(err, &ie):
			typ = "InputError"
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"errorType": typ, "errorMessage": err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// wait holds an invocation due after the clock until release lets it go;
// it is active from then until done.
func (e *invokeEndpoint) wait(ctx context.Context, due time.Time) bool {
	e.mu.Lock()
	if e.stopped == nil {
		e.stopped = make(chan struct{})
	}
	if !due.After(e.clk.Now()) {
		e.active++
		e.mu.Unlock()
		return true
	}
	h := &hold{due: due, go_: make(chan struct{})}
	e.holds = append(e.holds, h)
	stopped := e.stopped
	e.mu.Unlock()
	select {
	case <-h.go_:
		return true // release counted it active
	case <-ctx.Done():
	case <-stopped:
	}
	return false
}

func (e *invokeEndpoint) done() {
	e.mu.Lock()
	e.active--
	e.mu.Unlock()
}

// release lets the invocations due by now go on, and says how many.
func (e *invokeEndpoint) release(now time.Time) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	kept := e.holds[:0]
	for _, h := range e.holds {
		if h.due.After(now) {
			kept = append(kept, h)
			continue
		}
		e.active++
		close(h.go_)
		n++
	}
	e.holds = kept
	return n
}

func (e *invokeEndpoint) nextDue() (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var at time.Time
	for _, h := range e.holds {
		if at.IsZero() || h.due.Before(at) {
			at = h.due
		}
	}
	return at, !at.IsZero()
}

func (e *invokeEndpoint) held() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.holds)
}

func (e *invokeEndpoint) activeCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.active
}

// stop lets every held invocation fail (the test is over).
func (e *invokeEndpoint) stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped == nil {
		e.stopped = make(chan struct{})
	}
	e.once.Do(func() { close(e.stopped) })
}

// noJobs is the job system of the functions that make no job calls.
type noJobs struct{}

var errNoJobs = errors.New("this function makes no job calls")

func (noJobs) Start(context.Context, trigger.Request) (trigger.Started, error) {
	return trigger.Started{}, errNoJobs
}

func (noJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{}, errNoJobs
}

// eventLine is an event as the comparisons read it: when, what, for which
// period.
func eventLine(e event.Event) string {
	return fmt.Sprintf("%s %s %s/%s/%s", e.Time.UTC().Format(time.RFC3339), e.Type, e.PipelineID, e.ScheduleID, e.Date)
}

// eventLines are es as lines, sorted (events of one instant may be
// committed in another order by concurrent functions).
func eventLines(es []event.Event) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, eventLine(e))
	}
	sort.Strings(out)
	return out
}
