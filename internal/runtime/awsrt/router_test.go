package awsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/testenv/ddbstream"
	"github.com/interlockhq/interlock/internal/trigger"
)

// routerPipeline has a trigger rule on the data, a validation rule and
// post-run rules, so a sensor's decision exercises the rule engine.
const routerPipeline = `
pipeline: {id: orders, owner: data-eng}
schedule:
  trigger: {key: orders-landed, check: equals, field: status, value: ready}
validation:
  rules: [{key: orders-landed, check: gte, field: count, value: 100}]
job: {type: glue, config: {jobName: orders}, pollInterval: 1m}
`

// runningJobs is a job system whose jobs start and keep running.
type runningJobs struct{ starts atomic.Int64 }

func (j *runningJobs) Start(context.Context, trigger.Request) (trigger.Started, error) {
	return trigger.Started{JobRunID: fmt.Sprintf("jr-%d", j.starts.Add(1))}, nil
}

func (j *runningJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusRunning}, nil
}

// routerEnv is a deployment on DynamoDB Local with the stream-router
// behind its control and job-log streams, on a virtual clock.
type routerEnv struct {
	ddbEnv
	clk    *clock.Virtual
	eng    *engine.Engine // the router's (passive) engine
	router *Router
	jobs   *runningJobs
}

func newRouterEnv(t *testing.T) routerEnv {
	t.Helper()
	// A retention long enough that nothing dated t0 has expired by the
	// machine's clock: DynamoDB Local's TTL really deletes.
	env := routerEnv{ddbEnv: newDDBEnv(t, 20*365*24*time.Hour), clk: clock.NewVirtual(t0), jobs: &runningJobs{}}
	env.eng = engine.New(engine.Options{Store: env.store, Clock: env.clk, Jobs: noJobs{}, Passive: true})
	if err := env.eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := env.eng.ApplyConfig(t.Context(), "orders.yaml", []byte(routerPipeline)); err != nil {
		t.Fatal(err)
	}
	env.router = &Router{Engine: env.eng, Store: env.store, Tables: env.tables}
	return env
}

// mapping is the event source mapping of table's stream to the router,
// through the Lambda entry point, from the stream's start.
func (env routerEnv) mapping(t *testing.T, table string) *ddbstream.Mapping {
	t.Helper()
	arn, err := ddbstream.StreamARN(t.Context(), env.client, table)
	if err != nil {
		t.Fatal(err)
	}
	return ddbstream.New(ddbstream.FromDynamoDB(env.client), arn, 10, lambda.NewHandler(env.router.Handle).Invoke)
}

// capture is the batch the platform would deliver from table's stream
// (up to 10 records), without handing it to the router.
func (env routerEnv) capture(t *testing.T, table string) events.DynamoDBEvent {
	t.Helper()
	var batch events.DynamoDBEvent
	arn, err := ddbstream.StreamARN(t.Context(), env.client, table)
	if err != nil {
		t.Fatal(err)
	}
	c := ddbstream.New(ddbstream.FromDynamoDB(env.client), arn, 10, func(_ context.Context, payload []byte) ([]byte, error) {
		return []byte(`{}`), json.Unmarshal(payload, &batch)
	})
	if _, err := c.Drain(t.Context(), 10); err != nil {
		t.Fatal(err)
	}
	return batch
}

// drainAll delivers every record of the mapping and fails on any record
// failure: the router fails a record only when it may pass on retry.
func drainAll(t *testing.T, m *ddbstream.Mapping) int {
	t.Helper()
	res, err := m.Drain(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range res {
		if r.Failed > 0 || r.Error != nil {
			t.Fatalf("batch of %d: %d failed, error %v", len(r.Records), r.Failed, r.Error)
		}
		n += len(r.Records)
	}
	return n
}

// putItem writes an item the way a user's own code would.
func putItem(t *testing.T, c *dynamodb.Client, table string, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatal(err)
	}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// decided is what a decision left in a store, comparable across stores:
// runs (key, state, attempt) and events (type, pipeline, period, message,
// detail; ids are random and positions are per store).
func decided(t *testing.T, st store.Store, pipelineID string) (runs []string, evs []string) {
	t.Helper()
	rs, err := st.RunList(t.Context(), store.RunListParams{PipelineID: pipelineID})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		runs = append(runs, fmt.Sprintf("%s %s attempt %d next %v", r.Key, r.State, r.Attempt, r.StateSince.Format(time.RFC3339)))
	}
	page, err := st.EventList(t.Context(), store.EventListParams{PipelineID: pipelineID})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page.Events {
		d, _ := json.Marshal(e.Detail)
		evs = append(evs, fmt.Sprintf("%s %s %s/%s %s %s %s", e.Time.Format(time.RFC3339Nano), e.Type, e.ScheduleID, e.Date, e.Message, d, e.Level()))
	}
	return runs, evs
}

