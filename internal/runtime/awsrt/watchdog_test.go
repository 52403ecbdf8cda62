package awsrt

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
)

// scheduledEvent is what an EventBridge scheduled rule sends.
const scheduledEvent = `{"version":"0","id":"53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa","detail-type":"Scheduled Event","source":"aws.events",
"account":"123456789012","time":"2099-03-07T09:15:00Z","region":"us-east-1","resources":["arn:aws:events:us-east-1:123456789012:rule/interlock-watchdog"],"detail":{}}`

const nightlyPipeline = `
pipeline: {id: nightly}
schedule: {cron: "0 9 * * *"}
validation: {rules: [{key: x, check: exists}]}
job: {type: glue, config: {jobName: j}}
`

type watchdogEnv struct {
	ddbEnv
	clk    *clock.Virtual
	eng    *engine.Engine
	invoke func(payload []byte) (WatchdogResult, error)
}

func newWatchdogEnv(t *testing.T, start time.Time) watchdogEnv {
	t.Helper()
	env := watchdogEnv{ddbEnv: newDDBEnv(t, 20*365*24*time.Hour), clk: clock.NewVirtual(start)}
	env.eng = engine.New(engine.Options{Store: env.store, Clock: env.clk, Jobs: noJobs{}, Passive: true})
	if err := env.eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	h := lambda.NewHandler((&Watchdog{Engine: env.eng, StuckRunThreshold: 30 * time.Minute, Clock: env.clk}).Handle)
	env.invoke = func(payload []byte) (WatchdogResult, error) {
		var res WatchdogResult
		out, err := h.Invoke(t.Context(), payload)
		if err == nil {
			err = json.Unmarshal(out, &res)
		}
		return res, err
	}
	return env
}

func (env watchdogEnv) count(t *testing.T, pipelineID string, typ event.Type) int {
	t.Helper()
	page, err := env.store.EventList(t.Context(), store.EventListParams{PipelineID: pipelineID, Types: []event.Type{typ}})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Events)
}

// missedCronTick is the nightly pipeline whose 09:00 timer was lost (no
// schedule fired), the clock at 09:15; start is 08:00.
func missedCronTick(t *testing.T) (env watchdogEnv, start time.Time) {
	t.Helper()
	start = time.Date(2099, 3, 7, 8, 0, 0, 0, time.UTC)
	env = newWatchdogEnv(t, start)
	if _, err := env.eng.ApplyConfig(t.Context(), "nightly.yaml", []byte(nightlyPipeline)); err != nil {
		t.Fatal(err)
	}
	if err := env.store.Commit(t.Context(), store.Change{TimerDeletes: []store.TimerDelete{{Key: "cron/nightly"}}}); err != nil {
		t.Fatal(err)
	}
	env.clk.Set(start.Add(75 * time.Minute)) // 09:15
	return env, start
}

// TestWatchdogLambdaReportsAMissedCronTick: a cron pipeline whose 09:00
// tick started nothing (its timer lost: no schedule fired) is
// SCHEDULE_MISSED once, through the Lambda entry point, on DynamoDB.
func TestWatchdogLambdaReportsAMissedCronTick(t *testing.T) {
	env, start := missedCronTick(t)
	res, err := env.invoke([]byte(scheduledEvent))
	if err != nil {
		t.Fatal(err)
	}
	if n := env.count(t, "nightly", event.ScheduleMissed); n != 1 || !contains(res.Raised, string(event.ScheduleMissed)) {
		t.Fatalf("SCHEDULE_MISSED = %d, raised %v", n, res.Raised)
	}
	env.clk.Set(start.Add(80 * time.Minute))
	if _, err := env.invoke([]byte(scheduledEvent)); err != nil {
		t.Fatal(err)
	}
	if n := env.count(t, "nightly", event.ScheduleMissed); n != 1 {
		t.Fatalf("SCHEDULE_MISSED = %d after a second pass, want 1", n)
	}
}

