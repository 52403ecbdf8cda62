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
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/slack"
	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/awsrt"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/store/sqlite"
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
// the instant the Wait waited for (the Task's `due`) truncated to the
// whole second, as Step Functions ends a TimestampPath Wait.
//
// The alert path is wired as eventbridge.tf, sqs.tf and lambda.tf wire
// it: the bus's alert rule (its pattern read from eventbridge.tf) sends
// to the alert queue (awsfake SQS on the world's clock, its visibility
// timeout and redrive as sqs.tf's), read by the alert-dispatcher through
// an SQS mapping with lambda.tf's batch size, posting to a Slack stand-in
// (slacktest).
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

	sqs       *awsfake.SQS
	alerts    *awsfake.SQSMapping
	slaReplay *awsfake.SQSMapping
	slack     *slacktest.Server

	mu         sync.Mutex
	pending    []awsfake.Execution            // started by the router, not yet handed to the machine
	executions map[string]awsfake.Execution   // by name: every execution started
	startedAt  map[string]time.Time           // by name: the instant it was handed to the machine
	streamDLQ  map[string][]ddbstream.Failure // by mapping: what each stream mapping gave up on
	timedOut   map[string]bool                // by name: stopped at its TimeoutSeconds
	timeout    time.Duration                  // the executions' TimeoutSeconds
	ended      []sfnlocal.Result
	bus        []event.Event // what the outbox put on the bus
	errs       []string      // what went wrong on the way (failed firings, records)
	faults     faults
	windows    []silence.Window // the maintenance windows (scenarioSettings)
	// alertConfig, with scenarioSettings.alerts, is how every function
	// reads the stored alert config's windows (nil: windows).
	alertConfig *app.StoredAlertConfig
	cpURL       string // the control plane's address (controlplane_test.go), once opened
}

// faults are the failures a test injects; each is counted when it
// happens, and a failure it causes is not one of the world's errors.
type faults struct {
	// failRecord chooses control-stream records the stream-router fails
	// every batch holding (until its mapping gives up on them).
	failRecord func(events.DynamoDBEventRecord) bool
	// expectDLQ is how many failures each stream mapping's on-failure
	// DLQ is to receive, by mapping (lambda.tf's names).
	expectDLQ map[string]int
	// publisherCrashes is how many next event-publisher invocations fail.
	publisherCrashes, publisherCrashed int
	// firingFailures is how many next invocations of the sla-monitor by a
	// schedule fail.
	firingFailures, firingsFailed int
	// expectEnd says an execution's end that is not SUCCEEDED is the
	// fault's doing (stopped, timed out, failed past its retries).
	expectEnd func(sfnlocal.Result) bool
}

// streamRetries is maximum_retry_attempts of each stream mapping
// (lambda.tf, local.stream_mappings' retries): the publisher's retries
// until the record leaves the stream (-1), the others give up after 3
// retries and send what still fails to their DLQ.
var streamRetries = map[string]int{"router-control": 3, "router-joblog": 3, "sla-timers": 3, "publisher-event": -1}

// errInjected is the error of an invocation a test made fail.
var errInjected = errors.New("injected fault")

