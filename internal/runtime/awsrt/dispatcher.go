package awsrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/app/routing"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// DispatcherConfig configures a Dispatcher.
type DispatcherConfig struct {
	// Store keeps the Slack threads, what was sent, whether a sink alerted
	// on a period and the dead letters (alert records; on AWS the events
	// table), and the silences the dispatcher consults.
	Store store.Store
	// Alerts are the project's alert routes (interlock.yaml's alerts:),
	// each built by internal/app/routing as serve builds them, their
	// secrets read through LookupEnv. Empty: the one route of Channel
	// with Token.
	Alerts []pipeline.Alert
	// Maintenance are the project's maintenance windows: the events they
	// cover are not sent, as locally.
	Maintenance []silence.Window
	// Settings, when set, replaces Alerts and Maintenance: the alerts:
	// and maintenance: in force and their version, read at each
	// invocation (the deployment's stored alert config,
	// app.StoredAlertConfig, falling back to ALERTS_CONFIG). The routes
	// are built again when the version changes.
	Settings func(context.Context) (*pipeline.Settings, int64, error)
	// LookupEnv reads the routes' tokenEnv and secretEnv (nil:
	// os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Channel and Token are the fallback route (SLACK_CHANNEL_ID with
	// SLACK_BOT_TOKEN or SLACK_SECRET_ARN) used when Alerts is empty.
	Channel string
	Token   Token
	// APIURL and HTTPClient reach Slack (defaults: slack.DefaultAPIURL,
	// alerthttp's client) and, for HTTPClient, the webhooks.
	APIURL     string
	HTTPClient *http.Client
	Clock      clock.Clock  // nil: the real clock
	Logger     *slog.Logger // nil: discard
}

// Dispatcher is the alert dispatcher's Lambda handler (Handle): each bus
// event of an SQS batch is decided per route with the local Deliverer's
// decision (alert.Decide: the route's match, the silences and maintenance
// windows through the engine's matcher, the sent records) and delivered
// with the local sinks (internal/alert/slack, webhook, console: the same
// text, the same thread per pipeline, schedule and period, kept in the
// store).
type Dispatcher struct {
	c        DispatcherConfig
	silences alert.Silencer

	mu      sync.Mutex
	routes  []alert.Route
	version int64 // of the settings routes were built from
}