// TestWatchdogLambdaSweepsOverdueTimers: an SLA timer whose schedule
// never fired is processed by the pass once it is five minutes late
// (SLA_WARNING once), not before; a run's step timer is not processed
// (it is handed to a new execution: TestWatchdogResumesOrphanedRuns).
func TestWatchdogLambdaSweepsOverdueTimers(t *testing.T) {
	start := time.Date(2099, 3, 7, 5, 0, 0, 0, time.UTC)
	env := newWatchdogEnv(t, start)
	// Warning at 06:30, before the run's time-to-live (07:30) ends it.
	early := strings.Replace(slaPipeline, `deadline: "09:00", expectedDuration: 1h`, `deadline: "07:00", expectedDuration: 30m`, 1)
	if _, err := env.eng.ApplyConfig(t.Context(), "sales.yaml", []byte(early)); err != nil {
		t.Fatal(err)
	}
	// The 06:00 tick runs (its schedule fired); the SLA timers' schedules
	// never do.
	env.clk.Set(start.Add(time.Hour))
	if _, err := env.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	env.clk.Set(start.Add(94 * time.Minute)) // 06:34: the warning is 4 minutes late
	res, err := env.invoke([]byte(scheduledEvent))
	if err != nil || res.Swept != 0 || env.count(t, "sales", event.SLAWarning) != 0 {
		t.Fatalf("at 06:34: %+v %v, SLA_WARNING %d", res, err, env.count(t, "sales", event.SLAWarning))
	}
	env.clk.Set(start.Add(96 * time.Minute))
	res, err = env.invoke([]byte(scheduledEvent))
	if err != nil || res.Swept != 1 || env.count(t, "sales", event.SLAWarning) != 1 {
		t.Fatalf("at 06:36: %+v %v, SLA_WARNING %d", res, err, env.count(t, "sales", event.SLAWarning))
	}
	if _, err := env.store.TimerGet(t.Context(), "step/sales/cron/2099-03-07"); err != nil {
		t.Fatalf("the run's step timer: %v", err)
	}
}