// The alert path's settings, as deploy/terraform sets them: keep each
// equal to its source.
const (
	// sfnTimeout is the default of variables.tf's sfn_timeout_seconds: an
	// execution's TimeoutSeconds, which the world enforces on its clock.
	sfnTimeout = 14400 * time.Second
	// streamBatchSize is batch_size of aws_lambda_event_source_mapping.stream
	// (lambda.tf).
	streamBatchSize = 10
	// alertBatchSize is batch_size of aws_lambda_event_source_mapping.read["alerts"]
	// (lambda.tf; the value is local.read_queues' batch, sqs.tf).
	alertBatchSize = 1
	// alertConcurrency is that mapping's scaling_config maximum_concurrency
	// (local.alert_concurrency: the dispatcher's reserved concurrency, 2
	// when var.lambda_concurrency reserves none, the default): the
	// batches one poll of the world invokes at once.
	alertConcurrency = 2
	// alertVisibility is visibility_timeout_seconds of aws_sqs_queue.read["alerts"]
	// (sqs.tf: six times the alert-dispatcher's 30 s timeout).
	alertVisibility = 6 * 30 * time.Second
	// alertMaxReceives is the redrive policy's maxReceiveCount of
	// aws_sqs_queue.read["alerts"] (sqs.tf): the receive after that many moves the
	// message to the alert DLQ.
	alertMaxReceives = 10
	// alertQueue and alertDLQ are the queues' names (sqs.tf, without the
	// environment's prefix).
	alertQueue, alertDLQ = "alerts", "alert-dlq"
	// slaDLQ and slaDLQFinal are the SLA DLQ and its own DLQ (sqs.tf);
	// slaDLQVisibility is aws_sqs_queue.read["sla-dlq"]'s visibility timeout (six
	// times the sla-monitor's 30 s) and slaDLQMaxReceives its redrive
	// policy's maxReceiveCount.
	slaDLQ, slaDLQFinal = "sla-dlq", "sla-dlq-final"
	slaDLQVisibility    = 6 * 30 * time.Second
	slaDLQMaxReceives   = 5
	// slaReplayBatch and slaReplayConcurrency are batch_size and
	// maximum_concurrency of aws_lambda_event_source_mapping.read["sla-dlq"]
	// (lambda.tf; the values are local.read_queues', sqs.tf).
	slaReplayBatch, slaReplayConcurrency = 10, 2
	// asyncRetries is maximum_retry_attempts of
	// aws_lambda_function_event_invoke_config.async (lambda.tf): Lambda's
	// retries of a failed asynchronous invocation before its on-failure
	// destination. (Lambda spaces them by a minute or two; here they take
	// no virtual time.)
	asyncRetries = 2
	// slackChannel and slackToken are the dispatcher's SLACK_CHANNEL_ID
	// and SLACK_BOT_TOKEN.
	slackChannel, slackToken = "C0ALERTS", "xoxb-e2e-token"
)

// worldOptions are what a world runs.
type worldOptions struct {
	start    time.Time
	jobsOf   func(*world) trigger.Runner // the orchestrator's jobs; nil: its own runners (app.Jobs), configured by env
	env      map[string]string           // the orchestrator's environment
	settings scenarioSettings
	// sfnTimeout is the state machine's TimeoutSeconds (0: sfnTimeout,
	// the module's default).
	sfnTimeout time.Duration
}

// scenarioSettings are the settings a scenario gives the functions.
type scenarioSettings struct {
	maxClockSkew      time.Duration
	envAllow          []string
	stuckRunThreshold time.Duration
	// maintenance are the windows of ALERTS_CONFIG: the functions'
	// engines and the dispatcher have them, as the module gives them.
	maintenance []silence.Window
	// alerts, when set, is an interlock.yaml whose alerts: and
	// maintenance: are stored as the deployment's alert config (as
	// deploy-config stores them) before the functions start: the
	// dispatcher routes by it, its tokenEnv reading alertTokenEnv.
	alerts string
}

