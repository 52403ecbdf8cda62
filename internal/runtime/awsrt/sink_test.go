package awsrt

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

// The INFRA_ALARM an input transformer makes of a CloudWatch alarm state
// change (docs/aws.md), and the raw state change itself.
const (
	transformedAlarm = `{"version":"0","id":"7bf73129-1428-4cd3-a780-95db273d1602","source":"interlock","detail-type":"INFRA_ALARM",
		"time":"2099-03-07T09:30:00Z","detail":{"pipelineId":"INFRASTRUCTURE","message":"prod-interlock-alert-dlq: ALARM — 1 message visible"}}`
	rawAlarm = `{"version":"0","id":"c4c1c1c9-6542-e61b-6ef0-8c4d36933a92","source":"aws.cloudwatch","detail-type":"CloudWatch Alarm State Change",
		"account":"123456789012","time":"2099-03-07T07:05:00Z","region":"us-east-1","resources":["arn:aws:cloudwatch:us-east-1:123456789012:alarm:prod-interlock-errors"],
		"detail":{"alarmName":"prod-interlock-errors","state":{"value":"ALARM","reason":"Threshold Crossed: 1 datapoint [2.0] was >= 1.0","timestamp":"2099-03-07T07:05:00.000+0000"},
		"previousState":{"value":"OK"}}}`
)

type sinkFn func(payload string) error

