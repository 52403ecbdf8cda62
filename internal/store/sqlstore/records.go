package sqlstore

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// The records whose rows do not differ between the backends beyond the
// codec: calendars, silences, backfills and the alert bookkeeping.

const CalendarCols = `name, version, days, dates, file, updated_at, removed_at`

func ScanCalendar(r Scanner) (store.Calendar, error) {
	var (
		c     store.Calendar
		days  []int
		dates []string
	)
	err := r.Scan(&c.Name, &c.Version, JSONCol{&days}, JSONCol{&dates}, &c.File, TimeCol{&c.UpdatedAt}, TimeCol{&c.RemovedAt})
	if err != nil {
		return c, err
	}
	for _, d := range days {
		if d < int(time.Sunday) || d > int(time.Saturday) {
			return c, fmt.Errorf("calendar %s: weekday %d out of range", c.Name, d)
		}
		c.Days = append(c.Days, time.Weekday(d))
	}
	for _, s := range dates {
		d, err := schedule.ParseDate(s)
		if err != nil {
			return c, fmt.Errorf("calendar %s: %w", c.Name, err)
		}
		c.Dates = append(c.Dates, d)
	}
	return c, nil
}

// EncodeCalendar returns the values of CalendarCols after name and version.
func EncodeCalendar(e *Encoder, c store.Calendar) []any {
	days := make([]int, len(c.Days))
	for i, d := range c.Days {
		days[i] = int(d)
	}
	dates := make([]string, len(c.Dates))
	for i, d := range c.Dates {
		dates[i] = d.String()
	}
	return []any{e.JSON("calendar days", days, len(days)), e.JSON("calendar dates", dates, len(dates)), c.File,
		e.Time("calendar updated at", c.UpdatedAt), e.Time("calendar removed at", c.RemovedAt)}
}

const SilenceCols = `id, version, pipelines, types, levels, owners, starts_at, ends_at, expired_at, end_at, comment, created_by, created_at`

// SilenceColsWritten are SilenceCols after id and version.
var SilenceColsWritten = []string{"pipelines", "types", "levels", "owners", "starts_at", "ends_at", "expired_at", "end_at", "comment", "created_by", "created_at"}

func ScanSilence(r Scanner) (store.Silence, error) {
	var (
		s      store.Silence
		types  []event.Type
		levels []event.Level
		end    int64
	)
	err := r.Scan(&s.ID, &s.Version, JSONCol{&s.Pipelines}, JSONCol{&types}, JSONCol{&levels}, JSONCol{&s.Owners},
		TimeCol{&s.StartsAt}, TimeCol{&s.EndsAt}, TimeCol{&s.ExpiredAt}, &end, &s.Comment, &s.CreatedBy, TimeCol{&s.CreatedAt})
	s.Types, s.Levels = types, levels
	return s, err
}

// EncodeSilence returns the values of SilenceColsWritten.
func EncodeSilence(e *Encoder, s store.Silence) []any {
	return []any{e.JSON("silence pipelines", s.Pipelines, len(s.Pipelines)), e.JSON("silence types", s.Types, len(s.Types)),
		e.JSON("silence levels", s.Levels, len(s.Levels)), e.JSON("silence owners", s.Owners, len(s.Owners)),
		e.Time("silence starts at", s.StartsAt), e.Time("silence ends at", s.EndsAt), e.Time("silence expired at", s.ExpiredAt),
		QueryNanos(s.End()), s.Comment, s.CreatedBy, e.Time("silence created at", s.CreatedAt)}
}

const BackfillCols = `pipeline_id, id, version, requested_at, body`

// BackfillColsWritten are BackfillCols after the key and version.
var BackfillColsWritten = []string{"requested_at", "body"}

func ScanBackfill(r Scanner) (store.Backfill, error) {
	var (
		b    store.Backfill
		body string
	)
	if err := r.Scan(&b.PipelineID, &b.ID, &b.Version, TimeCol{&b.RequestedAt}, &body); err != nil {
		return b, err
	}
	return b, store.DecodeBackfillBody([]byte(body), &b)
}