// alertTokenEnv is the variable a stored route's tokenEnv names: the
// dispatcher's environment holds slackToken there.
const alertTokenEnv = "E2E_SLACK_TOKEN"

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newWorld builds a deployment on fresh tables at opt.start.
func newWorld(t *testing.T, opt worldOptions) *world {
	t.Helper()
	ctx := t.Context()
	w := &world{t: t, ctx: ctx, clk: clock.NewVirtual(opt.start), ddb: ddblocal.Client(t), tables: ddbstore.TablesFor(ddblocal.Prefix(t)),
		executions: map[string]awsfake.Execution{}, startedAt: map[string]time.Time{}, streamDLQ: map[string][]ddbstream.Failure{}, timedOut: map[string]bool{}}
	if err := ddbstore.CreateTables(ctx, w.ddb, w.tables); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ddbstore.DeleteTables(context.Background(), w.ddb, w.tables) })
	w.writer = w.openStore()
	w.windows = opt.settings.maintenance
	if opt.settings.alerts != "" {
		w.alertConfig = &app.StoredAlertConfig{Store: w.openStore()}
	}

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

	// sla-monitor (control stream; the schedules it makes fire it,
	// asynchronously: Lambda retries a failed firing, then sends it to the
	// SLA DLQ, whose mapping replays it into the sla-monitor).
	w.sqs = awsfake.NewSQSOn(t, w.clk)
	w.sqs.CreateQueue(awsfake.QueueConfig{Name: slaDLQFinal})
	w.sqs.CreateQueue(awsfake.QueueConfig{Name: slaDLQ, VisibilityTimeout: slaDLQVisibility, DeadLetter: slaDLQFinal, MaxReceiveCount: slaDLQMaxReceives})
	w.sched = awsfake.NewScheduler(t, w.clk)
	monitorStore := w.openStore()
	w.monitor = &awsrt.SLAMonitor{Engine: passive(), Store: monitorStore, Tables: w.tables,
		Scheduler: scheduler.NewFromConfig(awsfake.Config(w.sched.URL)), Group: schedulerGroup, RoleARN: schedulerRole, TargetARN: monitorARN,
		DeadLetterARN: w.sqs.QueueARN(slaDLQ), Clock: w.clk, Log: discard()}
	// As SLAMonitorFromEnv at a cold start.
	awsrt.ArmMaintenance(ctx, w.monitor.Engine, discard())
	monitorInvoke := lambda.NewHandler(w.monitor.Handle).Invoke
	firing := w.failFirst(&w.faults.firingFailures, &w.faults.firingsFailed, "sla-monitor: ProvisionedThroughputExceededException", monitorInvoke)
	w.sched.Target(monitorARN, func(ctx context.Context, input string) error {
		w.invokeAsync(ctx, monitorARN, firing, []byte(input), slaDLQ)
		return nil // Lambda took the event
	})
	w.slaReplay = awsfake.NewSQSMapping(w.sqs, slaDLQ, slaReplayBatch, monitorInvoke)

	// event-publisher (events stream) → the bus, where the test reads;
	// the bus's alert rule → the alert queue → the alert-dispatcher →
	// Slack.
	w.eb = awsfake.NewEventBridge(t, w.clk, bus)
	w.eb.Route(func(awsfake.BusEvent) bool { return true }, func(be awsfake.BusEvent) {
		w.collect(be.JSON)
	})
	w.sqs.CreateQueue(awsfake.QueueConfig{Name: alertDLQ})
	w.sqs.CreateQueue(awsfake.QueueConfig{Name: alertQueue, VisibilityTimeout: alertVisibility, DeadLetter: alertDLQ, MaxReceiveCount: alertMaxReceives})
	isAlert := alertRule(t)
	w.eb.Route(isAlert, func(be awsfake.BusEvent) { w.sqs.Send(alertQueue, string(be.JSON)) })
	w.slack = slacktest.New(t, slackToken)
	// As DispatcherFromEnv builds it: the stored alert config, else
	// ALERTS_CONFIG's windows with the SLACK_CHANNEL_ID route. The config
	// is stored after the functions' cold starts, as deploy-config stores
	// it into a running deployment: its windows' end timers are armed by
	// the sla-monitor from the record's stream record.
	dispatcherStore := w.openStore()
	if opt.settings.alerts != "" {
		y, _, err := app.AlertConfigOf("interlock.yaml", []byte(opt.settings.alerts))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := app.StoreAlertConfig(ctx, dispatcherStore, "interlock.yaml", y, opt.start); err != nil {
			t.Fatal(err)
		}
	}
	stored := &app.StoredAlertConfig{Store: dispatcherStore, Fallback: &pipeline.Settings{Maintenance: w.windows}}
	dispatcher, err := awsrt.NewDispatcher(awsrt.DispatcherConfig{Store: dispatcherStore, Channel: slackChannel, Token: awsrt.StaticToken(slackToken),
		Settings: stored.Settings, APIURL: w.slack.APIURL(), Clock: w.clk, Logger: discard(),
		LookupEnv: func(k string) (string, bool) { return slackToken, k == alertTokenEnv }})
	if err != nil {
		t.Fatal(err)
	}
	w.alerts = awsfake.NewSQSMapping(w.sqs, alertQueue, alertBatchSize, lambda.NewHandler(dispatcher.Handle).Invoke)
	pub, err := awsrt.NewPublisher(awsrt.PublisherConfig{EventBridge: eventbridge.NewFromConfig(awsfake.Config(w.eb.URL)), Bus: bus,
		EventsTable: w.tables.Events, Clock: w.clk, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}

	// watchdog (its EventBridge rule is the world's loop).
	w.watchdog = &awsrt.Watchdog{Engine: passive(), StuckRunThreshold: opt.settings.stuckRunThreshold, Clock: w.clk, Log: discard(),
		Executions: w.starter(machineARN)}

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
	orch.Executions = w.starter(machineARN)
	w.invoke = &invokeEndpoint{clk: w.clk, handler: orch.Handle}
	hs := httptest.NewServer(w.invoke)
	t.Cleanup(hs.Close)
	t.Cleanup(w.invoke.stop)
	w.timeout = opt.sfnTimeout
	if w.timeout == 0 {
		w.timeout = sfnTimeout
	}
	w.machine = sfnlocal.Serve(t, hs.URL, renderedASL(t, w.timeout), w.executionEnded)

	// The event source mappings of deploy/terraform/lambda.tf.
	routerInvoke := lambda.NewHandler(w.router.Handle).Invoke
	monitorBatch := lambda.NewHandler(w.monitor.Handle).Invoke
	for _, m := range []struct {
		name   string
		table  string
		invoke ddbstream.Invoke
	}{
		{"router-control", w.tables.Control, w.failingRecords(routerInvoke)},
		{"router-joblog", w.tables.JobLog, routerInvoke},
		{"sla-timers", w.tables.Control, monitorBatch},
		{"publisher-event", w.tables.Events, w.failFirst(&w.faults.publisherCrashes, &w.faults.publisherCrashed, "event-publisher: Runtime.ExitError", lambda.NewHandler(pub.Handle).Invoke)},
	} {
		arn, err := ddbstream.StreamARN(ctx, w.ddb, m.table)
		if err != nil {
			t.Fatal(err)
		}
		sm := ddbstream.New(ddbstream.FromDynamoDB(w.ddb), arn, streamBatchSize, m.invoke)
		sm.Retry(streamRetries[m.name], func(f ddbstream.Failure) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.streamDLQ[m.name] = append(w.streamDLQ[m.name], f)
		})
		w.streams = append(w.streams, sm)
	}
	return w
}