// sinkFromEnv is the event-sink function as its main builds it from the
// environment, with EVENTS_TTL_DAYS=ttlDays, called through its Lambda
// entry point.
func sinkFromEnv(t *testing.T, env ddbEnv, ttlDays string) sinkFn {
	t.Helper()
	awsEnv(t, map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": ddblocal.Endpoint(t)})
	h, err := SinkFromEnv(context.Background(), EnvOf(map[string]string{
		EnvControlTable: env.tables.Control, EnvJobLogTable: env.tables.JobLog, EnvRerunTable: env.tables.Rerun,
		EnvEventsTable: env.tables.Events, EnvEventsTTLDays: ttlDays,
	}))
	if err != nil {
		t.Fatal(err)
	}
	invoke := lambda.NewHandler(h).Invoke
	return func(payload string) error {
		_, err := invoke(context.Background(), []byte(payload))
		return err
	}
}

// awsEnv points the SDK of a function built in this process at the fakes
// (the SDK reads its configuration from the process's environment).
func awsEnv(t *testing.T, vars map[string]string) {
	t.Helper()
	base := map[string]string{
		"AWS_REGION": awsfake.Region, "AWS_ACCESS_KEY_ID": "AKIDFAKE", "AWS_SECRET_ACCESS_KEY": "fake-secret",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
	}
	for k, v := range vars {
		base[k] = v
	}
	for k, v := range base {
		t.Setenv(k, v)
	}
}

func infraAlarms(t *testing.T, st store.Store) []event.Event {
	t.Helper()
	page, err := st.EventList(context.Background(), store.EventListParams{Types: []event.Type{event.InfraAlarm}})
	if err != nil {
		t.Fatal(err)
	}
	return page.Events
}

func TestSinkStoresAnInfraAlarmOnceWithItsTTL(t *testing.T) {
	env := newDDBEnv(t, 0)
	sink := sinkFromEnv(t, env, "7")
	for range 2 { // EventBridge delivers at least once
		if err := sink(transformedAlarm); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink(rawAlarm); err != nil {
		t.Fatal(err)
	}
	got := infraAlarms(t, env.store)
	if len(got) != 2 || got[0].ID != "7bf73129-1428-4cd3-a780-95db273d1602" || got[0].PipelineID != InfraPipeline ||
		!got[0].Time.Equal(t0.Add(210*time.Minute)) || got[1].Message != "prod-interlock-errors: ALARM — Threshold Crossed: 1 datapoint [2.0] was >= 1.0" {
		t.Fatalf("stored %+v", got)
	}
	// Every item the alarm left in the events table expires 7 days after
	// the alarm (EVENTS_TTL_DAYS).
	items := itemsNaming(t, env, got[0].ID)
	if len(items) == 0 {
		t.Fatal("no item names the alarm")
	}
	want := t0.Add(210*time.Minute + 7*24*time.Hour).Unix()
	for _, it := range items {
		n, ok := it["ttl"].(*types.AttributeValueMemberN)
		if !ok {
			t.Fatalf("item without ttl: %v", it)
		}
		ttl, _ := strconv.ParseInt(n.Value, 10, 64)
		if ttl < want || ttl > want+2 {
			t.Fatalf("ttl %d, want %d (7 days after the alarm)", ttl, want)
		}
	}
}

// itemsNaming scans the events table for the items holding the string id
// in an attribute (the test reads no key: the layout is the store's).
func itemsNaming(t *testing.T, env ddbEnv, id string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(env.client, &dynamodb.ScanInput{TableName: aws.String(env.tables.Events)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			for _, v := range it {
				if s, ok := v.(*types.AttributeValueMemberS); ok && strings.Contains(s.Value, id) {
					out = append(out, it)
					break
				}
			}
		}
	}
	return out
}

func TestSinkNamesWhatIsWrongWithABadEvent(t *testing.T) {
	sink := NewSink(newDDBEnv(t, 0).store, clock.NewVirtual(t0), nil)
	invoke := lambda.NewHandler(sink.Handle).Invoke
	for body, want := range map[string]string{
		`{"source":"aws.glue","detail":{}}`:                                                "event-sink: bad bus event: detail-type is missing",
		`{"source":"interlock","detail-type":"X","detail":7}`:                              "detail is not a JSON object",
		`{"source":"interlock","detail-type":"INFRA_ALARM","detail":{"timestamp":"soon"}}`: `detail.timestamp "soon"`,
	} {
		if _, err := invoke(context.Background(), []byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// TestEventPath runs the whole path on DynamoDB Local and the fakes:
// events committed with the engine's Change → the events table's stream →
// the publisher → EventBridge, whose rules hand every interlock event to
// the event sink and the alert types to the alert queue → the dispatcher →
// Slack. The sink stores none of the outbox's events again; an
// INFRA_ALARM it stores is in the log once and is not published again
// (it is external), so nothing loops.
func TestEventPath(t *testing.T) {
	ctx := context.Background()
	env := newDDBEnv(t, 0)
	p := newBusPath(t)
	sink := lambda.NewHandler(NewSink(env.store, clock.NewVirtual(t0), nil).Handle)
	var sinkErrs []error
	p.eb.Route(func(e awsfake.BusEvent) bool { return e.Source == event.Source }, func(e awsfake.BusEvent) {
		if _, err := sink.Invoke(ctx, e.JSON); err != nil {
			sinkErrs = append(sinkErrs, err)
		}
	})
	es := slaEvents()
	if err := env.store.Commit(ctx, store.Change{Events: es}); err != nil {
		t.Fatal(err)
	}
	stream := eventsStream(t, env, inProcessPublisher(t, env, p.eb, 3), 10)
	if _, err := stream.Drain(ctx, 10); err != nil {
		t.Fatal(err)
	}
	// The alarm reaches the sink (and the alert queue) from the default
	// bus's rule, reshaped.
	if _, err := sink.Invoke(ctx, []byte(transformedAlarm)); err != nil {
		t.Fatal(err)
	}
	p.sqs.Send("alerts", transformedAlarm)
	if _, err := stream.Drain(ctx, 10); err != nil {
		t.Fatal(err)
	}
	slackFake := slacktest.New(t, slackToken)
	drain(t, mapped(p, dispatcherFor(t, env.store, slackFake, StaticToken(slackToken))))

	if len(sinkErrs) != 0 {
		t.Fatal(sinkErrs)
	}
	page, err := env.store.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range page.Events {
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, ",") != "ev-1,ev-2,ev-3,7bf73129-1428-4cd3-a780-95db273d1602" {
		t.Fatalf("event log %v: each event once", ids)
	}
	if n := len(p.eb.Events()); n != 3 {
		t.Fatalf("%d events on the bus, want the 3 committed (the alarm is not published again)", n)
	}
	posts := slackFake.Posts()
	if len(posts) != 4 || !strings.Contains(posts[3].BlockText(), "INFRA_ALARM* | INFRASTRUCTURE") || posts[1].ThreadTS != posts[0].TS {
		t.Fatalf("posts %+v", posts)
	}
}
