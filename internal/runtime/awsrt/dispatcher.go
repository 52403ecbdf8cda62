package awsrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/slack"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/store"
)

// DispatcherConfig configures a Dispatcher.
type DispatcherConfig struct {
	// Store keeps the Slack threads, what was sent and the dead letters
	// (alert records; on AWS the events table).
	Store   store.Store
	Channel string // SLACK_CHANNEL_ID
	Token   Token
	// APIURL and HTTPClient reach Slack (defaults: slack.DefaultAPIURL,
	// alerthttp's client).
	APIURL     string
	HTTPClient *http.Client
	Clock      clock.Clock  // nil: the real clock
	Logger     *slog.Logger // nil: discard
}

// Dispatcher is the alert dispatcher's Lambda handler (Handle): it posts
// each bus event of an SQS batch to Slack with the local Slack sink
// (internal/alert/slack: the same Block Kit text, the same thread per
// pipeline, schedule and period, kept in the store).
type Dispatcher struct {
	c DispatcherConfig

	mu   sync.Mutex
	sink *slack.Sink
}

// NewDispatcher checks c and returns the dispatcher.
func NewDispatcher(c DispatcherConfig) (*Dispatcher, error) {
	if c.Store == nil || c.Channel == "" || c.Token == nil {
		return nil, errors.New("alert-dispatcher: a store, a channel and a token source are required")
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Dispatcher{c: c}, nil
}

// Handle posts every message of the batch and names as batch item
// failures (by messageId) the ones to receive again:
//
//   - posted, or posted before (the same event id was the sink's last
//     delivery of its text: the bus or the queue delivered it twice):
//     done;
//   - a failure Slack may get over (network, HTTP 5xx, 429, a rate limit,
//     the thread record unreadable) or a store that cannot record the
//     outcome: failed, so SQS delivers it again after its visibility
//     timeout and moves it to the alert DLQ after maxReceiveCount
//     receives;
//   - a permanent refusal (an unknown channel, a revoked token, HTTP 4xx):
//     logged and recorded as a dead letter in the store, and done — a
//     retry would be refused the same way;
//   - a body that is not a bus event: failed, so the queue's redrive keeps
//     it (whole) in the alert DLQ, where an operator can read it; no
//     dead letter can name an event it cannot read.
//
// With no token configured every message is logged and done. A token that
// cannot be read fails every message.
func (d *Dispatcher) Handle(ctx context.Context, in events.SQSEvent) (events.SQSEventResponse, error) {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	fail := func(m events.SQSMessage) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
	}
	sink, err := d.slackSink(ctx)
	if errors.Is(err, ErrNoToken) {
		for _, m := range in.Records {
			d.c.Logger.Warn("alert-dispatcher: no Slack token configured: alert not posted", "messageId", m.MessageId, "body", m.Body)
		}
		return resp, nil
	}
	if err != nil {
		d.c.Logger.Error("alert-dispatcher: no Slack sink", "err", err)
		for _, m := range in.Records {
			fail(m)
		}
		return resp, nil
	}
	for _, m := range in.Records {
		if !d.dispatch(ctx, sink, m) {
			fail(m)
		}
	}
	return resp, nil
}

// dispatch posts one message and says whether it is done.
func (d *Dispatcher) dispatch(ctx context.Context, sink *slack.Sink, m events.SQSMessage) bool {
	log := d.c.Logger.With("messageId", m.MessageId)
	be, err := ParseBusEvent([]byte(m.Body))
	if err != nil {
		log.Error("alert-dispatcher: message is not a bus event", "err", err)
		return false
	}
	e, _, err := be.Event(d.c.Clock.Now())
	if err != nil {
		log.Error("alert-dispatcher: message is not a bus event", "err", err)
		return false
	}
	log = log.With("event", e.ID, "type", e.Type, "pipeline", e.PipelineID, "date", e.Date)
	name := sink.Name()
	sent, err := alert.Delivered(ctx, d.c.Store, name, e)
	if err != nil {
		log.Warn("alert-dispatcher: cannot tell whether the alert went out already", "err", err)
		return false
	}
	if sent {
		log.Info("alert-dispatcher: alert already posted: not posted again")
		return true
	}
	retry, derr := sink.Deliver(ctx, alert.NewAlert(e, name))
	switch {
	case derr == nil:
		if err := d.c.Store.Commit(ctx, store.Change{AlertsSent: []store.AlertSent{alert.SentRecord(name, e)}}); err != nil {
			// The alert is out; failing now would post it twice.
			log.Warn("alert-dispatcher: posted, but the sent record was not saved", "err", err)
		}
		log.Debug("alert-dispatcher: posted")
		return true
	case retry:
		log.Warn("alert-dispatcher: post failed, will be received again", "receiveCount", m.Attributes["ApproximateReceiveCount"], "err", derr)
		return false
	}
	dl := alert.NewDeadLetter(name, e, receiveCount(m), derr, d.c.Clock.Now())
	if err := d.c.Store.Commit(ctx, store.Change{DeadLetters: []store.DeadLetter{dl.Record()}}); err != nil {
		log.Warn("alert-dispatcher: refused for good, but the dead letter was not saved: will be received again", "refusal", derr, "err", err)
		return false
	}
	log.Error("alert-dispatcher: alert dead-lettered: Slack refused it for good", "err", derr)
	return true
}

// slackSink returns the Slack sink, made at the first call that has a
// token (the token is read once per process).
func (d *Dispatcher) slackSink(ctx context.Context) (*slack.Sink, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sink != nil {
		return d.sink, nil
	}
	token, err := d.c.Token.Token(ctx)
	if err != nil {
		return nil, err
	}
	sink, err := slack.New(slack.Config{
		Channel: d.c.Channel, Token: alert.StaticSecret(token), APIURL: d.c.APIURL, Client: d.c.HTTPClient,
		Threads: alert.StoreThreads{Store: d.c.Store, Clock: d.c.Clock}, Logger: d.c.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("alert-dispatcher: %w", err)
	}
	d.sink = sink
	return sink, nil
}

// receiveCount is the message's ApproximateReceiveCount (1 when absent):
// the attempts a dead letter records.
func receiveCount(m events.SQSMessage) int {
	n, err := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}
