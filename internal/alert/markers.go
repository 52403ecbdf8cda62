package alert

import (
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// Delivery state is kept in store markers under reserved pipeline ids that
// start with '#', which no pipeline id can hold (ids are [A-Za-z0-9._-]),
// with the sink name as schedule id and an empty period. The empty period
// matters: the watchdog reads every marker of recent periods in one
// snapshot, and period-less markers are outside that range, so alert
// bookkeeping never grows the watchdog's work. Per-period facts (threads,
// what was last sent) put the period in the kind instead.
//
//	#alert          sink  cursor                          Detail{cursor}       At: when saved
//	#alert          sink  dead:<event id>                 Detail{dead letter}  At: when given up
//	#alert-thread   sink  <pipeline>/<schedule>/<period>  Detail{ts, channel}  At: when started
//	#alert-sent     sink  <pipeline>/<schedule>/<period>/<TYPE>/<message hash>
//	                                                      Detail{id}           At: the event's time
//	#alert-alerted  sink  <pipeline>/<schedule>/<period>  Detail{id, type}     At: the event's time
//
// Listing "#alert" for a sink returns its cursor and dead letters only,
// which stay few; the per-period kinds are read by exact key.
const (
	nsDelivery = "#alert"
	nsThread   = "#alert-thread"
	nsSent     = "#alert-sent"
	nsAlerted  = "#alert-alerted"

	kindCursor     = "cursor"
	kindDeadPrefix = "dead:"
)

func sinkKey(ns, sink string) run.Key { return run.Key{PipelineID: ns, ScheduleID: sink} }

func periodKind(k run.Key) string { return k.PipelineID + "/" + k.ScheduleID + "/" + k.Period }

func eventPeriod(e event.Event) run.Key {
	return run.Key{PipelineID: e.PipelineID, ScheduleID: e.ScheduleID, Period: e.Date}
}

func cursorMarker(sink string, c store.Cursor, at time.Time) store.MarkerWrite {
	return store.MarkerWrite{Marker: store.Marker{
		Key: sinkKey(nsDelivery, sink), Kind: kindCursor, At: at, Detail: run.Detail("cursor", c.String()),
	}}
}

func decodeCursor(m store.Marker) (store.Cursor, error) {
	return store.ParseCursor(str(m.Detail, "cursor"))
}

// sent is the last delivery of one alert text (period, type, message) to
// one sink: the basis of duplicate and repeat suppression.
type sent struct {
	ID string
	At time.Time // the event's time
}

func sentKind(e event.Event, hash string) string {
	return periodKind(eventPeriod(e)) + "/" + string(e.Type) + "/" + hash
}

func sentMarker(sink string, e event.Event, hash string) store.MarkerWrite {
	return store.MarkerWrite{Marker: store.Marker{
		Key: sinkKey(nsSent, sink), Kind: sentKind(e, hash), At: e.Time, Detail: run.Detail("id", e.ID),
	}}
}

func decodeSent(m store.Marker) sent { return sent{ID: str(m.Detail, "id"), At: m.At} }

func alertedMarker(sink string, e event.Event) store.MarkerWrite {
	return store.MarkerWrite{Marker: store.Marker{
		Key: sinkKey(nsAlerted, sink), Kind: periodKind(eventPeriod(e)), At: e.Time,
		Detail: run.Detail("id", e.ID, "type", string(e.Type)),
	}}
}

func deadMarker(dl DeadLetter) store.MarkerWrite {
	return store.MarkerWrite{Marker: store.Marker{
		Key: sinkKey(nsDelivery, dl.Sink), Kind: kindDeadPrefix + dl.EventID, At: dl.At,
		Detail: run.Detail(
			"type", string(dl.Type), "pipelineId", dl.PipelineID, "scheduleId", dl.ScheduleID,
			"date", dl.Period, "eventTime", dl.EventTime, "attempts", dl.Attempts, "error", dl.Error),
	}}
}

func decodeDead(m store.Marker, id string) DeadLetter {
	dl := DeadLetter{
		Sink: m.Key.ScheduleID, EventID: id, At: m.At,
		Type: event.Type(str(m.Detail, "type")), PipelineID: str(m.Detail, "pipelineId"),
		ScheduleID: str(m.Detail, "scheduleId"), Period: str(m.Detail, "date"), Error: str(m.Detail, "error"),
	}
	if v, ok := m.Detail.Get("attempts"); ok {
		n, _ := v.Int()
		dl.Attempts = int(n)
	}
	if t, err := time.Parse(time.RFC3339, str(m.Detail, "eventTime")); err == nil {
		dl.EventTime = t
	}
	return dl
}

func str(o sensor.Object, field string) string {
	v, _ := o.Get(field)
	s, _ := v.Str()
	return s
}