// EncodeBackfill returns the values of BackfillColsWritten.
func EncodeBackfill(e *Encoder, b store.Backfill) ([]any, error) {
	body, err := store.EncodeBackfillBody(b)
	if err != nil {
		return nil, err
	}
	return []any{e.Time("backfill requested at", b.RequestedAt), string(body)}, nil
}

// Alert delivery bookkeeping (store/alerts.go): one table per record, read
// by primary key within a sink. Each Encode returns the values of its
// columns, all of them.
const (
	CursorCols     = `sink, cursor, at, delivered_at, failing_since, failing_attempts, failing_error`
	DeadLetterCols = `sink, event_id, type, pipeline_id, schedule_id, period, event_time, attempts, error, at`
	ThreadCols     = `sink, pipeline_id, schedule_id, period, ts, channel, at`
	SentCols       = `sink, pipeline_id, schedule_id, period, type, hash, event_id, at`
	AlertedCols    = `sink, pipeline_id, schedule_id, period, event_id, type, at`
)

func ScanCursor(r Scanner) (store.DeliveryCursor, error) {
	var c store.DeliveryCursor
	var text string
	if err := r.Scan(&c.Sink, &text, TimeCol{&c.At}, TimeCol{&c.DeliveredAt}, TimeCol{&c.Failing.Since}, &c.Failing.Attempts, &c.Failing.Error); err != nil {
		return c, err
	}
	var err error
	c.Cursor, err = store.ParseCursor(text)
	return c, err
}

func EncodeCursor(e *Encoder, d store.DeliveryCursor) []any {
	return []any{d.Sink, d.Cursor.String(), e.Time("delivery cursor at", d.At), e.Time("delivered at", d.DeliveredAt),
		e.Time("failing since", d.Failing.Since), d.Failing.Attempts, d.Failing.Error}
}

func ScanDeadLetter(r Scanner) (store.DeadLetter, error) {
	var d store.DeadLetter
	err := r.Scan(&d.Sink, &d.EventID, &d.Type, &d.Key.PipelineID, &d.Key.ScheduleID, &d.Key.Period,
		TimeCol{&d.EventTime}, &d.Attempts, &d.Error, TimeCol{&d.At})
	return d, err
}

func EncodeDeadLetter(e *Encoder, d store.DeadLetter) []any {
	return []any{d.Sink, d.EventID, string(d.Type), d.Key.PipelineID, d.Key.ScheduleID, d.Key.Period,
		e.Time("dead letter event time", d.EventTime), d.Attempts, d.Error, e.Time("dead letter at", d.At)}
}

func ScanThread(r Scanner) (store.AlertThread, error) {
	var a store.AlertThread
	err := r.Scan(&a.Sink, &a.Key.PipelineID, &a.Key.ScheduleID, &a.Key.Period, &a.TS, &a.Channel, TimeCol{&a.At})
	return a, err
}

func EncodeThread(e *Encoder, a store.AlertThread) []any {
	return []any{a.Sink, a.Key.PipelineID, a.Key.ScheduleID, a.Key.Period, a.TS, a.Channel, e.Time("alert thread at", a.At)}
}

func ScanSent(r Scanner) (store.AlertSent, error) {
	var a store.AlertSent
	err := r.Scan(&a.Sink, &a.Key.PipelineID, &a.Key.ScheduleID, &a.Key.Period, &a.Type, &a.Hash, &a.EventID, TimeCol{&a.At})
	return a, err
}

func EncodeSent(e *Encoder, a store.AlertSent) []any {
	return []any{a.Sink, a.Key.PipelineID, a.Key.ScheduleID, a.Key.Period, string(a.Type), a.Hash, a.EventID,
		e.Time("alert sent at", a.At)}
}

func ScanAlerted(r Scanner) (store.AlertAlerted, error) {
	var a store.AlertAlerted
	err := r.Scan(&a.Sink, &a.Key.PipelineID, &a.Key.ScheduleID, &a.Key.Period, &a.EventID, &a.Type, TimeCol{&a.At})
	return a, err
}

func EncodeAlerted(e *Encoder, a store.AlertAlerted) []any {
	return []any{a.Sink, a.Key.PipelineID, a.Key.ScheduleID, a.Key.Period, a.EventID, string(a.Type),
		e.Time("alerted record at", a.At)}
}
