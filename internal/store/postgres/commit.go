package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Commit applies c atomically: one READ COMMITTED transaction whose
// statements go to the server in one batch — one round trip, the server
// committing as the batch ends (apply) — each carrying its record's
// condition, checked by the server, so nothing can change between a check
// and its write:
//
//   - a versioned write (pipeline, calendar, sensor, run) at version n is
//     an UPDATE … WHERE version = n: a concurrent writer of the row makes
//     this one wait for its end, then re-read the row, find the version
//     moved and touch nothing;
//   - a create (version 0, a ledger entry, a marker IfAbsent, an alert
//     thread, a cursor IfAbsent) is an INSERT … ON CONFLICT DO NOTHING: a
//     row that exists, or is being inserted by a transaction that then
//     commits, inserts nothing;
//   - a check on a pipeline or calendar row takes it FOR SHARE (nobody can
//     move it until this commits); a check that it is absent, and the
//     creation of such a row, both take a transaction-scoped advisory
//     lock on its key first, so a check never misses a row created
//     concurrently;
//   - a timer claimed or moved at a due time is a DELETE or UPDATE … WHERE
//     due_at = t.
//
// A statement that touches no row where one was required fails (op.sql)
// and so does the commit: it is rolled back and Commit returns
// store.ErrConflict naming the record. The event shard counters are
// incremented last, shard by shard in order, so their row locks are held
// for the least time and always taken in one order. A deadlock or serialization failure rolls the
// transaction back, and Commit runs it again (the conditions are checked
// anew each time) a bounded number of times.
func (s *Store) Commit(ctx context.Context, c store.Change) error {
	ops, ok, err := store.Plan(c, plan)
	if !ok {
		return err
	}
	for attempt := 1; ; attempt++ {
		err := s.apply(ctx, ops)
		if err == nil || !retryable(err) || attempt == maxAttempts {
			return err
		}
		// Back off a little, more each time, with jitter so two
		// deadlocked writers do not collide again.
		d := time.Duration(rand.Int64N(int64(time.Millisecond)<<min(attempt, 6))) + 100*time.Microsecond
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres: commit: %w (after %v)", ctx.Err(), err)
		case <-time.After(d):
		}
	}
}

// maxAttempts bounds the runs of one Commit that keep failing on
// deadlocks or serialization failures.
const maxAttempts = 12

// retryable: the transaction failed for the company it kept, not for what
// it does (40001 serialization_failure, 40P01 deadlock_detected).
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// apply runs ops in one transaction and one round trip: a pgx batch is
// sent with a single Sync, so its statements run as one implicit
// transaction that the server commits when the last one succeeds and rolls
// back at the first that fails. Conditions are the server's to check
// (op.sql): a condition that does not hold fails its statement with
// sqlstateConflict. Nothing is left for the client to decide between the
// statements and the commit, so no lock the statements take — the event
// shard's counter row above all — is held while the client reads results.
func (s *Store) apply(ctx context.Context, ops []op) error {
	var b pgx.Batch
	for _, o := range ops {
		q, args := o.sql()
		b.Queue(q, args...)
	}
	br := s.pool.SendBatch(ctx, &b)
	for _, o := range ops {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == sqlstateConflict {
				return fmt.Errorf("%w: %s", store.ErrConflict, o.what)
			}
			return fmt.Errorf("postgres: write %s: %w", o.what, interpretError(err))
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("postgres: commit: %w", interpretError(err))
	}
	return nil
}

// sqlstateConflict is the SQLSTATE interlock_expect (migration 0008)
// raises when a commit's condition does not hold.
const sqlstateConflict = "IL409"

// interpretError maps PostgreSQL's errors onto the port's sentinels: a key
// collision (23505; ON CONFLICT makes it rare) is a conflict. The driver's
// error stays in the chain.
func interpretError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	}
	return err
}

// op is one statement of a commit with its condition.
type op struct {
	what  string // names the record in errors
	query string
	args  []any
	// affect is the number of rows the statement must touch (or, for a
	// check, select); -1: any number.
	affect int64
}

// sql is the statement as sent: with a required count, the query wrapped
// so the server counts the rows it touched (RETURNING) or selected and
// fails the statement with sqlstateConflict when the count differs. query is a single INSERT, UPDATE or DELETE
// without RETURNING, or a SELECT.
func (o op) sql() (string, []any) {
	if o.affect < 0 {
		return o.query, o.args
	}
	n := len(o.args)
	args := append(append([]any{}, o.args...), o.affect)
	expect := "SELECT interlock_expect(count(*), $" + strconv.Itoa(n+1) + ")"
	if strings.HasPrefix(o.query, "SELECT ") {
		return expect + " FROM (" + o.query + ") r", args
	}
	return "WITH r AS (" + o.query + " RETURNING 1) " + expect + " FROM r", args
}