// TestWatchdogLambdaDegraded: a pass whose data cannot be read (the
// timers-by-kind index is gone) records WATCHDOG_DEGRADED and fails the
// invocation, naming the failed checks.
func TestWatchdogLambdaDegraded(t *testing.T) {
	start := time.Date(2099, 3, 7, 8, 0, 0, 0, time.UTC)
	env := newWatchdogEnv(t, start)
	if _, err := env.eng.ApplyConfig(t.Context(), "nightly.yaml", []byte(nightlyPipeline)); err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.UpdateTable(t.Context(), &dynamodb.UpdateTableInput{TableName: aws.String(env.tables.Control),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String("timers-by-kind")}}}}); err != nil {
		t.Fatal(err)
	}
	// Wait until the index is gone: writes while it is being deleted can
	// fail on DynamoDB Local. One DynamoDB Local shared by every package's
	// tables deletes an index slowly on a loaded machine, so the deadline
	// is generous: it only stops a test that would never pass.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		d, err := env.client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(env.tables.Control)})
		if err != nil {
			t.Fatal(err)
		}
		gone := d.Table.TableStatus == types.TableStatusActive
		for _, g := range d.Table.GlobalSecondaryIndexes {
			gone = gone && aws.ToString(g.IndexName) != "timers-by-kind"
		}
		if gone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the index is still there after 3 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, err := env.invoke([]byte(scheduledEvent))
	if err == nil || !strings.Contains(err.Error(), "degraded") {
		t.Fatalf("degraded pass: %v %+v", err, res)
	}
	page, lerr := env.store.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.WatchdogDegraded}})
	if lerr != nil || len(page.Events) != 1 {
		t.Fatalf("WATCHDOG_DEGRADED: %v %v", page.Events, lerr)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestSLAMonitorAndWatchdogNeedTheirVariables: each function refuses to
// start without its variables, naming them; a bad threshold is refused.
func TestSLAMonitorAndWatchdogNeedTheirVariables(t *testing.T) {
	for fn, want := range map[string]string{
		FnSLAMonitor: "sla-monitor: missing required env vars: CONTROL_TABLE, JOBLOG_TABLE, RERUN_TABLE, EVENTS_TABLE, SCHEDULER_GROUP_NAME, SCHEDULER_ROLE_ARN, SLA_MONITOR_ARN, SLA_DLQ_ARN",
		FnWatchdog:   "watchdog: missing required env vars: CONTROL_TABLE, JOBLOG_TABLE, RERUN_TABLE, EVENTS_TABLE, STATE_MACHINE_ARN",
	} {
		build := map[string]func(ctx context.Context, env Env) (any, error){FnSLAMonitor: SLAMonitorFromEnv, FnWatchdog: WatchdogFromEnv}[fn]
		if _, err := build(t.Context(), EnvOf(nil)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", fn, err, want)
		}
	}
	env := EnvOf(map[string]string{EnvControlTable: "c", EnvJobLogTable: "j", EnvRerunTable: "r", EnvEventsTable: "e", EnvStateMachineARN: "arn", EnvStuckRunThreshold: "soon"})
	if _, err := WatchdogFromEnv(t.Context(), env); err == nil || !strings.Contains(err.Error(), "STUCK_RUN_THRESHOLD") {
		t.Errorf("a bad threshold: %v", err)
	}
	// The orchestrator starts executions' successors: it needs the state
	// machine too.
	if _, err := OrchestratorFromEnv(t.Context(), EnvOf(nil)); err == nil || err.Error() != "orchestrator: missing required env vars: CONTROL_TABLE, JOBLOG_TABLE, RERUN_TABLE, EVENTS_TABLE, STATE_MACHINE_ARN" {
		t.Errorf("orchestrator: %v", err)
	}
}

// TestWatchdogResumesOrphanedRuns: a run whose step has no execution
// behind it (the stream record that should have started one was dropped)
// is handed to a new execution once its step is five minutes overdue, not
// before, through the real SDK client against the Step Functions fake:
// one execution, named for the handoff's instant, however many passes run
// and though the stream-router starts it again from the handoff's record.
// The new execution takes the step; an old execution that was only slow
// wakes superseded and takes nothing: the job starts once.
func TestWatchdogResumesOrphanedRuns(t *testing.T) {
	start := time.Date(2099, 3, 7, 8, 0, 0, 0, time.UTC)
	env := newWatchdogEnv(t, start)
	ctx := t.Context()
	if _, err := env.eng.ApplyConfig(ctx, "orders.yaml", []byte(routerPipeline)); err != nil {
		t.Fatal(err)
	}
	if _, err := env.eng.PutSensor(ctx, "orders", "orders-landed", run.Detail("status", "ready", "count", 500, "date", "2099-03-07")); err != nil {
		t.Fatal(err)
	}
	key := run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2099-03-07"}
	armed, err := env.eng.Current(ctx, key)
	if err != nil || armed.Next != run.StepTrigger {
		t.Fatalf("the run's step: %+v %v, want its trigger now", armed, err)
	}
	fake := awsfake.NewStepFunctions(t)
	starter := &ExecutionStarter{Client: sfn.NewFromConfig(awsfake.Config(fake.URL)), StateMachineARN: fake.AddStateMachine("interlock-runs"), Store: env.store}
	h := lambda.NewHandler((&Watchdog{Engine: env.eng, StuckRunThreshold: time.Hour, Clock: env.clk, Executions: starter}).Handle)
	pass := func() WatchdogResult {
		t.Helper()
		out, err := h.Invoke(ctx, []byte(scheduledEvent))
		if err != nil {
			t.Fatal(err)
		}
		var res WatchdogResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}

	env.clk.Set(start.Add(DefaultOverdue - time.Second))
	if res := pass(); res.Resumed != 0 || len(fake.Executions()) != 0 {
		t.Fatalf("inside the grace: %+v, %d executions; want none", res, len(fake.Executions()))
	}
	env.clk.Set(start.Add(DefaultOverdue))
	handedAt := env.clk.Now()
	if res := pass(); res.Resumed != 1 {
		t.Fatalf("past the grace: %+v, want the run resumed", res)
	}
	env.clk.Advance(time.Minute)
	if res := pass(); res.Resumed != 0 {
		t.Fatalf("a second pass: %+v, want nothing (the step is due again only since the handoff)", res)
	}
	stored, err := env.store.TimerGet(ctx, "step/orders/stream/2099-03-07")
	if err != nil {
		t.Fatal(err)
	}
	if err := starter.TimerRecord(ctx, "MODIFY", ddbstore.TimerItem{Timer: stored}); err != nil {
		t.Fatal(err)
	}
	exs := fake.Executions()
	if len(exs) != 1 || exs[0].Name != ExecutionName(key, 0, handedAt) {
		t.Fatalf("executions %+v, want one, named for the handoff at %s", exs, handedAt)
	}
	var in StepOutput
	if err := json.Unmarshal([]byte(exs[0].Input), &in); err != nil {
		t.Fatal(err)
	}
	if in.Next != ModeTrigger || in.NextAt != handedAt.Format(time.RFC3339) {
		t.Fatalf("the execution's input %+v, want the trigger step at the handoff", in)
	}

	jobs := &runningJobs{}
	o := &Orchestrator{Engine: engine.New(engine.Options{Store: env.store, Clock: env.clk, Jobs: jobs, Passive: true})}
	invoke := func(in StepInput) StepOutput { t.Helper(); return handleStep(t, o, in) }
	// The slow old execution arrives first, holding the run by its armed
	// stamp: superseded, it takes nothing.
	if out := invoke(StepInput{Mode: ModeTrigger, StepRef: engine.StepRef{Run: key, Due: armed.NextAt, Since: armed.Since}}); !out.Done || out.Acted {
		t.Fatalf("the old execution: %+v, want done, no step", out)
	}
	// Even at the step's current due time, its stamp (StepRef.Since,
	// passed on to the engine) keeps it from the run.
	if out := invoke(StepInput{Mode: ModeTrigger, StepRef: engine.StepRef{Run: key, Due: handedAt, Since: armed.Since}}); !out.Done || out.Acted {
		t.Fatalf("the old execution at the current due time: %+v, want done, no step", out)
	}
	since, _ := time.Parse(time.RFC3339Nano, in.Since)
	if out := invoke(StepInput{Mode: ModeTrigger, StepRef: engine.StepRef{Run: key, Due: handedAt, Since: since}}); !out.Acted || out.Next != ModePoll {
		t.Fatalf("the resumed execution: %+v, want the job started", out)
	}
	if n := jobs.starts.Load(); n != 1 {
		t.Fatalf("%d job starts, want 1", n)
	}
}
