package awsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/testenv/ddbstream"
)

// commitEvents commits n events of several pipelines through the store,
// a few per Change as the engine does, plus alert bookkeeping (items of
// the events table that are not events), and returns them.
func commitEvents(t *testing.T, st store.Store, n int) []event.Event {
	t.Helper()
	ctx := context.Background()
	pipelines := []string{"orders", "billing", "ledger"}
	var all []event.Event
	for i := 0; i < n; i += 3 {
		var c store.Change
		for j := i; j < min(i+3, n); j++ {
			p := pipelines[j%len(pipelines)]
			e := event.Event{ID: fmt.Sprintf("ev-%02d", j), Time: t0.Add(time.Duration(j) * time.Minute), Type: event.JobTriggered,
				PipelineID: p, ScheduleID: "cron", Date: "2099-03-07", Message: fmt.Sprintf("event %d of %s", j, p)}
			c.Events = append(c.Events, e)
			all = append(all, e)
		}
		if err := st.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Commit(ctx, store.Change{AlertThreads: []store.AlertThread{{Sink: "slack:C1", Key: alertKey(), TS: "1.2", Channel: "C1", At: t0}}}); err != nil {
		t.Fatal(err)
	}
	return all
}

// received groups the events the fake accepted by eventId, checking each
// is an Interlock event on the test bus.
func received(t *testing.T, eb *awsfake.EventBridge) map[string][]BusDetail {
	t.Helper()
	got := map[string][]BusDetail{}
	for _, e := range eb.Events() {
		var d BusDetail
		if err := json.Unmarshal(e.Detail, &d); err != nil || e.Source != "interlock" || e.Bus != testBus {
			t.Fatalf("bus event %+v: %v", e, err)
		}
		if string(d.Level) == "" || d.Timestamp == "" || e.DetailType != string(event.JobTriggered) {
			t.Fatalf("detail %s", e.Detail)
		}
		got[d.EventID] = append(got[d.EventID], d)
	}
	return got
}

func eventsStream(t *testing.T, env ddbEnv, invoke ddbstream.Invoke, batch int) *ddbstream.Mapping {
	t.Helper()
	arn, err := ddbstream.StreamARN(context.Background(), env.client, env.tables.Events)
	if err != nil {
		t.Fatal(err)
	}
	return ddbstream.New(ddbstream.FromDynamoDB(env.client), arn, batch, invoke)
}

// publisherProcess is the event-publisher function as a process of its
// own — this test binary started as the function (TestMain) — on a local
// Lambda Runtime API, configured by its environment like the deployed
// one.
func publisherProcess(t *testing.T, env ddbEnv, eb *awsfake.EventBridge) *awsfake.Function {
	return awsfake.NewFunction(t, 30*time.Second, func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			helperEnv+"="+FnEventPublisher,
			EnvEventBus+"="+testBus, EnvEventsTable+"="+env.tables.Events,
			"AWS_ENDPOINT_URL_EVENTBRIDGE="+eb.URL, "AWS_REGION="+awsfake.Region,
			"AWS_ACCESS_KEY_ID=AKIDFAKE", "AWS_SECRET_ACCESS_KEY=fake-secret", "AWS_EC2_METADATA_DISABLED=true",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
		return cmd
	})
}

