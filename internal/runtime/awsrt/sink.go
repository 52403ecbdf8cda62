package awsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
)

// ExternalLog stores events from outside Interlock in the event log,
// marked so the outbox does not publish them again, once per event id (a
// second append of an id stores nothing and is not an error): the
// DynamoDB store's AppendExternal.
type ExternalLog interface {
	AppendExternal(ctx context.Context, events []event.Event) error
}

// Sink is the event sink's Lambda handler (Handle), invoked by an
// EventBridge rule with one event at a time.
type Sink struct {
	log    ExternalLog
	clk    clock.Clock
	logger *slog.Logger
}

// NewSink returns the sink storing into l; clk gives the time of an event
// that carries none (nil: the real clock), logger may be nil.
func NewSink(l ExternalLog, clk clock.Clock, logger *slog.Logger) *Sink {
	if clk == nil {
		clk = clock.Real{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sink{log: l, clk: clk, logger: logger}
}

// Handle stores one bus event in the event log unless it came from the
// outbox (source interlock with an eventId: it was read from the log, and
// storing it again would publish nothing but cost a write per event and
// could only duplicate it). Everything else — INFRA_ALARM reshaped by an
// input transformer, a raw CloudWatch alarm state change (made an
// INFRA_ALARM), another source's event — is appended as external, once
// per id: EventBridge's retries carry the same id, and an event without
// one gets an id from its content (BusEvent.Event).
//
// An event that cannot be read is an error naming what is wrong: the
// asynchronous invocation is retried twice and then goes to the function's
// on-failure destination, with the event. A store failure is an error too
// (retried the same way).
func (s *Sink) Handle(ctx context.Context, payload json.RawMessage) error {
	be, err := ParseBusEvent(payload)
	if err != nil {
		return fmt.Errorf("event-sink: %w", err)
	}
	e, origin, err := be.Event(s.clk.Now())
	if err != nil {
		return fmt.Errorf("event-sink: %w", err)
	}
	if origin == FromOutbox {
		s.logger.Debug("event-sink: event from the outbox: in the event log already", "event", e.ID, "type", e.Type)
		return nil
	}
	if err := s.log.AppendExternal(ctx, []event.Event{e}); err != nil {
		return fmt.Errorf("event-sink: store %s event %s: %w", e.Type, e.ID, err)
	}
	s.logger.Info("event-sink: stored", "event", e.ID, "type", e.Type, "source", be.Source, "pipeline", e.PipelineID)
	return nil
}