// NewDispatcher checks c and returns the dispatcher. Routes with a file
// sink are refused (a function's disk is not kept).
func NewDispatcher(c DispatcherConfig) (*Dispatcher, error) {
	if c.Store == nil {
		return nil, errors.New("alert-dispatcher: a store is required")
	}
	if c.Settings == nil {
		if err := checkRoutes(c.Alerts, c.Channel, c.Token, EnvAlertsConfig); err != nil {
			return nil, err
		}
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	// A passive engine, only to match silences and windows: it runs and
	// decides nothing.
	o := engine.Options{Store: c.Store, Clock: c.Clock, Passive: true, Maintenance: c.Maintenance, Logger: c.Logger}
	if c.Settings != nil {
		o.MaintenanceFrom = func(ctx context.Context) ([]silence.Window, error) {
			s, _, err := c.Settings(ctx)
			if err != nil {
				return nil, err
			}
			return s.Maintenance, nil
		}
	}
	return &Dispatcher{c: c, silences: engine.New(o)}, nil
}

// errNoRoutes: no alert route is configured anywhere (no stored alert
// config with alerts:, none in ALERTS_CONFIG, no SLACK_CHANNEL_ID).
var errNoRoutes = fmt.Errorf("no alert routes: store alerts: with `interlock deploy-config --config interlock.yaml`, or set %s (alerts:) or %s and its token", EnvAlertsConfig, EnvSlackChannel)

// checkRoutes refuses routes a function cannot deliver (file: its disk is
// not kept) and no route at all (errNoRoutes); source names where the
// routes came from.
func checkRoutes(alerts []pipeline.Alert, channel string, token Token, source string) error {
	if len(alerts) == 0 && (channel == "" || token == nil) {
		return fmt.Errorf("alert-dispatcher: %w", errNoRoutes)
	}
	for i, a := range alerts {
		if a.Type == pipeline.AlertFile {
			return fmt.Errorf("alert-dispatcher: %s: alerts[%d]: type file cannot be delivered by a function (its disk is not kept): use slack, webhook or console", source, i)
		}
	}
	return nil
}

// Handle delivers every message of the batch to each route that takes it
// and names as batch item failures (by messageId) the ones to receive
// again. Per route:
//
//   - not routed there, silenced (a silence or a maintenance window covers
//     it: logged with its id), or suppressed (the same eventId was the
//     sink's last delivery of its text: the bus, the queue or a redelivery
//     after another sink failed brought it again; an identical alert within
//     the hour): done;
//   - delivered: done, recorded (sent; alerted on the period);
//   - a failure the sink may get over (network, HTTP 5xx, 429, a rate
//     limit, a thread record unreadable) or a store that cannot be read or
//     record the outcome: the message fails, so SQS delivers it again after
//     its visibility timeout — the sinks that took it skip it then by their
//     sent record — and moves it to the alert DLQ after maxReceiveCount
//     receives;
//   - a permanent refusal (an unknown channel, a revoked token, HTTP 4xx):
//     logged and recorded as a dead letter of the sink, and done.
//
// A body that is not a bus event fails, so the queue's redrive keeps it
// (whole) in the alert DLQ, where an operator can read it. On the fallback
// route with no token configured every message is logged and done; a
// token that cannot be read fails every message.
func (d *Dispatcher) Handle(ctx context.Context, in events.SQSEvent) (events.SQSEventResponse, error) {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	fail := func(m events.SQSMessage) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
	}
	routes, err := d.routeList(ctx)
	if errors.Is(err, ErrNoToken) || errors.Is(err, errNoRoutes) {
		// Nothing to deliver to (the event stays in the log): retrying
		// would only fill the alert DLQ with every event.
		for _, m := range in.Records {
			d.c.Logger.Warn("alert-dispatcher: alert not delivered", "why", err, "messageId", m.MessageId, "body", m.Body)
		}
		return resp, nil
	}
	if err != nil {
		d.c.Logger.Error("alert-dispatcher: no alert routes", "err", err)
		for _, m := range in.Records {
			fail(m)
		}
		return resp, nil
	}
	for _, m := range in.Records {
		if !d.dispatch(ctx, routes, m) {
			fail(m)
		}
	}
	return resp, nil
}

// dispatch delivers one message to its routes and says whether it is
// done (no route failed in a way a retry may mend).
func (d *Dispatcher) dispatch(ctx context.Context, routes []alert.Route, m events.SQSMessage) bool {
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
	if !slices.ContainsFunc(routes, func(r alert.Route) bool { return r.Match.Decide(e) != alert.Skip }) {
		// The bus forwards every event (a route may ask for any): one
		// no route takes costs no read.
		return true
	}
	silenced, err := d.silences.Silenced(ctx, e.Time)
	if err != nil {
		log.Warn("alert-dispatcher: cannot read the silences: will be received again", "err", err)
		return false
	}
	done := true
	for _, r := range routes {
		if !d.deliver(ctx, r, e, silenced, m, log.With("sink", r.Sink.Name())) {
			done = false
		}
	}
	return done
}