// TestOutboxPublisherKilledBetweenPutEventsAndItsCheckpoint runs the
// publisher as a real process fed by the events table's real stream, and
// kills it three times: while EventBridge is answering a PutEvents it
// already accepted, and when it hands back its answer after every
// PutEvents returned — neither invocation returns, so the stream's
// checkpoint does not move — and right after its answer was taken (the
// checkpoint moves: whatever the function had left to do is lost). Each
// restart is a cold start. Every event reaches the bus at least once, the
// ones published twice carry the same eventId and detail, and nothing else
// is published.
func TestOutboxPublisherKilledBetweenPutEventsAndItsCheckpoint(t *testing.T) {
	ctx := context.Background()
	env := newDDBEnv(t, 0)
	committed := commitEvents(t, env.store, 30)
	eb := awsfake.NewEventBridge(t, clock.NewVirtual(t0), testBus)
	fn := publisherProcess(t, env, eb)

	var once sync.Once
	eb.OnAccept(func([]awsfake.BusEvent) { once.Do(fn.Kill) }) // kill 1: mid-PutEvents
	m := eventsStream(t, env, fn.Invoke, 10)
	fn.Start()
	restarts, armed := 0, 0
	for round := 0; ; round++ {
		if round > 30 {
			t.Fatal("the stream was not drained")
		}
		switch {
		case restarts == 1 && armed == 0:
			fn.KillOnResponse() // kill 2: PutEvents returned, the answer not taken
			armed++
		case restarts == 2 && armed == 1:
			// kill 3: the answer taken, then the process dies. EventBridge
			// answers slowly now: a publisher that answered before its
			// PutEvents returned would lose them with the process.
			fn.KillAfterResponse()
			eb.SetLatency(200 * time.Millisecond)
			armed++
		}
		res, err := m.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Records) == 0 {
			break
		}
		if res.Error != nil {
			restarts++
			if res.Failed != len(res.Records) {
				t.Fatalf("a failed invocation checkpointed: %+v", res)
			}
			fn.Start()
		}
	}
	// Kill 3's process is found dead by the next invocation, which fails
	// (and is delivered again to a new one).
	if restarts != 3 {
		t.Fatalf("%d restarts, want 3\n%s", restarts, fn.Logs())
	}
	got := received(t, eb)
	dups := 0
	for _, e := range committed {
		copies := got[e.ID]
		if len(copies) == 0 {
			t.Errorf("event %s never reached the bus", e.ID)
			continue
		}
		for _, c := range copies[1:] {
			if !sameDetail(c, copies[0]) {
				t.Errorf("event %s published twice differently: %+v / %+v", e.ID, copies[0], c)
			}
		}
		if copies[0].PipelineID != e.PipelineID || copies[0].Message != e.Message || copies[0].Date != e.Date {
			t.Errorf("event %s on the bus: %+v", e.ID, copies[0])
		}
		dups += len(copies) - 1
		delete(got, e.ID)
	}
	if len(got) != 0 {
		t.Errorf("published events that were never committed: %v", got)
	}
	// Kills 1 and 2 came after EventBridge accepted a batch: those events
	// went out again after the restart.
	if dups == 0 {
		t.Fatal("no event was published twice: the kills missed the window between PutEvents and the checkpoint")
	}
	t.Logf("%d events, %d bus events (%d duplicates), %d PutEvents calls", len(committed), len(eb.Events()), dups, eb.Calls())
}

