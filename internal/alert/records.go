package alert

import (
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
