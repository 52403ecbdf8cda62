package store

import (
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// Alert delivery bookkeeping (internal/alert): typed records, each read
// by its key within one sink, so that every backend serves each read from
// one key (docs/architecture.md, "Event order and delivery cursors").
// Every record has an At: retention deletes the per-period ones older
// than its cutoff (ExpireParams.Before); cursors never expire.

// DeliveryCursor is how far an alert sink is in the event log: every
// event Cursor has passed is done for the sink (delivered, skipped or
// dead-lettered).
type DeliveryCursor struct {
	Sink   string
	Cursor Cursor
	At     time.Time // when it was saved
	// DeliveredAt is when the sink last accepted an alert; zero: never
	// (a cursor just started, or moved over skipped events only).
	DeliveredAt time.Time
	// Failing is the sink's current run of failed attempts at its next
	// alert (zero Since: its last attempt succeeded, or none was made).
	Failing SinkFailing
}

// SinkFailing is a run of failed delivery attempts: since the first,
// how many, and the last error (as a dead letter would keep it).
type SinkFailing struct {
	Since    time.Time
	Attempts int
	Error    string
}

// DeliveryCursorWrite puts a sink's cursor. With IfAbsent, an existing
// cursor of the sink is a conflict (two processes starting one sink);
// without, it is replaced.
type DeliveryCursorWrite struct {
	Cursor   DeliveryCursor
	IfAbsent bool
}

// DeadLetter is an alert a sink never accepted; the cursor moved past it.
// Its key is (Sink, EventID); a put replaces.
type DeadLetter struct {
	Sink      string
	EventID   string
	Type      event.Type
	Key       run.Key // the event's pipeline, schedule and period
	EventTime time.Time
	Attempts  int
	Error     string
	At        time.Time // when it was given up
}

// AlertThread is the conversation a sink started for a period (Slack's
// thread: TS is its first message, Channel where it is). Its key is (Sink,
// Key); the first one written wins: writing one that exists is a
// conflict.
type AlertThread struct {
	Sink    string
	Key     run.Key
	TS      string
	Channel string
	At      time.Time // when it was started
}

// AlertSent is the last delivery of one alert text to a sink: keyed by
// (Sink, Key, Type, Hash of the message); a put replaces. It is what
// duplicate and repeat suppression read.
type AlertSent struct {
	Sink    string
	Key     run.Key
	Type    event.Type
	Hash    string
	EventID string
	At      time.Time // the event's time
}

// AlertAlerted says a sink delivered a problem for a period (so the
// all-clear that follows is worth sending): keyed by (Sink, Key); a put
// replaces.
type AlertAlerted struct {
	Sink    string
	Key     run.Key
	EventID string
	Type    event.Type
	At      time.Time // the event's time
}