// versioned describes a table whose rows are written with the port's
// version rule: ExpectVersion 0 creates (an INSERT that inserts nothing
// when the row exists), otherwise the stored version must equal
// ExpectVersion (an UPDATE whose WHERE clause carries it).
type versioned struct {
	name           string
	lockCreate     bool // creations take the key's advisory lock (checkable rows)
	insert, update string
}

func newVersioned(name string, lockCreate bool, keys, cols []string) versioned {
	all := append(append(append([]string{}, keys...), "version"), cols...)
	vals := make([]string, len(all))
	for i := range all {
		vals[i] = "$" + strconv.Itoa(i+1)
	}
	n := 0
	next := func() string { n++; return "$" + strconv.Itoa(n) }
	sets := []string{"version = " + next()}
	for _, c := range cols {
		sets = append(sets, c+" = "+next())
	}
	conds := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		conds = append(conds, k+" = "+next())
	}
	conds = append(conds, "version = "+next())
	return versioned{
		name:       name,
		lockCreate: lockCreate,
		insert: "INSERT INTO " + name + " (" + strings.Join(all, ", ") + ") VALUES (" + strings.Join(vals, ", ") +
			") ON CONFLICT DO NOTHING",
		update: "UPDATE " + name + " SET " + strings.Join(sets, ", ") + " WHERE " + strings.Join(conds, " AND "),
	}
}

// put returns the statements writing a row. The stored version becomes
// expect+1 whatever the record's own Version field says.
func (v versioned) put(what string, keyArgs []any, expect int64, cols []any) ([]op, error) {
	if expect < 0 {
		return nil, fmt.Errorf("postgres: write %s: negative expected version %d", what, expect)
	}
	if expect == 0 {
		args := append(append(append([]any{}, keyArgs...), int64(1)), cols...)
		ins := op{what: what + " (it exists)", query: v.insert, args: args, affect: 1}
		if v.lockCreate {
			return []op{advisoryLock(v.name, keyArgs[0].(string)), ins}, nil
		}
		return []op{ins}, nil
	}
	args := append(append(append(append([]any{}, expect+1), cols...), keyArgs...), expect)
	return []op{{what: fmt.Sprintf("%s at version %d", what, expect), query: v.update, args: args, affect: 1}}, nil
}