// TestRouterDecidesAsTheLocalRuntime is the acceptance test of the
// stream-router: sensors written with the AWS SDK into DynamoDB Local
// (flat and under data), read back from the table's real stream and fed
// to the router through its Lambda entry point, decide what the local
// runtime decides for the same writes — the same runs and the same events.
// Items that cannot be sensors are reported once each and fail nothing;
// the whole stream delivered again decides nothing more.
func TestRouterDecidesAsTheLocalRuntime(t *testing.T) {
	env := newRouterEnv(t)
	ctrl := env.tables.Control

	// The local runtime, on SQLite, at the same instant.
	local := engine.New(engine.Options{Store: sqliteStore(t), Clock: env.clk, Jobs: noJobs{}})
	if err := local.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := local.ApplyConfig(t.Context(), "orders.yaml", []byte(routerPipeline)); err != nil {
		t.Fatal(err)
	}

	// Not ready yet (flat fields), then ready with too few rows (under
	// data), then ready for a second period: each write a decision.
	writes := []struct {
		key  string
		item map[string]types.AttributeValue
		data sensor.Object
	}{
		{"orders-landed", map[string]types.AttributeValue{"status": s("loading"), "count": n("10"), "date": s("2099-03-07")},
			run.Detail("status", "loading", "count", 10, "date", "2099-03-07")},
		{"orders-landed", map[string]types.AttributeValue{"data": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"status": s("ready"), "count": n("42"), "date": s("2099-03-07")}}},
			run.Detail("status", "ready", "count", 42, "date", "2099-03-07")},
		{"orders-landed#2099-03-06", map[string]types.AttributeValue{"status": s("ready"), "count": n("9007199254740993")},
			run.Detail("status", "ready", "count", sensor.Value{})},
	}
	exact, err := sensor.ParseNumber("9007199254740993")
	if err != nil {
		t.Fatal(err)
	}
	writes[2].data = sensor.NewObject(map[string]sensor.Value{"status": sensor.StringValue("ready"), "count": exact})

	m := env.mapping(t, ctrl)
	for i, w := range writes {
		item := map[string]types.AttributeValue{"PK": s("PIPELINE#orders"), "SK": s("SENSOR#" + w.key)}
		for k, v := range w.item {
			item[k] = v
		}
		putItem(t, env.client, ctrl, item)
		if got := drainAll(t, m); got == 0 {
			t.Fatalf("write %d: no stream record reached the router", i+1)
		}
		if _, err := local.PutSensor(t.Context(), "orders", w.key, w.data); err != nil {
			t.Fatal(err)
		}
		env.clk.Advance(time.Minute)
	}

	// Items that cannot be sensors: data that is not a map, a pipeline
	// nobody configured.
	putItem(t, env.client, ctrl, map[string]types.AttributeValue{"PK": s("PIPELINE#orders"), "SK": s("SENSOR#broken"), "data": s("not a map")})
	putItem(t, env.client, ctrl, map[string]types.AttributeValue{"PK": s("PIPELINE#ghost"), "SK": s("SENSOR#landed"), "status": s("ready")})
	drainAll(t, m)

	awsRuns, awsEvents := decided(t, env.store, "orders")
	localRuns, localEvents := decided(t, local.Store(), "orders")
	var awsDecided []string
	for _, e := range awsEvents {
		if !strings.Contains(e, string(event.SensorRejected)) {
			awsDecided = append(awsDecided, e)
		}
	}
	if len(localRuns) == 0 || len(localEvents) == 0 {
		t.Fatalf("the local runtime decided nothing (runs %v, events %v): the comparison would be empty", localRuns, localEvents)
	}
	if strings.Join(awsRuns, "\n") != strings.Join(localRuns, "\n") {
		t.Errorf("runs differ:\naws:\n%s\nlocal:\n%s", strings.Join(awsRuns, "\n"), strings.Join(localRuns, "\n"))
	}
	if strings.Join(awsDecided, "\n") != strings.Join(localEvents, "\n") {
		t.Errorf("events differ:\naws:\n%s\nlocal:\n%s", strings.Join(awsDecided, "\n"), strings.Join(localEvents, "\n"))
	}
	for _, st := range []store.Store{env.store, local.Store()} {
		got, err := st.SensorGet(t.Context(), "orders", "orders-landed#2099-03-06")
		if err != nil || !got.Data.Equal(writes[2].data) {
			t.Errorf("the 2^53+1 sensor reads back as %v (%v)", got.Data, err)
		}
	}
	rejected := func() []string {
		var out []string
		for _, id := range []string{"orders", "ghost"} {
			page, err := env.store.EventList(t.Context(), store.EventListParams{PipelineID: id, Types: []event.Type{event.SensorRejected}})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Events {
				out = append(out, e.Message)
			}
		}
		return out
	}
	got := rejected()
	if len(got) != 2 || !strings.Contains(got[0], "PIPELINE#orders / SENSOR#broken") || !strings.Contains(got[1], "PIPELINE#ghost / SENSOR#landed") || !strings.Contains(got[1], "unknown pipeline") {
		t.Fatalf("SENSOR_REJECTED: %q", got)
	}

	// The whole stream again (a new mapping starts at the stream's
	// start): nothing is decided twice, and no sensor goes back to older
	// content — the router decides an item's current content, not the
	// record's (a replayed old write is not new data).
	before, err := env.store.SensorGet(t.Context(), "orders", "orders-landed")
	if err != nil {
		t.Fatal(err)
	}
	if n := drainAll(t, env.mapping(t, ctrl)); n < len(writes)+2 {
		t.Fatalf("redelivered %d records, want at least %d", n, len(writes)+2)
	}
	againRuns, againEvents := decided(t, env.store, "orders")
	if strings.Join(againRuns, "\n") != strings.Join(awsRuns, "\n") || strings.Join(againEvents, "\n") != strings.Join(awsEvents, "\n") {
		t.Errorf("redelivery decided again:\nbefore:\n%s\nafter:\n%s", strings.Join(awsEvents, "\n"), strings.Join(againEvents, "\n"))
	}
	after, err := env.store.SensorGet(t.Context(), "orders", "orders-landed")
	if err != nil || !after.ChangedAt.Equal(before.ChangedAt) || !after.Data.Equal(before.Data) {
		t.Errorf("redelivery rewrote the sensor: %+v, was %+v (%v)", after, before, err)
	}
	if again := rejected(); len(again) != 2 {
		t.Errorf("redelivery reported refused items again: %q", again)
	}
}

