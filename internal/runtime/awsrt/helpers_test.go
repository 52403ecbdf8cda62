package awsrt

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// t0 is in the future: DynamoDB Local's TTL really deletes, and items of a
// time more than their retention in the past would vanish mid-test.
var t0 = time.Date(2099, 3, 7, 6, 0, 0, 0, time.UTC)

const testBus = "test-interlock-events"

// sqliteStore is a store for the local runtime's side of a comparison.
func sqliteStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "interlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// busPath is the bus and the alert queue: an EventBridge fake whose rule
// sends every interlock event to the SQS queue "alerts" (60 s visibility,
// redrive to "alerts-dlq" after 3 receives), as the alert rule of §7.5.
type busPath struct {
	eb  *awsfake.EventBridge
	ebc *eventbridge.Client
	sqs *awsfake.SQS
}

func newBusPath(t *testing.T) busPath {
	p := busPath{eb: awsfake.NewEventBridge(t, clock.NewVirtual(t0), testBus), sqs: awsfake.NewSQS(t)}
	p.ebc = eventbridge.NewFromConfig(awsfake.Config(p.eb.URL))
	p.sqs.CreateQueue(awsfake.QueueConfig{Name: "alerts-dlq"})
	p.sqs.CreateQueue(awsfake.QueueConfig{Name: "alerts", VisibilityTimeout: 60 * time.Second, DeadLetter: "alerts-dlq", MaxReceiveCount: 3})
	p.eb.Route(func(e awsfake.BusEvent) bool { return e.Source == event.Source }, func(e awsfake.BusEvent) { p.sqs.Send("alerts", string(e.JSON)) })
	return p
}

// publish puts es on the bus as the outbox does (entryOf), one call each.
func (p busPath) publish(t *testing.T, es ...event.Event) {
	t.Helper()
	for _, e := range es {
		entry, err := entryOf(e, testBus)
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.ebc.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{entry}})
		if err != nil || out.FailedEntryCount != 0 {
			t.Fatalf("PutEvents: %v %+v", err, out)
		}
	}
}

// ev is an event of pipeline orders, schedule cron, period 2099-03-07.
func ev(id string, typ event.Type, at time.Time, detail map[string]sensor.Value) event.Event {
	e := event.Event{ID: id, Time: at, Type: typ, PipelineID: "orders", ScheduleID: "cron", Date: "2099-03-07",
		Message: string(typ) + " for orders <@here> & co"}
	if detail != nil {
		e.Detail = sensor.NewObject(detail)
	}
	return e
}

// slaEvents are a period's alerts with every field the Slack text shows.
func slaEvents() []event.Event {
	n, _ := sensor.ParseNumber("9007199254740993")
	return []event.Event{
		ev("ev-1", event.SLAWarning, t0.Add(time.Hour), map[string]sensor.Value{
			"deadline": sensor.StringValue("08:00"), "breachAt": sensor.StringValue("2099-03-07T08:00:00Z"),
			"status": sensor.StringValue("RUNNING"), "source": sensor.StringValue("schedule"),
			"actionHint": sensor.StringValue("check the job"), "rows": n,
		}),
		ev("ev-2", event.SLABreach, t0.Add(2*time.Hour+123456789), map[string]sensor.Value{
			"cron": sensor.StringValue("0 * * * *"), "source": sensor.StringValue("schedule"),
		}),
		ev("ev-3", event.JobFailed, t0.Add(3*time.Hour), nil),
	}
}

// handleStep invokes the orchestrator's Lambda handler with in, failing t
// on an error.
func handleStep(t *testing.T, o *Orchestrator, in StepInput) StepOutput {
	t.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := o.Handle(t.Context(), body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
