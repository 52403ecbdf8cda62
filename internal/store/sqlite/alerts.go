package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Alert delivery bookkeeping (store/alerts.go, migration 0008): one table
// per record, read by primary key within a sink.

const (
	sqlCursorInsert  = `INSERT INTO delivery_cursors (` + sqlstore.CursorCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)`
	sqlCursorPut     = `INSERT OR REPLACE INTO delivery_cursors (` + sqlstore.CursorCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)`
	sqlDeadLetterPut = `INSERT OR REPLACE INTO dead_letters (` + sqlstore.DeadLetterCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlThreadInsert  = `INSERT INTO alert_threads (` + sqlstore.ThreadCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)`
	sqlSentPut       = `INSERT OR REPLACE INTO alerts_sent (` + sqlstore.SentCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqlAlertedPut    = `INSERT OR REPLACE INTO alerts_alerted (` + sqlstore.AlertedCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)`
)

// DeliveryCursorGet returns a sink's cursor.
func (s *Store) DeliveryCursorGet(ctx context.Context, sink string) (store.DeliveryCursor, error) {
	return get(ctx, s.read, sqlstore.ScanCursor, "delivery cursor of "+sink,
		`SELECT `+sqlstore.CursorCols+` FROM delivery_cursors WHERE sink = ?`, sink)
}

// DeliveryCursorList returns every sink's cursor, by sink.
func (s *Store) DeliveryCursorList(ctx context.Context) ([]store.DeliveryCursor, error) {
	return list(ctx, s.read, sqlstore.ScanCursor, "delivery cursors",
		`SELECT `+sqlstore.CursorCols+` FROM delivery_cursors ORDER BY sink`)
}

// DeadLetterList returns a sink's dead letters, oldest first.
func (s *Store) DeadLetterList(ctx context.Context, sink string) ([]store.DeadLetter, error) {
	return list(ctx, s.read, sqlstore.ScanDeadLetter, "dead letters of "+sink,
		`SELECT `+sqlstore.DeadLetterCols+` FROM dead_letters WHERE sink = ? ORDER BY at, event_time, event_id`, sink)
}

// AlertThreadGet returns the thread a sink started for a period.
func (s *Store) AlertThreadGet(ctx context.Context, sink string, key run.Key) (store.AlertThread, error) {
	return get(ctx, s.read, sqlstore.ScanThread, "alert thread of "+sink+" for "+keyString(key),
		`SELECT `+sqlstore.ThreadCols+` FROM alert_threads WHERE sink = ? AND pipeline_id = ? AND schedule_id = ? AND period = ?`,
		sink, key.PipelineID, key.ScheduleID, key.Period)
}

// AlertSentGet returns the last delivery of one alert text to a sink.
func (s *Store) AlertSentGet(ctx context.Context, sink string, key run.Key, typ event.Type, hash string) (store.AlertSent, error) {
	return get(ctx, s.read, sqlstore.ScanSent, "alert sent to "+sink+" for "+keyString(key),
		`SELECT `+sqlstore.SentCols+` FROM alerts_sent WHERE sink = ? AND pipeline_id = ? AND schedule_id = ? AND period = ? AND type = ? AND hash = ?`,
		sink, key.PipelineID, key.ScheduleID, key.Period, string(typ), hash)
}

// AlertAlertedGet returns the record that a sink alerted for a period.
func (s *Store) AlertAlertedGet(ctx context.Context, sink string, key run.Key) (store.AlertAlerted, error) {
	return get(ctx, s.read, sqlstore.ScanAlerted, "alerted record of "+sink+" for "+keyString(key),
		`SELECT `+sqlstore.AlertedCols+` FROM alerts_alerted WHERE sink = ? AND pipeline_id = ? AND schedule_id = ? AND period = ?`,
		sink, key.PipelineID, key.ScheduleID, key.Period)
}

// alertOps are the writes of a Change's alert records.
func alertOps(e *sqlstore.Encoder, c store.Change, add func(op, error)) {
	for _, w := range c.DeliveryCursors {
		q := sqlCursorPut
		if w.IfAbsent {
			q = sqlCursorInsert // an existing cursor fails on the primary key
		}
		d := w.Cursor
		add(op{what: "delivery cursor of " + d.Sink, query: q,
			args: []any{d.Sink, d.Cursor.String(), e.Time("delivery cursor at", d.At), e.Time("delivered at", d.DeliveredAt),
				e.Time("failing since", d.Failing.Since), d.Failing.Attempts, d.Failing.Error}}, nil)
	}
	for _, d := range c.DeadLetters {
		add(op{what: "dead letter " + d.EventID + " of " + d.Sink, query: sqlDeadLetterPut,
			args: []any{d.Sink, d.EventID, string(d.Type), d.Key.PipelineID, d.Key.ScheduleID, d.Key.Period,
				e.Time("dead letter event time", d.EventTime), d.Attempts, d.Error, e.Time("dead letter at", d.At)}}, nil)
	}
	for _, a := range c.AlertThreads {
		add(op{what: "alert thread of " + a.Sink + " for " + keyString(a.Key), query: sqlThreadInsert,
			args: []any{a.Sink, a.Key.PipelineID, a.Key.ScheduleID, a.Key.Period, a.TS, a.Channel, e.Time("alert thread at", a.At)}}, nil)
	}
	for _, a := range c.AlertsSent {
		add(op{what: "alert sent to " + a.Sink + " for " + keyString(a.Key), query: sqlSentPut,
			args: []any{a.Sink, a.Key.PipelineID, a.Key.ScheduleID, a.Key.Period, string(a.Type), a.Hash, a.EventID,
				e.Time("alert sent at", a.At)}}, nil)
	}
	for _, a := range c.AlertsAlerted {
		add(op{what: "alerted record of " + a.Sink + " for " + keyString(a.Key), query: sqlAlertedPut,
			args: []any{a.Sink, a.Key.PipelineID, a.Key.ScheduleID, a.Key.Period, a.EventID, string(a.Type),
				e.Time("alerted record at", a.At)}}, nil)
	}
}

// moveAlertMarkers is migration 0008's data step: the markers internal/alert
// kept under reserved pipeline ids become typed records. Their layout, as
// alert/markers.go wrote it before 0008 (the sink is the schedule id, the
// period empty):
//
//	#alert          cursor                                       {cursor}
//	#alert          dead:<event id>                              {type, pipelineId, scheduleId, date, eventTime, attempts, error}
//	#alert-thread   <pipeline>/<schedule>/<period>               {ts, channel}
//	#alert-sent     <pipeline>/<schedule>/<period>/<TYPE>/<hash> {id}
//	#alert-alerted  <pipeline>/<schedule>/<period>               {id, type}
//
// A marker that does not parse is left where it is: nothing reads it any
// more, and deleting what was not understood would lose it.
func moveAlertMarkers(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT pipeline_id, schedule_id, kind, at, COALESCE(detail, '{}') FROM markers
		WHERE pipeline_id IN ('#alert', '#alert-thread', '#alert-sent', '#alert-alerted') AND period = ''`)
	if err != nil {
		return err
	}
	type marker struct {
		ns, sink, kind string
		at             sql.NullInt64
		detail         map[string]any
	}
	var ms []marker
	for rows.Next() {
		var m marker
		var detail string
		if err := rows.Scan(&m.ns, &m.sink, &m.kind, &m.at, &detail); err != nil {
			rows.Close()
			return err
		}
		if json.Unmarshal([]byte(detail), &m.detail) != nil {
			continue
		}
		ms = append(ms, m)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	str := func(m marker, f string) string { s, _ := m.detail[f].(string); return s }
	num := func(m marker, f string) int64 { n, _ := m.detail[f].(float64); return int64(n) }
	period := func(s string) (run.Key, bool) {
		p := strings.Split(s, "/")
		if len(p) != 3 {
			return run.Key{}, false
		}
		return run.Key{PipelineID: p[0], ScheduleID: p[1], Period: p[2]}, true
	}
	for _, m := range ms {
		var q string
		var args []any
		switch {
		case m.ns == "#alert" && m.kind == "cursor":
			// The table as 0008 made it (0015 added the delivery state).
			q, args = `INSERT OR REPLACE INTO delivery_cursors (sink, cursor, at) VALUES (?, ?, ?)`, []any{m.sink, str(m, "cursor"), m.at}
		case m.ns == "#alert" && strings.HasPrefix(m.kind, "dead:"):
			var eventTime any
			if t, err := time.Parse(time.RFC3339, str(m, "eventTime")); err == nil {
				eventTime = t.UnixNano()
			}
			q, args = sqlDeadLetterPut, []any{m.sink, strings.TrimPrefix(m.kind, "dead:"), str(m, "type"),
				str(m, "pipelineId"), str(m, "scheduleId"), str(m, "date"), eventTime, num(m, "attempts"), str(m, "error"), m.at}
		case m.ns == "#alert-thread":
			k, ok := period(m.kind)
			if !ok {
				continue
			}
			q, args = sqlThreadInsert, []any{m.sink, k.PipelineID, k.ScheduleID, k.Period, str(m, "ts"), str(m, "channel"), m.at}
		case m.ns == "#alert-sent":
			p := strings.Split(m.kind, "/")
			if len(p) != 5 {
				continue
			}
			q, args = sqlSentPut, []any{m.sink, p[0], p[1], p[2], p[3], p[4], str(m, "id"), m.at}
		case m.ns == "#alert-alerted":
			k, ok := period(m.kind)
			if !ok {
				continue
			}
			q, args = sqlAlertedPut, []any{m.sink, k.PipelineID, k.ScheduleID, k.Period, str(m, "id"), str(m, "type"), m.at}
		default:
			continue
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("move %s marker %q of %s: %w", m.ns, m.kind, m.sink, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM markers WHERE pipeline_id = ? AND schedule_id = ? AND period = '' AND kind = ?`,
			m.ns, m.sink, m.kind); err != nil {
			return err
		}
	}
	return nil
}