func sameDetail(a, b BusDetail) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// inProcessPublisher is the publisher called through its Lambda entry
// point in this process.
func inProcessPublisher(t *testing.T, env ddbEnv, eb *awsfake.EventBridge, attempts int) ddbstream.Invoke {
	t.Helper()
	p, err := NewPublisher(PublisherConfig{
		EventBridge: eventbridge.NewFromConfig(awsfake.Config(eb.URL)), Bus: testBus, EventsTable: env.tables.Events,
		MaxAttempts: attempts, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return lambda.NewHandler(p.Handle).Invoke
}

func TestOutboxRetriesPartialPutEventsFailures(t *testing.T) {
	ctx := context.Background()
	env := newDDBEnv(t, 0)
	committed := commitEvents(t, env.store, 12)
	eb := awsfake.NewEventBridge(t, clock.NewVirtual(t0), testBus)
	fails := map[string]int{}
	eb.SetFail(func(e awsfake.Entry) string {
		var d BusDetail
		_ = json.Unmarshal([]byte(e.Detail), &d)
		fails[d.EventID]++
		switch {
		case d.EventID == "ev-02" && fails[d.EventID] <= 2: // goes through on the third attempt
			return "InternalFailure"
		case d.EventID == "ev-07" && fails[d.EventID] <= 3: // outlasts the invocation's 3 attempts
			return "ThrottlingException"
		}
		return ""
	})
	m := eventsStream(t, env, inProcessPublisher(t, env, eb, 3), 100)
	res, err := m.Drain(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	// ev-07's record and every later one of its batch are failed and come
	// again; the next delivery publishes ev-07 and the rest.
	first := slices.IndexFunc(res, func(r ddbstream.Result) bool { return r.Failed > 0 })
	if first < 0 || res[len(res)-1].Failed != 0 {
		t.Fatalf("batches %+v: want one with failed records, then none", res)
	}
	for _, r := range res {
		if r.Error != nil {
			t.Fatalf("an invocation failed: %v", r.Error)
		}
	}
	got := received(t, eb)
	for _, e := range committed {
		if len(got[e.ID]) == 0 {
			t.Errorf("event %s never reached the bus", e.ID)
		}
	}
	if len(got["ev-02"]) != 1 || fails["ev-02"] != 3 || len(got["ev-07"]) != 1 || fails["ev-07"] != 4 {
		t.Fatalf("ev-02 published %d (tried %d), ev-07 published %d (tried %d)", len(got["ev-02"]), fails["ev-02"], len(got["ev-07"]), fails["ev-07"])
	}
	// The records before ev-07's in the first delivery were not delivered
	// again: their events went out once.
	for _, id := range idsBefore(t, res[first], "ev-07") {
		if len(got[id]) != 1 {
			t.Errorf("%s, before the failed record, published %d times", id, len(got[id]))
		}
	}
}

// idsBefore returns the ids of the events whose records come before the
// record of event id in r's batch.
func idsBefore(t *testing.T, r ddbstream.Result, id string) []string {
	t.Helper()
	var ids []string
	for _, rec := range r.Records {
		d, err := ddbstore.DecodeLambda(ddbstore.RoleEvents, rec)
		if err != nil {
			t.Fatal(err)
		}
		if it, ok := d.(ddbstore.EventItem); ok {
			if it.Event.ID == id {
				return ids
			}
			ids = append(ids, it.Event.ID)
		}
	}
	t.Fatalf("no record of event %s in the batch", id)
	return nil
}

func TestOutboxDoesNotPublishExternalEventsOrBookkeeping(t *testing.T) {
	ctx := context.Background()
	env := newDDBEnv(t, 0)
	committed := commitEvents(t, env.store, 3)
	alarm := event.Event{ID: "alarm-1", Time: t0, Type: event.InfraAlarm, PipelineID: InfraPipeline, Message: "dlq: ALARM"}
	if err := env.store.AppendExternal(ctx, []event.Event{alarm}); err != nil {
		t.Fatal(err)
	}
	eb := awsfake.NewEventBridge(t, clock.NewVirtual(t0), testBus)
	var batches []events.DynamoDBEvent
	pub := inProcessPublisher(t, env, eb, 3)
	m := eventsStream(t, env, func(ctx context.Context, payload []byte) ([]byte, error) {
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, err
		}
		batches = append(batches, ev)
		return pub(ctx, payload)
	}, 100)
	if _, err := m.Drain(ctx, 10); err != nil {
		t.Fatal(err)
	}
	records := 0
	for _, b := range batches {
		records += len(b.Records)
	}
	got := received(t, eb)
	if _, ok := got["alarm-1"]; ok || len(got) != len(committed) {
		t.Fatalf("published %v; want the %d committed events only", slices.Collect(maps.Keys(got)), len(committed))
	}
	// The stream held more than the events: the thread, the alarm, shard
	// counters.
	if records <= len(committed)+1 {
		t.Fatalf("%d stream records for %d events: the test does not see the other items", records, len(committed))
	}
}

func TestOutboxRefusesAnotherTablesStream(t *testing.T) {
	env := newDDBEnv(t, 0)
	eb := awsfake.NewEventBridge(t, clock.NewVirtual(t0), testBus)
	p, err := NewPublisher(PublisherConfig{EventBridge: eventbridge.NewFromConfig(awsfake.Config(eb.URL)), Bus: testBus, EventsTable: env.tables.Events})
	if err != nil {
		t.Fatal(err)
	}
	commitEvents(t, env.store, 1)
	m := eventsStream(t, env, func(ctx context.Context, payload []byte) ([]byte, error) {
		// The control table's stream wired to the publisher by mistake.
		wrong := strings.ReplaceAll(string(payload), "table/"+env.tables.Events+"/", "table/"+env.tables.Control+"/")
		return lambda.NewHandler(p.Handle).Invoke(ctx, []byte(wrong))
	}, 10)
	res, err := m.Poll(context.Background())
	if err != nil || res.Error == nil || !strings.Contains(res.Error.Error(), "not the stream of the events table") || eb.Calls() != 0 {
		t.Fatalf("poll %+v %v, PutEvents calls %d", res, err, eb.Calls())
	}
}

// TestOutboxAnswersBeforeTheInvocationsDeadline: with EventBridge failing
// every entry, the publisher stops retrying when the next wait would run
// into the invocation's deadline, and answers with the failure (a timed
// out invocation would fail its whole batch, the records before the
// failure too).
func TestOutboxAnswersBeforeTheInvocationsDeadline(t *testing.T) {
	env := newDDBEnv(t, 0)
	commitEvents(t, env.store, 3)
	eb := awsfake.NewEventBridge(t, clock.NewVirtual(t0), testBus)
	eb.SetFail(func(awsfake.Entry) string { return "InternalFailure" })
	p, err := NewPublisher(PublisherConfig{
		EventBridge: eventbridge.NewFromConfig(awsfake.Config(eb.URL)), Bus: testBus, EventsTable: env.tables.Events,
		Clock: clock.Real{}, MaxAttempts: 1000, MinBackoff: 100 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	invoke := lambda.NewHandler(p.Handle).Invoke
	m := eventsStream(t, env, func(ctx context.Context, payload []byte) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, deadlineMargin+150*time.Millisecond)
		defer cancel()
		return invoke(ctx, payload)
	}, 100)
	res, err := m.Poll(context.Background())
	if err != nil || res.Error != nil || res.Failed == 0 {
		t.Fatalf("poll %+v, %v: want an answer naming failures", res, err)
	}
	// One attempt, one wait of 100 ms fits before the margin, a second
	// would not.
	if n := eb.Calls(); n > 3 {
		t.Fatalf("%d PutEvents calls: the publisher kept retrying into its deadline", n)
	}
}