// TestRouterFailsOnlyTheRecordThatMayPass: in one batch, a record the
// router cannot handle now (it comes from a table of another deployment)
// is the only batch item failure; the records around it are decided.
func TestRouterFailsOnlyTheRecordThatMayPass(t *testing.T) {
	env := newRouterEnv(t)
	ctrl := env.tables.Control
	for _, st := range []string{"loading", "ready"} {
		putItem(t, env.client, ctrl, map[string]types.AttributeValue{"PK": s("PIPELINE#orders"), "SK": s("SENSOR#orders-landed"), "status": s(st), "count": n("500"), "date": s("2099-03-07")})
	}
	putItem(t, env.client, ctrl, map[string]types.AttributeValue{"PK": s("PIPELINE#orders"), "SK": s("SENSOR#other"), "x": n("1")})

	// Capture the platform's batch, then hand it to the router with the
	// middle record's source changed.
	batch := env.capture(t, ctrl)
	// The pipeline's config, then the three sensor writes.
	if len(batch.Records) != 4 {
		t.Fatalf("captured %d records, want 4", len(batch.Records))
	}
	poison := batch.Records[1].Change.SequenceNumber
	batch.Records[1].EventSourceArn = strings.Replace(batch.Records[1].EventSourceArn, ctrl, "someone-else-control", 1)
	payload, _ := json.Marshal(batch)
	out, err := lambda.NewHandler(env.router.Handle).Invoke(t.Context(), payload)
	if err != nil {
		t.Fatal(err)
	}
	var resp events.DynamoDBEventResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != poison {
		t.Fatalf("batch item failures %+v, want only %s", resp.BatchItemFailures, poison)
	}
	// The record after the poison one was decided: its sensor is stored.
	if _, err := env.store.SensorGet(t.Context(), "orders", "other"); err != nil {
		t.Fatalf("the record after the failed one: %v", err)
	}
	if _, err := env.store.RunGet(t.Context(), run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2099-03-07"}); err != nil {
		t.Fatalf("the ready sensor started no run: %v", err)
	}
}

