package awsfake_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
)

func entry(bus, detail string) ebtypes.PutEventsRequestEntry {
	return ebtypes.PutEventsRequestEntry{Source: aws.String("interlock"), DetailType: aws.String("SLA_BREACH"), Detail: aws.String(detail), EventBusName: aws.String(bus)}
}

func TestEventBridgeAnswersPutEventsAsEventBridgeDoes(t *testing.T) {
	ctx := context.Background()
	f := awsfake.NewEventBridge(t, nil, "bus")
	c := eventbridge.NewFromConfig(awsfake.Config(f.URL))
	f.SetFail(func(e awsfake.Entry) string {
		if strings.Contains(e.Detail, "fail-me") {
			return "InternalFailure"
		}
		return ""
	})
	at := time.Date(2026, 3, 7, 6, 0, 0, 0, time.UTC)
	ok := entry("bus", `{"n": 1}`)
	ok.Time = aws.Time(at)
	out, err := c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
		ok, entry("bus", `{"x":"fail-me"}`), entry("bus", `[1]`), entry("nobus", `{}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	codes := []string{}
	for _, r := range out.Entries {
		codes = append(codes, aws.ToString(r.ErrorCode))
	}
	if out.FailedEntryCount != 3 || aws.ToString(out.Entries[0].EventId) == "" || strings.Join(codes, ",") != ",InternalFailure,MalformedDetail,NotFoundException" {
		t.Fatalf("answer %d %v", out.FailedEntryCount, codes)
	}
	evs := f.Events()
	var target map[string]any
	if len(evs) != 1 || json.Unmarshal(evs[0].JSON, &target) != nil || target["source"] != "interlock" || target["detail-type"] != "SLA_BREACH" ||
		target["time"] != "2026-03-07T06:00:00Z" || target["id"] != aws.ToString(out.Entries[0].EventId) || target["detail"].(map[string]any)["n"] != 1.0 {
		t.Fatalf("events %+v / %s", evs, evs[0].JSON)
	}

	var many []ebtypes.PutEventsRequestEntry
	for range 11 {
		many = append(many, entry("bus", `{}`))
	}
	_, err = c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: many})
	if err == nil || !strings.Contains(err.Error(), "ValidationException") {
		t.Fatalf("11 entries: %v", err)
	}
	big := entry("bus", `{"x":"`+strings.Repeat("a", 200*1024)+`"}`)
	_, err = c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{big, entry("bus", `{"x":"`+strings.Repeat("a", 60*1024)+`"}`)}})
	if err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("260 KB: %v", err)
	}
}

func TestSQSKeepsAQueueAsSQSDoes(t *testing.T) {
	ctx := context.Background()
	f := awsfake.NewSQS(t)
	f.CreateQueue(awsfake.QueueConfig{Name: "dlq"})
	url := f.CreateQueue(awsfake.QueueConfig{Name: "q", VisibilityTimeout: 30 * time.Second, DeadLetter: "dlq", MaxReceiveCount: 2})
	c := sqs.NewFromConfig(awsfake.Config(f.URL))
	sent, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(`{"a":"ü"}`)})
	if err != nil { // the SDK checks the MD5 of the body
		t.Fatal(err)
	}
	recv := func() []sqstypes.Message {
		t.Helper()
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Messages
	}
	m := recv()
	if len(m) != 1 || aws.ToString(m[0].MessageId) != aws.ToString(sent.MessageId) || aws.ToString(m[0].Body) != `{"a":"ü"}` || m[0].Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("received %+v", m)
	}
	if again := recv(); len(again) != 0 {
		t.Fatal("an in-flight message was received again")
	}
	f.Advance(31 * time.Second)
	m = recv()
	if len(m) != 1 || m[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("after the visibility timeout: %+v", m)
	}
	// Made visible at once, then received a third time: over
	// MaxReceiveCount, it moves to the DLQ instead.
	if _, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m[0].ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	if m := recv(); len(m) != 0 || len(f.Messages("dlq")) != 1 || len(f.Messages("q")) != 0 {
		t.Fatalf("received %+v, dlq %+v", m, f.Messages("dlq"))
	}

	f.Send("q", "x")
	m = recv()
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m[0].ReceiptHandle}); err != nil || len(f.Messages("q")) != 0 {
		t.Fatalf("delete: %v, %+v", err, f.Messages("q"))
	}
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(f.QueueURL("nope")), MessageBody: aws.String("x")})
	var missing *sqstypes.QueueDoesNotExist
	if !errors.As(err, &missing) {
		t.Fatalf("missing queue: %v", err)
	}
}

func TestSecretsManagerAnswersGetSecretValue(t *testing.T) {
	ctx := context.Background()
	f := awsfake.NewSecretsManager(t)
	arn := f.Put("slack", "xoxb-1")
	c := secretsmanager.NewFromConfig(awsfake.Config(f.URL))
	for _, id := range []string{arn, "slack"} {
		out, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
		if err != nil || aws.ToString(out.SecretString) != "xoxb-1" || aws.ToString(out.ARN) != arn {
			t.Fatalf("%s: %+v %v", id, out, err)
		}
	}
	_, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("other")})
	var nf *smtypes.ResourceNotFoundException
	if !errors.As(err, &nf) || f.Reads() != 3 {
		t.Fatalf("missing secret: %v (reads %d)", err, f.Reads())
	}
}

// TestSQSOnASharedClock: a queue on the test's clock says when its next
// in-flight message comes back, and it comes back when that clock gets
// there.
func TestSQSOnASharedClock(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewVirtual(time.Date(2099, 3, 7, 6, 0, 0, 0, time.UTC))
	f := awsfake.NewSQSOn(t, clk)
	url := f.CreateQueue(awsfake.QueueConfig{Name: "q", VisibilityTimeout: time.Minute})
	c := sqs.NewFromConfig(awsfake.Config(f.URL))
	f.Send("q", "x")
	if _, ok := f.NextVisible("q"); ok {
		t.Fatal("a visible message counted as in flight")
	}
	recv := func() int {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Messages)
	}
	clk.Advance(10 * time.Second)
	if recv() != 1 {
		t.Fatal("not received")
	}
	at, ok := f.NextVisible("q")
	if want := time.Date(2099, 3, 7, 6, 1, 10, 0, time.UTC); !ok || !at.Equal(want) {
		t.Fatalf("next visible %s %v, want %s", at, ok, want)
	}
	clk.Set(at.Add(-time.Nanosecond))
	if recv() != 0 {
		t.Fatal("received before its visibility timeout ended")
	}
	clk.Set(at)
	if recv() != 1 {
		t.Fatal("not received again when the clock got there")
	}
}