// deliver decides and delivers e on one route and says whether it is done
// there.
func (d *Dispatcher) deliver(ctx context.Context, r alert.Route, e event.Event, silenced func(event.Event) (string, bool), m events.SQSMessage, log *slog.Logger) bool {
	name := r.Sink.Name()
	dec, err := alert.Decide(ctx, d.c.Store, name, r.Match, e, silenced, alert.DefaultSuppressFor)
	switch {
	case err != nil:
		log.Warn("alert-dispatcher: cannot tell whether the alert is to go out", "err", err)
		return false
	case dec.SilencedBy != "":
		log.Info("alert-dispatcher: alert silenced: not sent", "silence", dec.SilencedBy)
		return true
	case dec.Why != "":
		log.Info("alert-dispatcher: alert not sent again", "why", dec.Why)
		return true
	case !dec.Send:
		return true
	}
	retry, derr := r.Sink.Deliver(ctx, alert.NewAlert(e, name))
	// The sink's delivery state (last success, current run of failures),
	// recorded with the outcome as the local worker records it, so the
	// control plane's /v1/health and dashboard show a failing sink.
	state, err := d.deliveryState(ctx, name, derr, retry)
	if err != nil {
		log.Warn("alert-dispatcher: the sink's delivery state was not read", "err", err)
	}
	switch {
	case derr == nil:
		c := dec.Delivered(name, r.Match, e)
		c.DeliveryCursors = state
		if err := d.c.Store.Commit(ctx, c); err != nil {
			// The alert is out; failing now would send it twice.
			log.Warn("alert-dispatcher: sent, but the sent record was not saved", "err", err)
		}
		log.Debug("alert-dispatcher: sent")
		return true
	case retry:
		if err := d.c.Store.Commit(ctx, store.Change{DeliveryCursors: state}); err != nil {
			log.Warn("alert-dispatcher: the sink's failing attempt was not recorded", "err", err)
		}
		log.Warn("alert-dispatcher: delivery failed, will be received again", "receiveCount", m.Attributes["ApproximateReceiveCount"], "err", derr)
		return false
	}
	dl := alert.NewDeadLetter(name, e, receiveCount(m), derr, d.c.Clock.Now())
	if err := d.c.Store.Commit(ctx, store.Change{DeadLetters: []store.DeadLetter{dl.Record()}, DeliveryCursors: state}); err != nil {
		log.Warn("alert-dispatcher: refused for good, but the dead letter was not saved: will be received again", "refusal", derr, "err", err)
		return false
	}
	log.Error("alert-dispatcher: alert dead-lettered: the destination refused it for good", "err", derr)
	return true
}

// deliveryState is the sink's delivery record after an attempt
// (alert.DeliveryState on the record read now): nil when it cannot be
// read (the outcome is committed without it).
func (d *Dispatcher) deliveryState(ctx context.Context, sink string, derr error, retry bool) ([]store.DeliveryCursorWrite, error) {
	prev, err := d.c.Store.DeliveryCursorGet(ctx, sink)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return []store.DeliveryCursorWrite{{Cursor: alert.DeliveryState(prev, sink, d.c.Clock.Now(), derr, retry)}}, nil
}

// routeList returns the routes of the settings in force (read now when
// Settings is set), built again only when their version changed (the
// routes' secrets come from the environment, read once per process).
func (d *Dispatcher) routeList(ctx context.Context) ([]alert.Route, error) {
	alerts, version, source := d.c.Alerts, int64(0), EnvAlertsConfig
	if d.c.Settings != nil {
		s, v, err := d.c.Settings(ctx)
		if err != nil {
			return nil, fmt.Errorf("alert-dispatcher: %w", err)
		}
		alerts, version = s.Alerts, v
		if v > 0 {
			source = fmt.Sprintf("stored alert config v%d", v)
		}
		if err := checkRoutes(alerts, d.c.Channel, d.c.Token, source); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.routes != nil && d.version == version {
		return d.routes, nil
	}
	threads := alert.StoreThreads{Store: d.c.Store, Clock: d.c.Clock}
	if len(alerts) == 0 {
		token, err := d.c.Token.Token(ctx)
		if err != nil {
			return nil, err
		}
		routes, err := routing.SlackOnly(d.c.Channel, token, routing.Options{
			SlackAPIURL: d.c.APIURL, Client: d.c.HTTPClient, Threads: threads, Logger: d.c.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("alert-dispatcher: %w", err)
		}
		d.routes, d.version = routes, version
		return d.routes, nil
	}
	routes, err := routing.Build(alerts, routing.Options{
		LookupEnv: d.c.LookupEnv, Threads: threads, Client: d.c.HTTPClient, SlackAPIURL: d.c.APIURL,
		Console: os.Stdout, Logger: d.c.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("alert-dispatcher: %s: %w", source, err)
	}
	d.routes, d.version = routes, version
	return d.routes, nil
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