// TestRouterJobLogAndRerunRequests: a job's own failure reports, written
// into the job-log table, retry its run within the budget and then end it;
// a rerun request
// item reopens the period; each delivered twice decides once, and a job
// report for an unknown pipeline is reported, not retried.
func TestRouterJobLogAndRerunRequests(t *testing.T) {
	env := newRouterEnv(t)
	ctx := t.Context()
	key := run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2099-03-07"}
	// Start the run and its job on an active engine of the same store
	// (the orchestrator's part on AWS).
	steps := engine.New(engine.Options{Store: env.store, Clock: env.clk, Jobs: env.jobs})
	if err := steps.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := steps.PutSensor(ctx, "orders", "orders-landed", run.Detail("status", "ready", "count", 500, "date", "2099-03-07")); err != nil {
		t.Fatal(err)
	}
	if _, err := steps.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := env.store.RunGet(ctx, key)
	if err != nil || r.State != run.Running {
		t.Fatalf("run %s %v, want RUNNING", r.State, err)
	}

	jl := env.mapping(t, env.tables.JobLog)
	report := func(at time.Time, jobRunID string) {
		t.Helper()
		putItem(t, env.client, env.tables.JobLog, map[string]types.AttributeValue{
			"PK": s("PIPELINE#orders"), "SK": s(fmt.Sprintf("JOB#stream#2099-03-07#%d", at.UnixMilli())),
			"event": s("fail"), "category": s("PERMANENT"), "message": s("table not found"), "runId": s(jobRunID)})
	}
	// The first failure: PERMANENT has one retry (maxCodeRetries 1).
	report(env.clk.Now().Add(30*time.Second), r.JobRunID)
	putItem(t, env.client, env.tables.JobLog, map[string]types.AttributeValue{
		"PK": s("PIPELINE#ghost"), "SK": s(fmt.Sprintf("JOB#stream#2099-03-07#%d", env.clk.Now().UnixMilli())), "event": s("success")})
	drainAll(t, jl)
	drainAll(t, env.mapping(t, env.tables.JobLog)) // all of it again
	if r, _ := env.store.RunGet(ctx, key); r.State != run.Triggering {
		t.Fatalf("after the job's first failure report: %s, want TRIGGERING (a retry)", r.State)
	}
	if _, err := steps.RunDue(ctx); err != nil { // the retry's trigger
		t.Fatal(err)
	}
	retry, _ := env.store.RunGet(ctx, key)
	if retry.State != run.Running || retry.JobRunID == r.JobRunID {
		t.Fatalf("the retry: %s job %q", retry.State, retry.JobRunID)
	}
	// The retry fails too: the budget is spent.
	report(env.clk.Now().Add(time.Minute), retry.JobRunID)
	drainAll(t, jl)
	drainAll(t, env.mapping(t, env.tables.JobLog))
	if r, _ := env.store.RunGet(ctx, key); r.State != run.FailedFinal {
		t.Fatalf("after the retry's failure report: %s, want FAILED_FINAL", r.State)
	}
	count := func(id string, typ event.Type) int {
		page, err := env.store.EventList(ctx, store.EventListParams{PipelineID: id, Types: []event.Type{typ}})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Events)
	}
	if c := count("orders", event.JobFailed); c != 2 {
		t.Fatalf("%d JOB_FAILED, want 2", c)
	}
	if c := count("orders", event.RetryExhausted); c != 1 {
		t.Fatalf("%d RETRY_EXHAUSTED, want 1", c)
	}
	if c := count("ghost", event.JobReportRejected); c != 1 {
		t.Fatalf("%d JOB_REPORT_REJECTED for the unknown pipeline, want 1", c)
	}

	ctrl := env.mapping(t, env.tables.Control)
	drainAll(t, ctrl) // the sensor written above
	putItem(t, env.client, env.tables.Control, map[string]types.AttributeValue{
		"PK": s("PIPELINE#orders"), "SK": s("RERUN_REQUEST#stream#2099-03-07"), "reason": s("manual"), "requestId": s("ticket-42")})
	drainAll(t, ctrl)
	drainAll(t, env.mapping(t, env.tables.Control))
	if c := count("orders", event.RerunAccepted); c != 1 {
		t.Fatalf("%d RERUN_ACCEPTED, want 1", c)
	}
	if r, _ := env.store.RunGet(ctx, key); r.State == run.FailedFinal {
		t.Fatalf("the accepted rerun did not reopen the period")
	}
}
