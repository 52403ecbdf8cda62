package alert

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// Delivery state is kept in the store's alert records (store/alerts.go),
// each read by its key within one sink: the sink's cursor, its dead
// letters, the thread it started for a period, the last delivery of each
// alert text (store.AlertSent) and whether it alerted for a period
// (store.AlertAlerted). None of it is a marker: the watchdog's snapshot of
// recent periods never reads it.

func eventPeriod(e event.Event) run.Key {
	return run.Key{PipelineID: e.PipelineID, ScheduleID: e.ScheduleID, Period: e.Date}
}

func cursorWrite(sink string, c store.Cursor, at time.Time) store.DeliveryCursorWrite {
	return store.DeliveryCursorWrite{Cursor: store.DeliveryCursor{Sink: sink, Cursor: c, At: at}}
}

func sentRecord(sink string, e event.Event, hash string) store.AlertSent {
	return store.AlertSent{Sink: sink, Key: eventPeriod(e), Type: e.Type, Hash: hash, EventID: e.ID, At: e.Time}
}

func alertedRecord(sink string, e event.Event) store.AlertAlerted {
	return store.AlertAlerted{Sink: sink, Key: eventPeriod(e), EventID: e.ID, Type: e.Type, At: e.Time}
}

func (dl DeadLetter) record() store.DeadLetter {
	return store.DeadLetter{
		Sink: dl.Sink, EventID: dl.EventID, Type: dl.Type,
		Key:       run.Key{PipelineID: dl.PipelineID, ScheduleID: dl.ScheduleID, Period: dl.Period},
		EventTime: dl.EventTime, Attempts: dl.Attempts, Error: dl.Error, At: dl.At,
	}
}

func deadLetterOf(r store.DeadLetter) DeadLetter {
	return DeadLetter{
		Sink: r.Sink, EventID: r.EventID, Type: r.Type,
		PipelineID: r.Key.PipelineID, ScheduleID: r.Key.ScheduleID, Period: r.Key.Period,
		EventTime: r.EventTime, Attempts: r.Attempts, Error: r.Error, At: r.At,
	}
}

// keyText names a period in messages.
func keyText(k run.Key) string { return k.PipelineID + "/" + k.ScheduleID + "/" + k.Period }

// SentRecord is the record of e's delivery to sink (store.AlertSent):
// what a runtime that delivers without a Deliverer (the AWS alert
// dispatcher) commits after a delivery, so a redelivered event is known.
func SentRecord(sink string, e event.Event) store.AlertSent {
	return sentRecord(sink, e, messageHash(e))
}

// Delivered reports whether sink's last delivery of e's text (period,
// type, message) was e itself, by id: the event came again (an outbox or
// a queue delivers at least once) and must not be sent twice.
func Delivered(ctx context.Context, st store.Store, sink string, e event.Event) (bool, error) {
	last, err := st.AlertSentGet(ctx, sink, eventPeriod(e), e.Type, messageHash(e))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("alert: sink %s: read sent record: %w", sink, err)
	}
	return last.EventID == e.ID, nil
}

// NewDeadLetter is the dead letter of e on sink, given up at at after
// attempts with failure (kept clipped; sinks' errors hold no secret).
func NewDeadLetter(sink string, e event.Event, attempts int, failure error, at time.Time) DeadLetter {
	return DeadLetter{
		Sink: sink, EventID: e.ID, Type: e.Type,
		PipelineID: e.PipelineID, ScheduleID: e.ScheduleID, Period: e.Date, EventTime: e.Time,
		Attempts: attempts, Error: clip(failure.Error(), maxErrorText), At: at,
	}
}

// Record is the dead letter as the store keeps it.
func (dl DeadLetter) Record() store.DeadLetter { return dl.record() }
