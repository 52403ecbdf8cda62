package awsrt

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/slack"
	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/store"
)

const (
	slackToken = "xoxb-test-token-1234"
	channel    = "C0ALERTS"
)

// dispatcherFor is a dispatcher over st posting to fake with token.
func dispatcherFor(t *testing.T, st store.Store, fake *slacktest.Server, token Token) *Dispatcher {
	t.Helper()
	d, err := NewDispatcher(DispatcherConfig{Store: st, Channel: channel, Token: token, APIURL: fake.APIURL(), Clock: clock.NewVirtual(t0)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// mapped is the alert queue mapped to d, one message per invocation
// (the reference's batch size).
func mapped(p busPath, d *Dispatcher) *awsfake.SQSMapping {
	return awsfake.NewSQSMapping(p.sqs, "alerts", 1, lambda.NewHandler(d.Handle).Invoke)
}

func drain(t *testing.T, m *awsfake.SQSMapping) []awsfake.PollResult {
	t.Helper()
	res, err := m.Drain(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestDispatcherPostsWhatTheLocalSlackSinkPosts sends a period's alerts
// through the local Slack sink and through the AWS path (the outbox's bus
// entry → EventBridge → SQS → the dispatcher, with a cold start between
// two of them), and compares every chat.postMessage body: the same Block
// Kit text, fallback, channel, thread and broadcast.
func TestDispatcherPostsWhatTheLocalSlackSinkPosts(t *testing.T) {
	ctx := context.Background()
	es := slaEvents()

	local := slacktest.New(t, slackToken)
	sink, err := slack.New(slack.Config{Channel: channel, Token: alert.StaticSecret(slackToken), APIURL: local.APIURL(),
		Threads: alert.StoreThreads{Store: sqliteStore(t), Clock: clock.NewVirtual(t0)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if _, err := sink.Deliver(ctx, alert.NewAlert(e, sink.Name())); err != nil {
			t.Fatal(err)
		}
	}

	remote := slacktest.New(t, slackToken)
	p := newBusPath(t)
	st := newStore(t)
	p.publish(t, es[0])
	drain(t, mapped(p, dispatcherFor(t, st, remote, StaticToken(slackToken))))
	// A cold start: a new process keeps the period's thread from the store.
	p.publish(t, es[1:]...)
	drain(t, mapped(p, dispatcherFor(t, st, remote, StaticToken(slackToken))))

	want, got := local.Posts(), remote.Posts()
	if len(want) != 3 || len(got) != 3 {
		t.Fatalf("posts: local %d, aws %d", len(want), len(got))
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Text != w.Text || g.BlockText() != w.BlockText() || len(g.Blocks) != len(w.Blocks) || g.Blocks[0].Type != w.Blocks[0].Type ||
			g.Channel != w.Channel || g.ThreadTS != w.ThreadTS || g.ReplyBroadcast != w.ReplyBroadcast {
			t.Errorf("post %d differs:\nlocal %+v\naws   %+v", i, w, g)
		}
	}
	if got[1].ThreadTS != got[0].TS || got[2].ThreadTS != got[0].TS || got[0].ThreadTS != "" {
		t.Fatalf("the period's alerts are not one thread: %+v", got)
	}
	if !strings.Contains(got[0].BlockText(), "Deadline 08:00 (2099-03-07T08:00:00Z) · Status: RUNNING · Source: schedule") {
		t.Fatalf("detail lost on the way: %q", got[0].BlockText())
	}
}

func TestDispatcherPostsAnEventDeliveredTwiceOnce(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	p := newBusPath(t)
	e := slaEvents()[0]
	// The outbox published it twice (a publisher died after PutEvents).
	p.publish(t, e, e)
	drain(t, mapped(p, dispatcherFor(t, newStore(t), fake, StaticToken(slackToken))))
	if n := len(fake.Posts()); n != 1 {
		t.Fatalf("%d posts, want 1", n)
	}
	if n := len(p.sqs.Messages("alerts")) + len(p.sqs.Messages("alerts-dlq")); n != 0 {
		t.Fatalf("%d messages left", n)
	}
}

func TestDispatcherRetriesTransientSlackFailuresThroughTheQueue(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	p := newBusPath(t)
	st := newStore(t)
	fake.Script(slacktest.ServerError, slacktest.Throttled)
	p.publish(t, slaEvents()[0])
	res := drain(t, mapped(p, dispatcherFor(t, st, fake, StaticToken(slackToken))))
	// 500, then 429, then posted: two batch item failures, three receives.
	if len(res) != 3 || res[0].Failed != 1 || res[1].Failed != 1 || res[2].Failed != 0 || res[0].Error {
		t.Fatalf("polls %+v", res)
	}
	if len(fake.Posts()) != 1 || fake.Requests() != 3 {
		t.Fatalf("posts %d, requests %d", len(fake.Posts()), fake.Requests())
	}
	if n := len(p.sqs.Messages("alerts-dlq")); n != 0 {
		t.Fatalf("%d in the DLQ", n)
	}

	// Slack down for good: after maxReceiveCount receives the queue moves
	// the message to the DLQ; it is not a dead letter of the store.
	fake.SetMode(slacktest.ServerError)
	p.publish(t, slaEvents()[1])
	drain(t, mapped(p, dispatcherFor(t, st, fake, StaticToken(slackToken))))
	if dlq := p.sqs.Messages("alerts-dlq"); len(dlq) != 1 || !strings.Contains(dlq[0].Body, `"eventId":"ev-2"`) {
		t.Fatalf("DLQ %+v", dlq)
	}
	if dls, _ := st.DeadLetterList(context.Background(), "slack:"+channel); len(dls) != 0 {
		t.Fatalf("dead letters %+v", dls)
	}
}

func TestDispatcherDeadLettersAPermanentRefusalInsteadOfRetrying(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	p := newBusPath(t)
	st := newStore(t)
	fake.SetMode(slacktest.Rejected) // channel_not_found
	p.publish(t, slaEvents()[0])
	res := drain(t, mapped(p, dispatcherFor(t, st, fake, StaticToken(slackToken))))
	if len(res) != 1 || res[0].Failed != 0 || fake.Requests() != 1 {
		t.Fatalf("polls %+v, requests %d: a refusal must not be retried", res, fake.Requests())
	}
	dls, err := st.DeadLetterList(context.Background(), "slack:"+channel)
	if err != nil || len(dls) != 1 || dls[0].EventID != "ev-1" || !strings.Contains(dls[0].Error, "channel_not_found") ||
		dls[0].Attempts != 1 || dls[0].Key.Period != "2099-03-07" {
		t.Fatalf("dead letters %+v %v", dls, err)
	}
	if strings.Contains(dls[0].Error, slackToken) {
		t.Fatal("the token leaked into the dead letter")
	}
	if n := len(p.sqs.Messages("alerts")) + len(p.sqs.Messages("alerts-dlq")); n != 0 {
		t.Fatalf("%d messages left", n)
	}
}

func TestDispatcherReadsTheTokenFromSecretsManagerOnce(t *testing.T) {
	fake := slacktest.New(t, "xoxb-from-secret")
	sm := awsfake.NewSecretsManager(t)
	arn := sm.Put("interlock/slack", "  xoxb-from-secret\n")
	tok := SecretToken{Client: secretsmanager.NewFromConfig(awsfake.Config(sm.URL)), ARN: arn}
	p := newBusPath(t)
	d := dispatcherFor(t, newStore(t), fake, tok)
	p.publish(t, slaEvents()...)
	drain(t, mapped(p, d))
	if len(fake.Posts()) != 3 || sm.Reads() != 1 {
		t.Fatalf("posts %d, secret reads %d", len(fake.Posts()), sm.Reads())
	}
	for _, a := range fake.Auths() {
		if a != "Bearer xoxb-from-secret" {
			t.Fatalf("authorization %q", a)
		}
	}
}

func TestDispatcherFailsEveryMessageWhileTheSecretCannotBeRead(t *testing.T) {
	fake := slacktest.New(t, "xoxb-late")
	sm := awsfake.NewSecretsManager(t)
	arn := "arn:aws:secretsmanager:us-east-1:123456789012:secret:interlock/slack-AbCdEf"
	tok := SecretToken{Client: secretsmanager.NewFromConfig(awsfake.Config(sm.URL)), ARN: arn}
	p := newBusPath(t)
	d := dispatcherFor(t, newStore(t), fake, tok)
	p.publish(t, slaEvents()[0])
	m := mapped(p, d)
	res, err := m.Poll(context.Background())
	if err != nil || res.Failed != 1 || len(fake.Posts()) != 0 {
		t.Fatalf("poll %+v %v", res, err)
	}
	if _, err := tok.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "ResourceNotFoundException") {
		t.Fatalf("token error %v", err)
	}
	// The secret appears: the next receive reads it and posts.
	sm.Put("interlock/slack", "xoxb-late")
	drain(t, m)
	if len(fake.Posts()) != 1 {
		t.Fatalf("posts %d", len(fake.Posts()))
	}
}

func TestDispatcherWithoutATokenLogsAndSucceeds(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	p := newBusPath(t)
	p.publish(t, slaEvents()...)
	res := drain(t, mapped(p, dispatcherFor(t, newStore(t), fake, StaticToken(""))))
	if len(res) != 3 || fake.Requests() != 0 || len(p.sqs.Messages("alerts")) != 0 {
		t.Fatalf("polls %+v, requests %d", res, fake.Requests())
	}
	for _, r := range res {
		if r.Failed != 0 {
			t.Fatalf("polls %+v", res)
		}
	}
}

func TestDispatcherSendsABodyThatIsNotABusEventToTheDLQ(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	p := newBusPath(t)
	p.sqs.Send("alerts", `{"source":"interlock","detail-type":"SLA_BREACH","detail":"not an object"}`)
	drain(t, mapped(p, dispatcherFor(t, newStore(t), fake, StaticToken(slackToken))))
	if dlq := p.sqs.Messages("alerts-dlq"); len(dlq) != 1 || fake.Requests() != 0 {
		t.Fatalf("DLQ %+v, requests %d", dlq, fake.Requests())
	}
}

func TestNewDispatcherRefusesAnIncompleteConfig(t *testing.T) {
	if _, err := NewDispatcher(DispatcherConfig{Channel: channel, Token: StaticToken("x")}); err == nil {
		t.Fatal("no store accepted")
	}
}
