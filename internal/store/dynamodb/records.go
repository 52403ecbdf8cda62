package dynamodb

import (
	"fmt"
	"strconv"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// Items of each record kind: how a record becomes an item (its key, its
// attributes, the index keys it carries, its ttl) and back. Index key
// attributes are written only on the items an index is for, so every
// index is sparse.

// Attribute names shared by several kinds.
const (
	aPipeline = "pipelineId"
	aSchedule = "scheduleId"
	aPeriod   = "period"
	aVersion  = "version"
	aDetail   = "detail"
	aAt       = "at"
	aKind     = "kind"
	aKey      = "key"
	aData     = "data"
)

// pipelineItem is a pipeline row: PIPELINE#<id> / CONFIG.
func pipelineItem(p store.Pipeline, version int64) *itemWriter {
	w := newItem(pipelinePK(p.ID), skConfig)
	w.str("id", p.ID)
	w.num(aVersion, version)
	w.numNZ("configVersion", p.ConfigVersion)
	w.bytes("doc", p.Doc)
	w.str("hash", p.Hash)
	w.str("file", p.File)
	w.time("firstLoadedAt", p.FirstLoadedAt)
	w.time("updatedAt", p.UpdatedAt)
	w.flag("paused", p.Paused)
	w.time("pausedUntil", p.PausedUntil)
	w.time("pausedAt", p.PausedAt)
	w.time("resumedAt", p.ResumedAt)
	w.time("removedAt", p.RemovedAt)
	w.time("watchChangedAt", p.WatchChangedAt)
	if len(p.PauseWindows) > 0 {
		pairs := make([][2]*int64, len(p.PauseWindows))
		for i, pw := range p.PauseWindows {
			for j, t := range []time.Time{pw.From, pw.To} {
				if !t.IsZero() {
					n := clampNanos(t)
					pairs[i][j] = &n
				}
			}
		}
		w.json("pauseWindows", pairs, len(pairs))
	}
	w.str(idxPipelines.pk, "PIPELINES#"+shardOf(p.ID))
	w.str(idxPipelines.sk, p.ID)
	return w
}

func decodePipeline(it item) (store.Pipeline, error) {
	r := readItem(it)
	p := store.Pipeline{
		ID:             r.str("id"),
		Version:        r.num(aVersion),
		ConfigVersion:  r.num("configVersion"),
		Doc:            r.bytes("doc"),
		Hash:           r.str("hash"),
		File:           r.str("file"),
		FirstLoadedAt:  r.time("firstLoadedAt"),
		UpdatedAt:      r.time("updatedAt"),
		Paused:         r.flag("paused"),
		PausedUntil:    r.time("pausedUntil"),
		PausedAt:       r.time("pausedAt"),
		ResumedAt:      r.time("resumedAt"),
		RemovedAt:      r.time("removedAt"),
		WatchChangedAt: r.time("watchChangedAt"),
	}
	var pairs [][2]*int64
	r.json("pauseWindows", &pairs)
	at := func(n *int64) time.Time {
		if n == nil {
			return time.Time{}
		}
		return time.Unix(0, *n).UTC()
	}
	for _, pair := range pairs {
		p.PauseWindows = append(p.PauseWindows, pause.Window{From: at(pair[0]), To: at(pair[1])})
	}
	return p, r.err
}

// calendarItem is a calendar: CALENDARS / CALENDAR#<name> (one partition:
// a project has a handful).
func calendarItem(c store.Calendar, version int64) *itemWriter {
	w := newItem(pkCalendars, skCalendarPrefix+c.Name)
	w.str("name", c.Name)
	w.num(aVersion, version)
	days := make([]int, len(c.Days))
	for i, d := range c.Days {
		days[i] = int(d)
	}
	w.json("days", days, len(days))
	dates := make([]string, len(c.Dates))
	for i, d := range c.Dates {
		dates[i] = d.String()
	}
	w.json("dates", dates, len(dates))
	w.str("file", c.File)
	w.time("updatedAt", c.UpdatedAt)
	w.time("removedAt", c.RemovedAt)
	return w
}

func decodeCalendar(it item) (store.Calendar, error) {
	r := readItem(it)
	c := store.Calendar{Name: r.str("name"), Version: r.num(aVersion), File: r.str("file"),
		UpdatedAt: r.time("updatedAt"), RemovedAt: r.time("removedAt")}
	var days []int
	r.json("days", &days)
	for _, d := range days {
		c.Days = append(c.Days, time.Weekday(d))
	}
	var dates []string
	r.json("dates", &dates)
	for _, s := range dates {
		d, err := schedule.ParseDate(s)
		if err != nil {
			r.fail("dates", err)
		}
		c.Dates = append(c.Dates, d)
	}
	return c, r.err
}

// sensorStateItem is the store's own sensor record: PIPELINE#<id> /
// SENSORSTATE#<key>. The inbox item SENSOR#<key> beside it is anyone's
// (inbox.go).
func (s *Store) sensorStateItem(x store.Sensor, version int64) *itemWriter {
	w := newItem(pipelinePK(x.PipelineID), sensorStateSK(x.Key))
	w.str(aPipeline, x.PipelineID)
	w.str(aKey, x.Key)
	w.object(aData, x.Data)
	w.num(aVersion, version)
	w.time("changedAt", x.ChangedAt)
	w.time("writtenAt", x.WrittenAt)
	changed := sortTime(x.ChangedAt)
	w.str(lsiChanged.sk, changed+"#"+keyText(x.Key))
	if x.Watched {
		// Only watched sensors are in the sparse cross-pipeline index:
		// its key attributes are what say Watched (decodeSensor).
		w.str(idxSensorsChanged.pk, "SENSORCHG#"+shardOf(x.PipelineID))
		w.str(idxSensorsChanged.sk, changed+"#"+x.PipelineID+"#"+keyText(x.Key))
	}
	if _, p, ok := schedule.SplitPeriodKey(x.Key); ok {
		s.setPeriodTTL(w, p.String(), x.WrittenAt)
	}
	return w
}

func decodeSensor(it item) (store.Sensor, error) {
	r := readItem(it)
	x := store.Sensor{PipelineID: r.str(aPipeline), Key: r.str(aKey), Data: r.object(aData), Version: r.num(aVersion),
		ChangedAt: r.time("changedAt"), WrittenAt: r.time("writtenAt"), Watched: r.has(idxSensorsChanged.pk)}
	return x, r.err
}

// runItem is a run: PIPELINE#<id> / TRIGGER#<schedule>#<period>, the
// seed's trigger lock. Its ttl is set only once it is terminal.
func (s *Store) runItem(x run.Run, version int64) *itemWriter {
	k := x.Key
	w := newItem(pipelinePK(k.PipelineID), runSK(k.ScheduleID, k.Period))
	w.periodKey(k)
	w.num(aVersion, version)
	w.str("state", string(x.State))
	w.str("outcome", string(x.Outcome))
	w.str("cause", string(x.Cause))
	w.numNZ("generation", int64(x.Generation))
	w.numNZ("attempt", int64(x.Attempt))
	w.time("createdAt", x.CreatedAt)
	w.time("updatedAt", x.UpdatedAt)
	w.time("stateSince", x.StateSince)
	w.time("expiresAt", x.ExpiresAt)
	w.time("evalStartedAt", x.EvalStartedAt)
	w.time("evalDeadline", x.EvalDeadline)
	w.numNZ("triggerErrors", int64(x.TriggerErrors))
	w.flag("triggerInFlight", x.TriggerInFlight)
	w.str("jobRunId", x.JobRunID)
	w.json("jobMeta", x.JobMeta, len(x.JobMeta))
	w.time("jobStartedAt", x.JobStartedAt)
	w.time("pollDeadline", x.PollDeadline)
	w.time("endedAt", x.EndedAt)
	if f := x.LastFailure; f != nil {
		w.json("lastFailure", map[string]string{"category": string(f.Category), "message": f.Message}, 1)
	}
	w.numNZ("configVersion", x.ConfigVersion)

	byPeriod := k.Period + "#" + k.ScheduleID
	w.str(lsiPeriod.sk, byPeriod)
	shard := shardOf(k.PipelineID)
	w.str(idxRunsByPeriod.pk, "RUNS#"+shard)
	w.str(idxRunsByPeriod.sk, k.Period+"#"+k.PipelineID+"#"+k.ScheduleID)
	w.str(idxRunsByUpdate.pk, "RUNUPD#"+shard)
	w.str(idxRunsByUpdate.sk, sortTime(x.UpdatedAt)+"#"+k.PipelineID+"#"+k.ScheduleID+"#"+k.Period)
	if x.State.Terminal() {
		s.setPeriodTTL(w, k.Period, x.UpdatedAt)
	} else {
		w.str(lsiActive.sk, byPeriod)
		w.str(idxActiveRuns.pk, "ACTIVE#"+shard)
		w.str(idxActiveRuns.sk, k.Period+"#"+k.PipelineID+"#"+k.ScheduleID)
	}
	return w
}

func decodeRun(it item) (run.Run, error) {
	r := readItem(it)
	x := run.Run{
		Key:             r.periodKey(),
		Version:         r.num(aVersion),
		State:           run.State(r.str("state")),
		Outcome:         run.Outcome(r.str("outcome")),
		Cause:           run.Cause(r.str("cause")),
		Generation:      int(r.num("generation")),
		Attempt:         int(r.num("attempt")),
		CreatedAt:       r.time("createdAt"),
		UpdatedAt:       r.time("updatedAt"),
		StateSince:      r.time("stateSince"),
		ExpiresAt:       r.time("expiresAt"),
		EvalStartedAt:   r.time("evalStartedAt"),
		EvalDeadline:    r.time("evalDeadline"),
		TriggerErrors:   int(r.num("triggerErrors")),
		TriggerInFlight: r.flag("triggerInFlight"),
		JobRunID:        r.str("jobRunId"),
		JobStartedAt:    r.time("jobStartedAt"),
		PollDeadline:    r.time("pollDeadline"),
		EndedAt:         r.time("endedAt"),
		ConfigVersion:   r.num("configVersion"),
	}
	r.json("jobMeta", &x.JobMeta)
	if it["lastFailure"] != nil {
		var f map[string]string
		r.json("lastFailure", &f)
		x.LastFailure = &run.Failure{Category: run.Category(f["category"]), Message: f["message"]}
	}
	return x, r.err
}

// ledgerItem is a ledger entry in the rerun table: PIPELINE#<id> /
// RERUN#<schedule>#<period>#<seq>.
func (s *Store) ledgerItem(l store.LedgerEntry) *itemWriter {
	w := newItem(pipelinePK(l.Key.PipelineID), ledgerSK(l.Key, l.Seq))
	w.periodKey(l.Key)
	w.num("seq", int64(l.Seq))
	w.str("reason", l.Reason)
	w.str("source", l.Source)
	w.time(aAt, l.At)
	s.setPeriodTTL(w, l.Key.Period, l.At)
	return w
}

func decodeLedger(it item) (store.LedgerEntry, error) {
	r := readItem(it)
	l := store.LedgerEntry{Key: r.periodKey(), Seq: int(r.num("seq")), Reason: r.str("reason"), Source: r.str("source"), At: r.time(aAt)}
	return l, r.err
}

// baselineItem is a post-run baseline: PIPELINE#<id> /
// BASELINE#<schedule>#<period>.
func (s *Store) baselineItem(b store.Baseline) *itemWriter {
	w := newItem(pipelinePK(b.Key.PipelineID), baselineSK(b.Key))
	w.periodKey(b.Key)
	w.json("sensors", b.Sensors, len(b.Sensors))
	w.time("capturedAt", b.CapturedAt)
	s.setPeriodTTL(w, b.Key.Period, b.CapturedAt)
	return w
}

func decodeBaseline(it item) (store.Baseline, error) {
	r := readItem(it)
	b := store.Baseline{Key: r.periodKey(), CapturedAt: r.time("capturedAt")}
	r.json("sensors", &b.Sensors)
	return b, r.err
}

// markerItem is a marker: PIPELINE#<id> / MARKER#<schedule>#<period>#<kind>.
// A pipeline-level marker (empty period) carries no ttl and is not in the
// by-period index, which PeriodFrom (a date) excludes it from anyway.
func (s *Store) markerItem(m store.Marker) *itemWriter {
	k := m.Key
	w := newItem(pipelinePK(k.PipelineID), markerSK(k, m.Kind))
	w.periodKey(k)
	w.str(aKind, m.Kind)
	w.time(aAt, m.At)
	w.object(aDetail, m.Detail)
	shard := shardOf(k.PipelineID)
	w.str(idxMarkersByWrite.pk, "MARKERW#"+shard)
	w.str(idxMarkersByWrite.sk, sortTime(m.At)+"#"+k.PipelineID+"#"+k.ScheduleID+"#"+k.Period+"#"+m.Kind)
	if k.Period != "" {
		w.str(idxMarkersByPeriod.pk, "MARKERS#"+shard)
		w.str(idxMarkersByPeriod.sk, k.Period+"#"+k.PipelineID+"#"+k.ScheduleID+"#"+m.Kind)
		s.setPeriodTTL(w, k.Period, m.At)
	}
	return w
}

func decodeMarker(it item) (store.Marker, error) {
	r := readItem(it)
	m := store.Marker{Key: r.periodKey(), Kind: r.str(aKind), At: r.time(aAt), Detail: r.object(aDetail)}
	return m, r.err
}

// timerItem is a timer: TIMER#<key> / TIMER (a timer is read by its key
// alone). Timers never carry a ttl: an armed timer is work to do.
func timerItem(t store.Timer) *itemWriter {
	w := newItem(timerPK(t.Key), skTimer)
	w.str(aKey, t.Key)
	w.str(aKind, t.Kind)
	w.periodKey(t.Run)
	w.time("dueAt", t.DueAt)
	w.object(aDetail, t.Detail)
	shard := shardOf(t.Run.PipelineID)
	due := sortTime(t.DueAt) + "#" + t.Key
	w.str(idxTimersDue.pk, "DUE#"+shard)
	w.str(idxTimersDue.sk, due)
	w.str(idxTimersByKind.pk, "KIND#"+t.Kind+"#"+shard)
	w.str(idxTimersByKind.sk, due)
	return w
}

func decodeTimer(it item) (store.Timer, error) {
	r := readItem(it)
	t := store.Timer{Key: r.str(aKey), Kind: r.str(aKind), Run: r.periodKey(), DueAt: r.time("dueAt"), Detail: r.object(aDetail)}
	return t, r.err
}

// eventItem is an event at its position: EV#<shard> / <seq>. It is in the
// by-pipeline index always, the by-period index when it names a period,
// the by-type index always.
func (s *Store) eventItem(e event.Event, external bool) *itemWriter {
	w := newItem(eventPK(e.Shard), eventSK(e.Seq))
	w.str("id", e.ID)
	w.num("shard", int64(e.Shard))
	w.num("seq", e.Seq)
	w.time("time", e.Time)
	w.str("type", string(e.Type))
	w.str(aPipeline, e.PipelineID)
	w.str(aSchedule, e.ScheduleID)
	w.str("date", e.Date)
	w.str("message", e.Message)
	w.object(aDetail, e.Detail)
	w.flag("external", external)
	w.str(idxEventsByPipeline.pk, "EVP#"+e.PipelineID)
	if e.Date != "" {
		w.str(idxEventsByPeriod.pk, "EVD#"+e.PipelineID+"#"+e.Date)
	}
	w.str(idxEventsByType.pk, "EVT#"+string(e.Type)+"#"+strconv.Itoa(e.Shard))
	s.setTimeTTL(w, e.Time)
	return w
}

func decodeEvent(it item) (event.Event, bool, error) {
	r := readItem(it)
	e := event.Event{ID: r.str("id"), Shard: int(r.num("shard")), Seq: r.num("seq"), Time: r.time("time"),
		Type: event.Type(r.str("type")), PipelineID: r.str(aPipeline), ScheduleID: r.str(aSchedule),
		Date: r.str("date"), Message: r.str("message"), Detail: r.object(aDetail)}
	return e, r.flag("external"), r.err
}

// Alert bookkeeping, in the events table under SINK#<sink>; cursors under
// ALERTCURSORS (never expire).

func deliveryCursorItem(c store.DeliveryCursor) *itemWriter {
	w := newItem(pkAlertCursors, c.Sink)
	w.str("sink", c.Sink)
	w.str("cursor", c.Cursor.String())
	w.time(aAt, c.At)
	w.time("deliveredAt", c.DeliveredAt)
	w.time("failingSince", c.Failing.Since)
	w.numNZ("failingAttempts", int64(c.Failing.Attempts))
	w.str("failingError", c.Failing.Error)
	return w
}

func decodeDeliveryCursor(it item) (store.DeliveryCursor, error) {
	r := readItem(it)
	c := store.DeliveryCursor{Sink: r.str("sink"), At: r.time(aAt), DeliveredAt: r.time("deliveredAt"),
		Failing: store.SinkFailing{Since: r.time("failingSince"), Attempts: int(r.num("failingAttempts")), Error: r.str("failingError")}}
	cur, err := store.ParseCursor(r.str("cursor"))
	if err != nil {
		r.fail("cursor", err)
	}
	c.Cursor = cur
	return c, r.err
}

func (w *itemWriter) periodKey(k run.Key) {
	w.str(aPipeline, k.PipelineID)
	w.str(aSchedule, k.ScheduleID)
	w.str(aPeriod, k.Period)
}

func (r *itemReader) periodKey() run.Key {
	return run.Key{PipelineID: r.str(aPipeline), ScheduleID: r.str(aSchedule), Period: r.str(aPeriod)}
}

// sinkItem is what every alert record of a sink holds: SINK#<sink> / sk,
// the sink, the period it is of, when it was written and a ttl from then.
func (s *Store) sinkItem(sink, sk string, k run.Key, at time.Time) *itemWriter {
	w := newItem(sinkPK(sink), sk)
	w.str("sink", sink)
	w.periodKey(k)
	w.time(aAt, at)
	s.setTimeTTL(w, at)
	return w
}

func (s *Store) deadLetterItem(d store.DeadLetter) *itemWriter {
	w := s.sinkItem(d.Sink, deadSK(d.EventID), d.Key, d.At)
	w.str("eventId", d.EventID)
	w.str("type", string(d.Type))
	w.time("eventTime", d.EventTime)
	w.numNZ("attempts", int64(d.Attempts))
	w.str("error", d.Error)
	return w
}

func decodeDeadLetter(it item) (store.DeadLetter, error) {
	r := readItem(it)
	d := store.DeadLetter{Sink: r.str("sink"), EventID: r.str("eventId"), Type: event.Type(r.str("type")), Key: r.periodKey(),
		EventTime: r.time("eventTime"), Attempts: int(r.num("attempts")), Error: r.str("error"), At: r.time(aAt)}
	return d, r.err
}

func (s *Store) threadItem(a store.AlertThread) *itemWriter {
	w := s.sinkItem(a.Sink, threadSK(a.Key), a.Key, a.At)
	w.str("ts", a.TS)
	w.str("channel", a.Channel)
	return w
}

func decodeThread(it item) (store.AlertThread, error) {
	r := readItem(it)
	a := store.AlertThread{Sink: r.str("sink"), Key: r.periodKey(), TS: r.str("ts"), Channel: r.str("channel"), At: r.time(aAt)}
	return a, r.err
}

func (s *Store) sentItem(a store.AlertSent) *itemWriter {
	w := s.sinkItem(a.Sink, sentSK(a.Key, string(a.Type), a.Hash), a.Key, a.At)
	w.str("type", string(a.Type))
	w.str("hash", a.Hash)
	w.str("eventId", a.EventID)
	return w
}

func decodeSent(it item) (store.AlertSent, error) {
	r := readItem(it)
	a := store.AlertSent{Sink: r.str("sink"), Key: r.periodKey(), Type: event.Type(r.str("type")), Hash: r.str("hash"),
		EventID: r.str("eventId"), At: r.time(aAt)}
	return a, r.err
}

func (s *Store) alertedItem(a store.AlertAlerted) *itemWriter {
	w := s.sinkItem(a.Sink, alertedSK(a.Key), a.Key, a.At)
	w.str("eventId", a.EventID)
	w.str("type", string(a.Type))
	return w
}

func decodeAlerted(it item) (store.AlertAlerted, error) {
	r := readItem(it)
	a := store.AlertAlerted{Sink: r.str("sink"), Key: r.periodKey(), EventID: r.str("eventId"), Type: event.Type(r.str("type")), At: r.time(aAt)}
	return a, r.err
}

// decodeAll decodes items with dec, naming the first bad one.
func decodeAll[T any](items []item, dec func(item) (T, error)) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, it := range items {
		v, err := dec(it)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// describe names an item for messages.
func describe(it item) string {
	r := readItem(it)
	return fmt.Sprintf("%s/%s", r.text(attrPK), r.text(attrSK))
}