// advisoryLock locks the key of a pipeline or calendar row until the
// transaction ends: what a check that the row is absent and the row's
// creation both take, so that neither misses the other.
func advisoryLock(table, key string) op {
	return op{what: table + " " + key + " lock", query: `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
		args: []any{table + "\x1f" + key}, affect: -1}
}

var (
	pipelinesTable = newVersioned("pipelines", true, []string{"id"},
		[]string{"config_version", "doc", "hash", "file", "first_loaded_at", "updated_at", "paused", "paused_until", "paused_at", "resumed_at", "removed_at", "pause_windows", "watch_changed_at"})
	calendarsTable = newVersioned("calendars", true, []string{"name"},
		[]string{"days", "dates", "file", "updated_at", "removed_at"})
	sensorsTable = newVersioned("sensors", false, []string{"pipeline_id", "key"},
		[]string{"data", "changed_at", "written_at", "period", "watched"})
	runsTable = newVersioned("runs", false, []string{"pipeline_id", "schedule_id", "period"},
		[]string{"state", "active", "outcome", "cause", "generation", "attempt",
			"created_at", "updated_at", "state_since", "expires_at", "eval_started_at", "eval_deadline",
			"trigger_errors", "trigger_in_flight", "job_run_id", "job_meta", "job_started_at", "poll_deadline",
			"ended_at", "last_failure_category", "last_failure_message", "config_version"})
)

const (
	sqlSensorDelete   = `DELETE FROM sensors WHERE pipeline_id = $1 AND key = $2`
	sqlLedgerInsert   = `INSERT INTO ledger (` + sqlstore.LedgerCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`
	sqlBaselinePut    = `INSERT INTO baselines (` + sqlstore.BaselineCols + `) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (pipeline_id, schedule_id, period) DO UPDATE SET sensors = excluded.sensors, captured_at = excluded.captured_at`
	sqlBaselineDelete = `DELETE FROM baselines WHERE pipeline_id = $1 AND schedule_id = $2 AND period = $3`
	sqlMarkerInsert   = `INSERT INTO markers (` + sqlstore.MarkerCols + `) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`
	sqlMarkerPut      = `INSERT INTO markers (` + sqlstore.MarkerCols + `) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (pipeline_id, schedule_id, period, kind) DO UPDATE SET at = excluded.at, detail = excluded.detail`
	sqlMarkerDelete   = `DELETE FROM markers WHERE pipeline_id = $1 AND schedule_id = $2 AND period = $3 AND kind = $4`
	sqlTimerPut       = `INSERT INTO timers (` + sqlstore.TimerCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (key) DO UPDATE SET kind = excluded.kind, pipeline_id = excluded.pipeline_id, schedule_id = excluded.schedule_id, period = excluded.period, due_at = excluded.due_at, detail = excluded.detail`
	sqlTimerReplace   = `UPDATE timers SET kind = $1, pipeline_id = $2, schedule_id = $3, period = $4, due_at = $5, detail = $6 WHERE key = $7 AND due_at = $8`
	sqlTimerDelete    = `DELETE FROM timers WHERE key = $1`
	sqlTimerClaim     = `DELETE FROM timers WHERE key = $1 AND due_at = $2`
)

// plan turns a Change into statements, in the order of Change's fields and
// the events last. The order fixes which conflict is reported when several
// would fail, and keeps the event shards' counters locked briefly.
func plan(c store.Change) ([]op, error) {
	var e encoder
	ops := make([]op, 0, 16)
	add := func(o op, err error) {
		if err != nil && e.err == nil {
			e.err = err
		}
		ops = append(ops, o)
	}
	addAll := func(os []op, err error) {
		if err != nil && e.err == nil {
			e.err = err
		}
		ops = append(ops, os...)
	}
	for _, w := range c.Pipelines {
		p := w.Pipeline
		addAll(pipelinesTable.put("pipeline "+p.ID, []any{p.ID}, w.ExpectVersion, encodePipeline(&e, p)))
	}
	for _, w := range c.Calendars {
		x := w.Calendar
		addAll(calendarsTable.put("calendar "+x.Name, []any{x.Name}, w.ExpectVersion, encodeCalendar(&e, x)))
	}
	for _, k := range c.PipelineChecks {
		addAll(versionCheck("pipeline "+k.ID, "pipelines", "id", k.ID, k.Version))
	}
	for _, k := range c.CalendarChecks {
		addAll(versionCheck("calendar "+k.Name, "calendars", "name", k.Name, k.Version))
	}
	for _, w := range c.Sensors {
		x := w.Sensor
		addAll(sensorsTable.put("sensor "+x.PipelineID+"/"+x.Key, []any{x.PipelineID, []byte(x.Key)}, w.ExpectVersion, encodeSensor(&e, x)))
	}
	for _, d := range c.SensorDeletes {
		add(op{what: "sensor " + d.PipelineID + "/" + d.Key, query: sqlSensorDelete, args: []any{d.PipelineID, []byte(d.Key)}, affect: -1}, nil)
	}
	for _, w := range c.Runs {
		k := w.Run.Key
		addAll(runsTable.put("run "+keyString(k), []any{k.PipelineID, k.ScheduleID, k.Period}, w.ExpectVersion, encodeRun(&e, w.Run)))
	}
	for _, l := range c.Ledger {
		k := l.Key
		add(op{what: fmt.Sprintf("ledger entry %d of %s (it exists)", l.Seq, keyString(k)), query: sqlLedgerInsert, affect: 1,
			args: []any{k.PipelineID, k.ScheduleID, k.Period, l.Seq, l.Reason, l.Source, e.time("ledger entry at", l.At)}}, nil)
	}
	for _, b := range c.Baselines {
		k := b.Key
		add(op{what: "baseline " + keyString(k), query: sqlBaselinePut, affect: -1,
			args: []any{k.PipelineID, k.ScheduleID, k.Period, e.json("baseline sensors", b.Sensors, len(b.Sensors)),
				e.time("baseline captured at", b.CapturedAt)}}, nil)
	}
	for _, k := range c.BaselineDelete {
		add(op{what: "baseline " + keyString(k), query: sqlBaselineDelete, args: []any{k.PipelineID, k.ScheduleID, k.Period}, affect: -1}, nil)
	}
	for _, w := range c.Markers {
		m := w.Marker
		o := op{what: "marker " + m.Kind + " of " + keyString(m.Key), query: sqlMarkerPut, affect: -1,
			args: []any{m.Key.PipelineID, m.Key.ScheduleID, m.Key.Period, m.Kind,
				e.time("marker at", m.At), e.object("marker detail", m.Detail)}}
		if w.IfAbsent {
			o.what, o.query, o.affect = o.what+" (it exists)", sqlMarkerInsert, 1
		}
		add(o, nil)
	}
	for _, d := range c.MarkerDeletes {
		add(op{what: "marker " + d.Kind + " of " + keyString(d.Key), query: sqlMarkerDelete,
			args: []any{d.Key.PipelineID, d.Key.ScheduleID, d.Key.Period, d.Kind}, affect: -1}, nil)
	}
	for _, w := range c.Timers {
		add(timerPut(&e, w), nil)
	}
	for _, d := range c.TimerDeletes {
		if d.ExpectDueAt == nil {
			add(op{what: "timer " + d.Key, query: sqlTimerDelete, args: []any{d.Key}, affect: -1}, nil)
			continue
		}
		add(op{what: "timer " + d.Key + " due at " + d.ExpectDueAt.UTC().Format(time.RFC3339Nano), query: sqlTimerClaim,
			args: []any{d.Key, e.time("timer expected due time", *d.ExpectDueAt)}, affect: 1}, nil)
	}
	alertOps(&e, c, add)
	leaseOps(&e, c, addAll)
	backfillOps(&e, c, addAll)
	silenceOps(&e, c, addAll)
	ops = append(ops, eventOps(&e, c.Events)...)
	if e.err != nil {
		return nil, e.err
	}
	return ops, nil
}

// versionCheck is a condition that writes nothing: the row must be at
// version, locked FOR SHARE until the commit ends so it cannot move; or,
// when version is 0, absent, under the key's advisory lock that its
// creation would take too.
func versionCheck(what, table, keyCol, key string, version int64) ([]op, error) {
	if version < 0 {
		return nil, fmt.Errorf("postgres: check %s: negative version %d", what, version)
	}
	if version == 0 {
		return []op{advisoryLock(table, key),
			{what: what + " absent", query: `SELECT 1 FROM ` + table + ` WHERE ` + keyCol + ` = $1`, args: []any{key}, affect: 0}}, nil
	}
	return []op{{what: fmt.Sprintf("%s at version %d", what, version),
		query: `SELECT 1 FROM ` + table + ` WHERE ` + keyCol + ` = $1 AND version = $2 FOR SHARE`, args: []any{key, version}, affect: 1}}, nil
}

// timerPut writes a timer: an upsert, or with ExpectDueAt an update whose
// WHERE clause demands the stored due time.
func timerPut(e *encoder, w store.TimerWrite) op {
	args := encodeRow(e, sqlstore.TimerArgs, w)
	if w.ExpectDueAt == nil {
		return op{what: "timer " + w.Timer.Key, query: sqlTimerPut, affect: -1, args: args}
	}
	return op{what: "timer " + w.Timer.Key + " due at " + w.ExpectDueAt.UTC().Format(time.RFC3339Nano), query: sqlTimerReplace, affect: 1,
		args: args}
}

// sqlEventAppend takes a shard's next n numbers — incrementing its counter,
// whose row stays locked until the commit ends — and inserts the shard's
// events at them, in the order given; interlock_expect fails it unless
// all n were inserted. (It checks itself: a statement with a WITH clause
// of its own cannot be wrapped by op.sql.)
const sqlEventAppend = `WITH c AS (UPDATE event_shards SET seq = seq + $2 WHERE shard = $1 RETURNING seq),
r AS (INSERT INTO events (shard, seq, id, time, type, pipeline_id, schedule_id, date, message, detail)
SELECT $1, c.seq - $2 + e.n, e.id, e.time, e.type, e.pipeline_id, e.schedule_id, e.date, e.message, e.detail
FROM c, unnest($3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
	WITH ORDINALITY AS e(id, time, type, pipeline_id, schedule_id, date, message, detail, n)
RETURNING 1)
SELECT interlock_expect(count(*), $2) FROM r`

// eventOps appends the events to their shards: one statement per shard,
// the shards in ascending order (every commit locks counters in one
// order), each shard's events in the Change's order.
func eventOps(e *encoder, evs []event.Event) []op {
	byShard := map[int][]event.Event{}
	for _, ev := range evs {
		sh := store.EventShard(ev.PipelineID)
		byShard[sh] = append(byShard[sh], ev)
	}
	ops := make([]op, 0, len(byShard))
	for _, sh := range slices.Sorted(maps.Keys(byShard)) {
		list := byShard[sh]
		n := len(list)
		ids, types, pids, sids, dates, msgs := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		times, details := make([]*int64, n), make([]*string, n)
		for i, ev := range list {
			ids[i], types[i], pids[i], sids[i], dates[i], msgs[i] = ev.ID, string(ev.Type), ev.PipelineID, ev.ScheduleID, ev.Date, ev.Message
			if v, ok := e.time("event time", ev.Time).(int64); ok {
				times[i] = &v
			}
			if v, ok := e.object("event detail", ev.Detail).(string); ok {
				details[i] = &v
			}
		}
		ops = append(ops, op{what: fmt.Sprintf("events of shard %d", sh), query: sqlEventAppend, affect: -1, // checked by the statement itself
			args: []any{sh, int64(n), ids, times, types, pids, sids, dates, msgs, details}})
	}
	return ops
}
