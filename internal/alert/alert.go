// Package alert owns alert routing and delivery: which events reach which
// sink (Route, Match) and getting them there at least once, in event-log
// order, per sink (Deliverer). The sinks live in subpackages named after
// what they talk to — slack, webhook, openlineage, console, file — and every one passes
// the shared kit in alerttest; routing builds them from interlock.yaml.
//
// The event log is the outbox. Producers never call a sink: they commit
// events with the state change behind them, and the Deliverer reads the log
// after a durable per-sink cursor. Everything the Deliverer must remember —
// cursors, Slack threads, what was last sent, dead letters — is a store
// marker (markers.go), so it survives restarts and needs no table of its
// own.
//
// This package must never decide anything about runs or periods (it only
// reads events), never read the wall clock (time comes from the clock.Clock
// it is given and from event times), and never put a secret (a bot token, a
// signing secret, a secret-bearing URL) in an error, a log line or a
// stored marker.
package alert

import (
	"context"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// Sink is one alert destination. It is the contract every sink shares
// (Alertmanager's notify.Notifier): deliver one alert and say whether a
// failure is worth retrying.
type Sink interface {
	// Name identifies the sink durably: its cursor, threads and dead
	// letters are stored under it, so it must stay the same across
	// restarts for the same destination, differ between destinations, and
	// never contain a secret.
	Name() string
	// Deliver sends one alert. On failure, retry reports whether the same
	// call may succeed later (network errors, HTTP 5xx, 408, 429,
	// rate limits); false means it never will (HTTP 4xx, an unknown
	// channel, a refused token) and the Deliverer dead-letters the alert at
	// once. An error may carry a delay the destination asked for
	// (WithRetryAfter). The error must not contain a secret.
	//
	// The Deliverer calls Deliver for one sink sequentially, in event-log
	// order; a sink need not be safe for concurrent use by several
	// Deliverers.
	Deliver(ctx context.Context, a Alert) (retry bool, err error)
}

// Alert is one event on its way to one sink.
type Alert struct {
	Event event.Event
	// Sink is the name of the sink it is routed to.
	Sink string
	// Thread is the conversation the alert belongs to: the event's
	// pipeline, schedule and period. Sinks that thread (Slack) keep one
	// thread per Thread; it is zero for an event without a period (config,
	// pause and watchdog events), which never threads.
	Thread run.Key
}

// NewAlert returns the alert for e routed to sink.
func NewAlert(e event.Event, sink string) Alert {
	return Alert{Event: e, Sink: sink, Thread: ThreadOf(e)}
}

// ThreadOf returns the thread key of e: its pipeline, schedule and period,
// or the zero key when it has no period. An event blocked by an upstream
// root (Detail.blockedBy) belongs to the root's period: it is listed under
// the root's alert (docs/root-cause.md) — in a thread the root's alert
// started, or that it starts when the root's alert did not reach the sink
// (a silenced root).
func ThreadOf(e event.Event) run.Key {
	if b, ok := deps.BlockedByOf(e); ok && b.Date != "" {
		return b.Key()
	}
	if e.Date == "" {
		return run.Key{}
	}
	return run.Key{PipelineID: e.PipelineID, ScheduleID: e.ScheduleID, Period: e.Date}
}

// Envelope is the EventBridge-compatible form of the event, the body
// webhook and file sinks write.
func (a Alert) Envelope() event.Envelope { return a.Event.Envelope() }

// Blocked reports whether the event is blocked by an upstream root, and
// which: such an event is listed under the root's alert, not paged on its
// own.
func (a Alert) Blocked() (deps.BlockedBy, bool) { return deps.BlockedByOf(a.Event) }

// Level is the event's fixed level.
func (a Alert) Level() event.Level { return a.Event.Level() }