// invokeAsync is Lambda's asynchronous invocation of fn (as Scheduler and
// EventBridge invoke): a failed invocation is retried asyncRetries times,
// then Lambda sends its on-failure destination record, the payload as
// requestPayload, to the queue dlq. An error the test did not inject is
// one of the world's errors too.
func (w *world) invokeAsync(ctx context.Context, arn string, fn ddbstream.Invoke, payload []byte, dlq string) {
	var err error
	for range 1 + asyncRetries {
		if _, err = fn(ctx, payload); err == nil {
			return
		}
		if !errors.Is(err, errInjected) {
			w.fail("at %s: %s failed an asynchronous invocation: %v", w.clk.Now().Format(time.RFC3339), arn, err)
		}
	}
	record, merr := json.Marshal(map[string]any{
		"version": "1.0", "timestamp": w.clk.Now().UTC().Format(time.RFC3339Nano),
		"requestContext": map[string]any{"requestId": fmt.Sprintf("%x", time.Now().UnixNano()), "functionArn": arn + ":$LATEST",
			"condition": "RetriesExhausted", "approximateInvokeCount": 1 + asyncRetries},
		"requestPayload":  json.RawMessage(payload),
		"responseContext": map[string]any{"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
		"responsePayload": map[string]string{"errorType": "errorString", "errorMessage": err.Error()},
	})
	if merr != nil {
		w.fail("on-failure record: %v", merr)
		return
	}
	w.sqs.Send(dlq, string(record))
}

// pollQueue is one round of an SQS mapping: concurrency polls at once,
// each a batch invoking its function; it returns the messages received.
func (w *world) pollQueue(m *awsfake.SQSMapping, concurrency int) int {
	w.t.Helper()
	var wg sync.WaitGroup
	res := make([]awsfake.PollResult, concurrency)
	errs := make([]error, concurrency)
	for i := range concurrency {
		wg.Go(func() { res[i], errs[i] = m.Poll(w.ctx) })
	}
	wg.Wait()
	n := 0
	for i := range res {
		if errs[i] != nil {
			w.t.Fatal(errs[i])
		}
		n += res[i].Received
	}
	return n
}

// starter is a function's client of StartExecution (the module gives the
// stream-router, the orchestrator and the watchdog STATE_MACHINE_ARN).
func (w *world) starter(machineARN string) *awsrt.ExecutionStarter {
	return &awsrt.ExecutionStarter{Client: sfn.NewFromConfig(awsfake.Config(w.sfn.URL)), StateMachineARN: machineARN, Store: w.openStore(), Log: discard()}
}

// failingRecords is the stream-router behind the control stream's
// mapping: it fails every batch holding a record faults.failRecord
// chooses.
func (w *world) failingRecords(invoke ddbstream.Invoke) ddbstream.Invoke {
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		w.mu.Lock()
		fail := w.faults.failRecord
		w.mu.Unlock()
		if fail != nil {
			var ev events.DynamoDBEvent
			if err := json.Unmarshal(payload, &ev); err != nil {
				return nil, err
			}
			for _, r := range ev.Records {
				if fail(r) {
					return nil, fmt.Errorf("stream-router: record %s: %w", r.Change.SequenceNumber, errInjected)
				}
			}
		}
		return invoke(ctx, payload)
	}
}

