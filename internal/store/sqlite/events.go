package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// The event log is store.EventShards shards (migration 0007). An event's
// position is (shard, seq): the commit that appends it increments its
// shard's counter in event_shards and takes the new value, inside the
// write transaction, so a shard's positions are visible in commit order
// (SQLite has one writer; the counter row is what PostgreSQL will lock).
const (
	sqlEventShardNext = `UPDATE event_shards SET seq = seq + 1 WHERE shard = ?`
	sqlEventInsert    = `INSERT INTO events (shard, seq, id, time, type, pipeline_id, schedule_id, date, message, detail)
		VALUES (?, (SELECT seq FROM event_shards WHERE shard = ?), ?, ?, ?, ?, ?, ?, ?, ?)`
)

// eventOps appends ev to its shard: the counter, then the row at the
// counter's new value.
func eventOps(e *sqlstore.Encoder, ev event.Event, add func(op, error)) {
	shard := store.EventShard(ev.PipelineID)
	add(op{what: fmt.Sprintf("event shard %d", shard), query: sqlEventShardNext, args: []any{shard}, mustAffect: true}, nil)
	add(op{what: "event " + ev.ID, query: sqlEventInsert,
		args: []any{shard, shard, ev.ID, e.Time("event time", ev.Time), string(ev.Type), ev.PipelineID, ev.ScheduleID,
			ev.Date, ev.Message, e.Object("event detail", ev.Detail)}}, nil)
}

// EventList reads each shard p touches after its cursor position, in
// shard order, then merges them (store.MergeEventShards).
func (s *Store) EventList(ctx context.Context, p store.EventListParams) (store.EventPage, error) {
	return eventPage(p, func(what, q string, args []any) ([]event.Event, error) {
		return list(ctx, s.read, sqlstore.ScanEvent, what, q, args...)
	})
}

// eventPage is the page p asks for: each shard it touches read by read
// (eventListQuery's statement; what names it in errors), then merged.
// EventList and Facts read through it.
func eventPage(p store.EventListParams, read func(what, query string, args []any) ([]event.Event, error)) (store.EventPage, error) {
	shards := p.Shards()
	per := make([][]event.Event, len(shards))
	for i, shard := range shards {
		q, args := eventListQuery(p, shard)
		evs, err := read(fmt.Sprintf("events of shard %d", shard), q, args)
		if err != nil {
			return store.EventPage{}, err
		}
		per[i] = evs
	}
	return store.MergeEventShards(p, per), nil
}

// eventListQuery is the read of one shard; a test checks its query plans.
// A read scoped by pipeline goes through events_pipeline (its pipeline
// is in one shard, in seq order there) or, with a period,
// events_period; an unscoped one through the primary key (shard, seq).
func eventListQuery(p store.EventListParams, shard int) (string, []any) {
	w := sqlstore.Where{D: &dialect}
	if p.PipelineID != "" {
		w.Add("pipeline_id = ?", p.PipelineID)
		if p.Period != "" {
			w.Add("date = ?", p.Period)
		}
		w.Add("seq > ?", p.After[shard])
	} else {
		w.Add("shard = ?", shard)
		w.Add("seq > ?", p.After[shard])
		if p.Period != "" {
			w.Add("date = ?", p.Period)
		}
	}
	if len(p.Types) > 0 {
		addIn(&w, "type", p.Types)
	}
	if !p.Since.IsZero() {
		w.Add("time >= ?", sqlstore.QueryNanos(p.Since))
	}
	q := `SELECT ` + sqlstore.EventCols + ` FROM events` + w.String() + ` ORDER BY seq` + w.Limit(p.Limit)
	return q, w.Args
}

// shardEvents is migration 0007's data step: the events of the old log
// (events_0006, one global sequence) go to their shards, numbered in their
// old order; the counters start where the shards end; and each alert
// sink's cursor (a global sequence number) becomes the cursor that has
// passed the same events.
func shardEvents(ctx context.Context, tx *sql.Tx) error {
	for shard := range store.EventShards {
		if _, err := tx.ExecContext(ctx, `INSERT INTO event_shards (shard, seq) VALUES (?, 0)`, shard); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE pipeline_shards_0007 (pipeline_id TEXT NOT NULL PRIMARY KEY, shard INTEGER NOT NULL)`); err != nil {
		return err
	}
	ids, err := queryStrings(ctx, tx, `SELECT DISTINCT pipeline_id FROM events_0006`)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `INSERT INTO pipeline_shards_0007 (pipeline_id, shard) VALUES (?, ?)`, id, store.EventShard(id)); err != nil {
			return err
		}
	}
	steps := []string{
		`INSERT INTO events (shard, seq, id, time, type, pipeline_id, schedule_id, date, message, detail)
			SELECT s.shard, ROW_NUMBER() OVER (PARTITION BY s.shard ORDER BY e.seq),
				e.id, e.time, e.type, e.pipeline_id, e.schedule_id, e.date, e.message, e.detail
			FROM events_0006 e JOIN pipeline_shards_0007 s USING (pipeline_id)`,
		`UPDATE event_shards SET seq = (SELECT COALESCE(MAX(seq), 0) FROM events WHERE events.shard = event_shards.shard)`,
	}
	for _, q := range steps {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	// A cursor at global sequence n has passed, in each shard, the events
	// numbered up to n there: as many as the shard holds at or below n.
	sinks, err := queryStrings(ctx, tx, `SELECT schedule_id FROM markers WHERE pipeline_id = '#alert' AND kind = 'cursor'`)
	if err != nil {
		return err
	}
	for _, sink := range sinks {
		var c store.Cursor
		rows, err := tx.QueryContext(ctx, `SELECT s.shard, COUNT(*) FROM events_0006 e JOIN pipeline_shards_0007 s USING (pipeline_id)
			WHERE e.seq <= (SELECT COALESCE(json_extract(detail, '$.seq'), 0) FROM markers WHERE pipeline_id = '#alert' AND schedule_id = ? AND kind = 'cursor')
			GROUP BY s.shard`, sink)
		if err != nil {
			return err
		}
		for rows.Next() {
			var shard int
			var n int64
			if err := rows.Scan(&shard, &n); err != nil {
				rows.Close()
				return err
			}
			c[shard] = n
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE markers SET detail = json_object('cursor', ?) WHERE pipeline_id = '#alert' AND schedule_id = ? AND kind = 'cursor'`,
			c.String(), sink); err != nil {
			return err
		}
	}
	for _, q := range []string{`DROP TABLE pipeline_shards_0007`, `DROP TABLE events_0006`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// queryStrings runs q, which selects one text column, on db (a
// transaction, or in tests a database).
func queryStrings(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string) ([]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
