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

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
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

// TestWatchdogLambdaReportsAMissedCronTick: a cron pipeline whose 09:00
// tick started nothing (its timer lost: no schedule fired) is
// SCHEDULE_MISSED once, through the Lambda entry point, on DynamoDB.
func TestWatchdogLambdaReportsAMissedCronTick(t *testing.T) {
	start := time.Date(2099, 3, 7, 8, 0, 0, 0, time.UTC)
	env := newWatchdogEnv(t, start)
	if _, err := env.eng.ApplyConfig(t.Context(), "nightly.yaml", []byte(nightlyPipeline)); err != nil {
		t.Fatal(err)
	}
	if err := env.store.Commit(t.Context(), store.Change{TimerDeletes: []store.TimerDelete{{Key: "cron/nightly"}}}); err != nil {
		t.Fatal(err)
	}
	env.clk.Set(start.Add(75 * time.Minute)) // 09:15
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
// (SLA_WARNING once), not before; a run's step timer is left alone.
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
		FnWatchdog:   "watchdog: missing required env vars: CONTROL_TABLE, JOBLOG_TABLE, RERUN_TABLE, EVENTS_TABLE",
	} {
		build := map[string]func(ctx context.Context, env Env) (any, error){FnSLAMonitor: SLAMonitorFromEnv, FnWatchdog: WatchdogFromEnv}[fn]
		if _, err := build(t.Context(), EnvOf(nil)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", fn, err, want)
		}
	}
	env := EnvOf(map[string]string{EnvControlTable: "c", EnvJobLogTable: "j", EnvRerunTable: "r", EnvEventsTable: "e", EnvStuckRunThreshold: "soon"})
	if _, err := WatchdogFromEnv(t.Context(), env); err == nil || !strings.Contains(err.Error(), "STUCK_RUN_THRESHOLD") {
		t.Errorf("a bad threshold: %v", err)
	}
}