// failFirst is invoke with its next *left invocations failing with msg
// before it runs (an injected fault), each counted in *failed.
func (w *world) failFirst(left, failed *int, msg string, invoke ddbstream.Invoke) ddbstream.Invoke {
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		w.mu.Lock()
		fail := *left > 0
		if fail {
			*left--
			*failed++
		}
		w.mu.Unlock()
		if fail {
			return nil, fmt.Errorf("%s: %w", msg, errInjected)
		}
		return invoke(ctx, payload)
	}
}

// isStepInsert says a control-stream record is a run's step timer armed:
// what starts an execution.
func isStepInsert(r events.DynamoDBEventRecord) bool {
	if r.EventName != "INSERT" {
		return false
	}
	item, err := ddbstore.DecodeLambda(ddbstore.RoleControl, r)
	it, ok := item.(ddbstore.TimerItem)
	return err == nil && ok && run.IsStep(it.Timer.Kind)
}

// alertRule is the bus route "alert-events" of deploy/terraform/eventbridge.tf
// (every event of the sources its pattern lists: the dispatcher routes
// them), read from the file so the two cannot part.
func alertRule(t *testing.T) func(awsfake.BusEvent) bool {
	t.Helper()
	path := filepath.Join(sfnlocal.RepoRoot(t), "deploy", "terraform", "eventbridge.tf")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The route's entry in local.routes: its key, then its pattern.
	m := regexp.MustCompile(`(?s)"alert-events"\s*=\s*\{[^}]*?pattern\s*=\s*jsonencode\(\{\s*source\s*=\s*\[([^\]]*)\]\s*\}\)`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("%s: the alert rule is not {source = [...]}: it changed shape", path)
	}
	sources := map[string]bool{}
	for _, q := range regexp.MustCompile(`"([^"]+)"`).FindAllSubmatch(m[1], -1) {
		sources[string(q[1])] = true
	}
	return func(be awsfake.BusEvent) bool { return sources[be.Source] }
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

// engine opens a passive engine on its own store and the world's clock,
// with the world's maintenance windows.
func (w *world) engine(o engine.Options) *engine.Engine {
	o.Store, o.Clock, o.Logger, o.Passive, o.Maintenance = w.openStore(), w.clk, discard(), true, w.windows
	if w.alertConfig != nil {
		o.Maintenance, o.MaintenanceFrom = nil, w.alertConfig.Maintenance
	}
	eng := engine.New(o)
	if err := eng.Open(w.ctx); err != nil {
		w.t.Fatal(err)
	}
	return eng
}

// renderedASL is deploy/statemachine.asl.json as Terraform renders it,
// with timeout as sfn_timeout_seconds.
func renderedASL(t *testing.T, timeout time.Duration) []byte {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(sfnlocal.RepoRoot(t), "deploy", "statemachine.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	def, err := awsrt.RenderASL(tmpl, awsrt.ASLVars{OrchestratorARN: orchestratorARN, TimeoutSeconds: int(timeout / time.Second), TriggerMaxAttempts: 3})
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

// executionEnded hears of an execution's end: Step Functions closes its
// name (a start with it is ExecutionAlreadyExists from then on).
func (w *world) executionEnded(r sfnlocal.Result) {
	w.mu.Lock()
	w.ended = append(w.ended, r)
	ex, known := w.executions[r.Name]
	expected := w.faults.expectEnd != nil && w.faults.expectEnd(r)
	w.mu.Unlock()
	if known {
		w.sfn.End(ex.ARN)
	}
	if r.Status != "SUCCEEDED" && !expected {
		w.fail("execution %s: %s %s: %s (states %v)", r.Name, r.Status, r.Error, r.Cause, r.States)
	}
}

// stopExecution stops the running execution of the run of pipeline with
// status (sfnlocal.Aborted: deleted, sfnlocal.TimedOut), and returns its
// name.
func (w *world) stopExecution(pipeline, status string) string {
	w.t.Helper()
	w.mu.Lock()
	name := ""
	for n, ex := range w.executions {
		var in struct {
			Run run.Key `json:"run"`
		}
		if json.Unmarshal([]byte(ex.Input), &in) == nil && in.Run.PipelineID == pipeline && !w.endedLocked(n) {
			name = n
		}
	}
	w.mu.Unlock()
	if name == "" {
		w.t.Fatalf("at %s: no running execution of %s", w.clk.Now().Format(time.RFC3339), pipeline)
	}
	if err := w.machine.Stop(name, status); err != nil {
		w.t.Fatal(err)
	}
	return name
}

func (w *world) endedLocked(name string) bool {
	for _, r := range w.ended {
		if r.Name == name {
			return true
		}
	}
	return false
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
// settleQuiet is how long each of settle's quiet rounds waits before the
// next look: a margin for a stream record written at the end of the last
// invocation to be readable. (The flake it was added for, a backfill
// period starting a Poll late, was a lost wake in the engine — a firing
// racing a run's end, fixed by backfill.WakeAt — not stream lag: with
// 60 ms quiet rounds it still failed.)
const settleQuiet = 5 * time.Millisecond

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
		if err := w.invoke.spinErr(); err != nil {
			w.t.Fatal(err)
		}
		moved := 0
		for _, m := range w.streams {
			res, err := m.Drain(w.ctx, 1000)
			if err != nil {
				w.t.Fatal(err)
			}
			for _, r := range res {
				if (r.Failed > 0 || r.Error != nil) && !errors.Is(r.Error, errInjected) {
					w.fail("at %s: a batch of %d records from %s: %d failed, error %v", w.clk.Now().Format(time.RFC3339), len(r.Records), r.Shard, r.Failed, r.Error)
				}
				moved += len(r.Records)
			}
		}
		for _, q := range []struct {
			m           *awsfake.SQSMapping
			concurrency int
		}{{w.slaReplay, slaReplayConcurrency}, {w.alerts, alertConcurrency}} {
			for range 1000 {
				n := w.pollQueue(q.m, q.concurrency)
				if n == 0 {
					break
				}
				moved += n
			}
		}
		w.mu.Lock()
		starts := w.pending
		w.pending = nil
		for _, ex := range starts {
			w.executions[ex.Name] = ex
			w.startedAt[ex.Name] = w.clk.Now()
		}
		w.mu.Unlock()
		for _, ex := range starts {
			var input any
			if err := json.Unmarshal([]byte(ex.Input), &input); err != nil {
				w.t.Fatal(err)
			}
			if err := w.machine.Start(sfnlocal.Execution{Name: ex.Name, Input: input, StartTime: w.startedAt[ex.Name]}); err != nil {
				w.t.Fatal(err)
			}
			moved++
		}
		if moved == 0 && w.invoke.activeCount() == 0 && w.machine.Running() == w.invoke.held() {
			// Quiet for a moment, not for two back-to-back polls: a record
			// a function just wrote reaches the stream's reader a little
			// later (more so on a loaded machine), and the world must not
			// move its clock past the timer that record arms.
			quiet++
			time.Sleep(settleQuiet)
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
	for _, q := range []string{alertQueue, slaDLQ} {
		if t, ok := w.sqs.NextVisible(q); ok {
			consider(t)
		}
	}
	for _, name := range w.toTimeOut(time.Time{}) {
		consider(w.deadline(name))
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
		for _, name := range w.toTimeOut(now) {
			if err := w.machine.Stop(name, sfnlocal.TimedOut); err != nil {
				w.t.Fatal(err)
			}
			w.mu.Lock()
			w.timedOut[name] = true
			w.mu.Unlock()
		}
		released := w.invoke.release(now)
		fired := w.sched.Fire(w.ctx, now)
		for _, f := range fired {
			if f.Lost {
				continue
			}
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

// toTimeOut are the running executions whose TimeoutSeconds has passed by
// now (zero now: every running execution, for its deadline).
func (w *world) toTimeOut(now time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for name, at := range w.startedAt {
		if w.timedOut[name] || w.endedLocked(name) {
			continue
		}
		if now.IsZero() || !at.Add(w.timeout).After(now) {
			out = append(out, name)
		}
	}
	return out
}

// deadline is when the execution name passes its TimeoutSeconds.
func (w *world) deadline(name string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.startedAt[name].Add(w.timeout)
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

// check fails the test with what went wrong on the way, and checks the
// alert path — every alert the bus's rule selected reached Slack exactly
// once — and the queues: nothing is left in the alert queue, the SLA DLQ
// (replayed) or their DLQs.
func (w *world) check() {
	w.t.Helper()
	w.checkAlerts()
	w.mu.Lock()
	defer w.mu.Unlock()
	for name := range streamRetries {
		if got, want := len(w.streamDLQ[name]), w.faults.expectDLQ[name]; got != want {
			w.t.Errorf("the %s mapping gave up on %d batches, want %d: %+v", name, got, want, w.streamDLQ[name])
		}
	}
	if len(w.errs) > 0 {
		w.t.Errorf("on the way:\n  %s", strings.Join(w.errs, "\n  "))
	}
}

// checkAlerts compares what the dispatcher posted with what the local
// runtime's Slack sink posts for the same alerts: each event the alert
// rule selected, once (by event id, in the bus's order), that a local
// default route sends (not silenced; an all-clear after an alert of its
// period), through slack.Sink on a store of its own. The same texts, as
// many times: no alert lost, none posted twice, none silenced posted.
func (w *world) checkAlerts() {
	w.t.Helper()
	isAlert := alertRule(w.t)
	ref := slacktest.New(w.t, slackToken)
	st, err := sqlite.Open(w.ctx, filepath.Join(w.t.TempDir(), "alerts.db"))
	if err != nil {
		w.t.Fatal(err)
	}
	defer st.Close()
	sink, err := slack.New(slack.Config{Channel: slackChannel, Token: alert.StaticSecret(slackToken), APIURL: ref.APIURL(),
		Threads: alert.StoreThreads{Store: st, Clock: w.clk}, Logger: discard()})
	if err != nil {
		w.t.Fatal(err)
	}
	seen := map[string]bool{}
	var alerts []event.Event
	for _, be := range w.eb.Events() {
		if !isAlert(be) {
			continue
		}
		pe, err := awsrt.ParseBusEvent(be.JSON)
		if err != nil {
			w.t.Fatal(err)
		}
		e, _, err := pe.Event(w.clk.Now())
		if err != nil {
			w.t.Fatal(err)
		}
		if seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		alerts = append(alerts, e)
	}
	// As a local default route takes them: not the events a silence or a
	// window covers (as the API marks them), an all-clear only after an
	// alert of its period.
	silencedBy, _, err := w.engine(engine.Options{}).SilencedBy(w.ctx, alerts)
	if err != nil {
		w.t.Fatal(err)
	}
	for i, e := range alerts {
		if silencedBy[i] != "" {
			continue
		}
		dec, err := alert.Decide(w.ctx, st, sink.Name(), alert.Match{}, e, nil, alert.DefaultSuppressFor)
		if err != nil {
			w.t.Fatal(err)
		}
		if !dec.Send {
			continue
		}
		if _, err := sink.Deliver(w.ctx, alert.NewAlert(e, sink.Name())); err != nil {
			w.t.Fatal(err)
		}
		if err := st.Commit(w.ctx, dec.Delivered(sink.Name(), alert.Match{}, e)); err != nil {
			w.t.Fatal(err)
		}
	}
	// Each post with the thread it is in (its first post's text) and
	// whether it is broadcast: a blocked alert in its root period's thread.
	texts := func(ps []slacktest.Post) []string {
		byTS := map[string]string{}
		for _, p := range ps {
			byTS[p.TS] = p.Text
		}
		out := make([]string, 0, len(ps))
		for _, p := range ps {
			line := p.Text + " | " + p.BlockText()
			if p.ThreadTS != "" {
				line += fmt.Sprintf(" | in the thread of %q, broadcast %v", byTS[p.ThreadTS], p.ReplyBroadcast)
			}
			out = append(out, line)
		}
		sort.Strings(out)
		return out
	}
	// The default route's channel: other routes a stored alert config
	// adds post elsewhere (their own test reads them).
	var posts []slacktest.Post
	for _, p := range w.slack.Posts() {
		if p.Channel == slackChannel {
			posts = append(posts, p)
		}
	}
	if got, want := texts(posts), texts(ref.Posts()); !slices.Equal(got, want) {
		w.t.Errorf("Slack posts on AWS:\n  %s\nwant (the local Slack sink, each alert once):\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	w.t.Logf("%d alerts posted to Slack's %s", len(posts), slackChannel)
	for _, q := range []string{alertQueue, alertDLQ, slaDLQ, slaDLQFinal} {
		if ms := w.sqs.Messages(q); len(ms) > 0 {
			w.t.Errorf("%d messages left in %s: %+v", len(ms), q, ms)
		}
	}
}

// invokeEndpoint serves Lambda's Invoke route for the state machine's
// Tasks: the orchestrator through lambda.NewHandler(...).Invoke, an error
// answered as Lambda answers one (X-Amz-Function-Error: Unhandled).
//
// An invocation whose `due` is after the clock is held until the world's
// clock gets to `due` truncated to the whole second: that is when its
// Wait state (TimestampPath $.nextAt) ends on Step Functions, which
// drops the fraction of a second. A step that arrives before its instant
// is the orchestrator's to answer; if it answers with the same step, the
// execution goes round Wait → Task → Choice at one instant, and the
// endpoint calls that a spin after spinLimit invocations of one step and
// due at one instant: it holds the invocation for good and settle fails
// the test naming the run, instead of letting it loop.
//
// throttle makes the next invocations refused as Lambda refuses one over
// its reserved concurrency: 429 TooManyRequestsException, the handler not
// run.
type invokeEndpoint struct {
	clk *clock.Virtual
	// handler is the orchestrator's handler; each invocation gets a Lambda
	// handler of its own (lambda.NewHandler's reuses one answer buffer: one
	// instance, one invocation at a time; concurrent ones are instances).
	handler any

	mu        sync.Mutex
	holds     []*hold
	active    int
	throttles int // the next invocations answered 429
	throttled int
	handled   int       // invocations the handler ran
	seenAt    time.Time // the instant seen counts at
	seen      map[string]int
	spin      error
	stopped   chan struct{}
	once      sync.Once
}

// spinLimit is how many invocations of one step with one due at one
// instant make a spin. A step is legitimately repeated at an instant by
// the Task's retries (4 attempts at most) and a new execution's, far
// below it.
const spinLimit = 25

type hold struct {
	at  time.Time // due, truncated to the second
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
	if !e.wait(r.Context(), in) {
		http.Error(w, "the test ended, or the execution was stopped", http.StatusServiceUnavailable)
		return
	}
	defer e.done()
	if e.throttle() {
		w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"Type":"User","message":"Rate Exceeded.","Reason":"ReservedFunctionConcurrentInvocationLimitExceeded"}`)
		return
	}
	out, err := lambda.NewHandler(e.handler).Invoke(r.Context(), body)
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

// wait holds an invocation whose Wait has not ended by the clock until
// release lets it go, and parks a spinning one for good; it is active
// from then until done. False: the test ended, or the caller went away
// (its execution was stopped).
func (e *invokeEndpoint) wait(ctx context.Context, in awsrt.StepInput) bool {
	at := in.Due.Truncate(time.Second)
	e.mu.Lock()
	if e.stopped == nil {
		e.stopped = make(chan struct{})
	}
	stopped := e.stopped
	now := e.clk.Now()
	if !at.After(now) {
		if e.count(in) <= spinLimit {
			e.active++
			e.mu.Unlock()
			return true
		}
		if e.spin == nil {
			e.spin = fmt.Errorf("at %s: the execution of run %s spins: invoked more than %d times at this instant (its Wait ended at %s, a whole second, before the step was due)",
				now.Format(time.RFC3339Nano), stepName(in), spinLimit, at.Format(time.RFC3339))
		}
		e.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-stopped:
		}
		return false
	}
	h := &hold{at: at, go_: make(chan struct{})}
	e.holds = append(e.holds, h)
	e.mu.Unlock()
	select {
	case <-h.go_:
		e.mu.Lock()
		e.count(in)
		e.mu.Unlock()
		return true // release counted it active
	case <-ctx.Done():
	case <-stopped:
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-h.go_:
		e.active-- // released as it went away
	default:
		e.holds = slices.DeleteFunc(e.holds, func(x *hold) bool { return x == h })
	}
	return false
}

// count counts an invocation of in's step at the clock's instant and
// returns how many there were; the lock is held.
func (e *invokeEndpoint) count(in awsrt.StepInput) int {
	now := e.clk.Now()
	if !e.seenAt.Equal(now) {
		e.seenAt, e.seen = now, map[string]int{}
	}
	e.seen[stepName(in)]++
	return e.seen[stepName(in)]
}

// stepName names a step for the spin count and its message.
func stepName(in awsrt.StepInput) string {
	return fmt.Sprintf("%s/%s/%s %s due %s", in.Run.PipelineID, in.Run.ScheduleID, in.Run.Period, in.Mode, in.Due.Format(time.RFC3339Nano))
}

func (e *invokeEndpoint) done() {
	e.mu.Lock()
	e.active--
	e.mu.Unlock()
}

// throttle says whether this invocation is refused, and counts it.
func (e *invokeEndpoint) throttle() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.throttles > 0 {
		e.throttles--
		e.throttled++
		return true
	}
	e.handled++
	return false
}

// throttleNext makes the next n invocations refused (429).
func (e *invokeEndpoint) throttleNext(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.throttles += n
}

// refused is how many invocations were refused (429).
func (e *invokeEndpoint) refused() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.throttled
}

func (e *invokeEndpoint) spinErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.spin
}

// release lets the invocations due by now go on, and says how many.
func (e *invokeEndpoint) release(now time.Time) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	kept := e.holds[:0]
	for _, h := range e.holds {
		if h.at.After(now) {
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
		if at.IsZero() || h.at.Before(at) {
			at = h.at
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
