package postgres

import (
	"context"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Alert delivery bookkeeping (store/alerts.go): one table
// per record, read by primary key within a sink.

const (
	sqlCursorInsert = `INSERT INTO delivery_cursors (` + sqlstore.CursorCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`
	sqlCursorPut    = `INSERT INTO delivery_cursors (` + sqlstore.CursorCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (sink) DO UPDATE SET cursor = excluded.cursor, at = excluded.at,
		delivered_at = excluded.delivered_at, failing_since = excluded.failing_since, failing_attempts = excluded.failing_attempts, failing_error = excluded.failing_error`
	sqlDeadLetterPut = `INSERT INTO dead_letters (` + sqlstore.DeadLetterCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (sink, event_id) DO UPDATE SET type = excluded.type, pipeline_id = excluded.pipeline_id, schedule_id = excluded.schedule_id,
		period = excluded.period, event_time = excluded.event_time, attempts = excluded.attempts, error = excluded.error, at = excluded.at`
	sqlThreadInsert = `INSERT INTO alert_threads (` + sqlstore.ThreadCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`
	sqlSentPut      = `INSERT INTO alerts_sent (` + sqlstore.SentCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (sink, pipeline_id, schedule_id, period, type, hash) DO UPDATE SET event_id = excluded.event_id, at = excluded.at`
	sqlAlertedPut = `INSERT INTO alerts_alerted (` + sqlstore.AlertedCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (sink, pipeline_id, schedule_id, period) DO UPDATE SET event_id = excluded.event_id, type = excluded.type, at = excluded.at`
)

// DeliveryCursorGet returns a sink's cursor.
func (s *Store) DeliveryCursorGet(ctx context.Context, sink string) (store.DeliveryCursor, error) {
	return get(ctx, s, sqlstore.ScanCursor, "delivery cursor of "+sink,
		`SELECT `+sqlstore.CursorCols+` FROM delivery_cursors WHERE sink = $1`, sink)
}

// DeliveryCursorList returns every sink's cursor, by sink.
func (s *Store) DeliveryCursorList(ctx context.Context) ([]store.DeliveryCursor, error) {
	return list(ctx, s, sqlstore.ScanCursor, "delivery cursors",
		`SELECT `+sqlstore.CursorCols+` FROM delivery_cursors ORDER BY sink`)
}

// DeadLetterList returns a sink's dead letters, oldest first.
func (s *Store) DeadLetterList(ctx context.Context, sink string) ([]store.DeadLetter, error) {
	return list(ctx, s, sqlstore.ScanDeadLetter, "dead letters of "+sink,
		`SELECT `+sqlstore.DeadLetterCols+` FROM dead_letters WHERE sink = $1 ORDER BY at, event_time, event_id`, sink)
}

// AlertThreadGet returns the thread a sink started for a period.
func (s *Store) AlertThreadGet(ctx context.Context, sink string, key run.Key) (store.AlertThread, error) {
	return get(ctx, s, sqlstore.ScanThread, "alert thread of "+sink+" for "+keyString(key),
		`SELECT `+sqlstore.ThreadCols+` FROM alert_threads WHERE sink = $1 AND pipeline_id = $2 AND schedule_id = $3 AND period = $4`,
		sink, key.PipelineID, key.ScheduleID, key.Period)
}

// AlertSentGet returns the last delivery of one alert text to a sink.
func (s *Store) AlertSentGet(ctx context.Context, sink string, key run.Key, typ event.Type, hash string) (store.AlertSent, error) {
	return get(ctx, s, sqlstore.ScanSent, "alert sent to "+sink+" for "+keyString(key),
		`SELECT `+sqlstore.SentCols+` FROM alerts_sent WHERE sink = $1 AND pipeline_id = $2 AND schedule_id = $3 AND period = $4 AND type = $5 AND hash = $6`,
		sink, key.PipelineID, key.ScheduleID, key.Period, string(typ), hash)
}

// AlertAlertedGet returns the record that a sink alerted for a period.
func (s *Store) AlertAlertedGet(ctx context.Context, sink string, key run.Key) (store.AlertAlerted, error) {
	return get(ctx, s, sqlstore.ScanAlerted, "alerted record of "+sink+" for "+keyString(key),
		`SELECT `+sqlstore.AlertedCols+` FROM alerts_alerted WHERE sink = $1 AND pipeline_id = $2 AND schedule_id = $3 AND period = $4`,
		sink, key.PipelineID, key.ScheduleID, key.Period)
}

// alertOps are the writes of a Change's alert records.
func alertOps(e *encoder, c store.Change, add func(op, error)) {
	for _, w := range c.DeliveryCursors {
		q := sqlCursorPut
		if w.IfAbsent {
			q = sqlCursorInsert // an existing cursor inserts nothing: a conflict
		}
		d := w.Cursor
		o := op{what: "delivery cursor of " + d.Sink, query: q, affect: -1,
			args: encodeRow(e, sqlstore.EncodeCursor, d)}
		if w.IfAbsent {
			o.what, o.affect = o.what+" (it exists)", 1
		}
		add(o, nil)
	}
	for _, d := range c.DeadLetters {
		add(op{what: "dead letter " + d.EventID + " of " + d.Sink, query: sqlDeadLetterPut, affect: -1,
			args: encodeRow(e, sqlstore.EncodeDeadLetter, d)}, nil)
	}
	for _, a := range c.AlertThreads {
		add(op{what: "alert thread of " + a.Sink + " for " + keyString(a.Key) + " (it exists)", query: sqlThreadInsert, affect: 1,
			args: encodeRow(e, sqlstore.EncodeThread, a)}, nil)
	}
	for _, a := range c.AlertsSent {
		add(op{what: "alert sent to " + a.Sink + " for " + keyString(a.Key), query: sqlSentPut, affect: -1,
			args: encodeRow(e, sqlstore.EncodeSent, a)}, nil)
	}
	for _, a := range c.AlertsAlerted {
		add(op{what: "alerted record of " + a.Sink + " for " + keyString(a.Key), query: sqlAlertedPut, affect: -1,
			args: encodeRow(e, sqlstore.EncodeAlerted, a)}, nil)
	}
}
