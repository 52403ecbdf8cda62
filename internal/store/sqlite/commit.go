package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Commit applies c atomically in one BEGIN IMMEDIATE transaction on the
// writer connection. Every condition is checked inside that transaction,
// so nothing can change between the check and the write; the first failed
// condition rolls everything back and returns store.ErrConflict. Commits
// from concurrent callers may share the transaction, each Change in a
// savepoint of its own (group.go).
//
// Rows are encoded before the transaction starts: a bad value (a time
// outside the storable range) fails without taking the write lock, and the
// lock is held only for the statements themselves.
func (s *Store) Commit(ctx context.Context, c store.Change) error {
	ops, ok, err := store.Plan(c, plan)
	if !ok {
		return err
	}
	// The caches are told of the commit under the writer lock, before its
	// transaction and once it ended (cacheHooks): Facts reads them under
	// that lock on a store with one connection, and must never find a
	// row the transaction just replaced.
	var h cacheHooks
	if s.pipelines != nil {
		if len(c.Pipelines) > 0 {
			h.add(s.pipelines.begin, func(error) { s.pipelines.end() })
		}
		for i := range ops {
			if id := ops[i].pipeline; id != "" {
				ops[i].answer = s.pipelines.checker(id, ops[i].args[1].(int64))
			}
		}
	}
	if len(c.Runs) > 0 && s.runs != nil {
		// The runs written are kept as a read would return them: the next
		// decision about the period reads its run (a sensor write, its
		// trigger call, the poll that follows).
		keys, xs, ok := runsWritten(c)
		var gen uint64
		h.add(func() { gen = s.runs.drop(keys) }, func(err error) { s.runs.finish(gen, keys, written(xs, ok && err == nil)) })
	}
	if (len(c.Timers) > 0 || len(c.TimerDeletes) > 0) && s.timers != nil {
		keys, xs, ok := timersWritten(c)
		var gen uint64
		h.add(func() { gen = s.timers.drop(keys) }, func(err error) { s.timers.finish(gen, keys, written(xs, ok && err == nil)) })
	}
	return s.commitOps(ctx, ops, h)
}

// cacheHooks tell a store's caches of one Commit: before runs under the
// writer lock before the transaction that applies the Change, after with
// its result once that transaction ended, still under the lock. A Change
// given up before any transaction took it calls neither: it wrote
// nothing.
type cacheHooks struct {
	before []func()
	after  []func(error)
}

func (h *cacheHooks) add(before func(), after func(error)) {
	h.before = append(h.before, before)
	h.after = append(h.after, after)
}

// written is what a commit leaves of its rows for its cache to keep: xs
// when it committed and every row decoded, else nothing.
func written[K comparable, V any](xs map[K]cached[V], kept bool) map[K]cached[V] {
	if !kept {
		return nil
	}
	return xs
}

// op is one statement of a commit with its condition.
type op struct {
	what  string // names the record in errors
	query string
	args  []any
	// mustAffect: the statement carries the condition in its WHERE clause
	// (version = ?, due_at = ?), so touching no row means it failed.
	mustAffect bool
	// check: the statement is a SELECT count(*) that writes nothing; the
	// condition holds when it counts want rows (calendars.go).
	check bool
	want  int64
	// pipeline names the pipeline row a check reads (at a version, not
	// absent); answer, when set, counts it without SQL where it can
	// (pipelineCache.checker), ok false where it cannot.
	pipeline string
	answer   func() (n int64, ok bool)
}

func (o op) apply(t *wtx) error {
	if o.check && o.answer != nil && !t.replay {
		if n, ok := o.answer(); ok {
			if n != o.want {
				return fmt.Errorf("%w: %s", store.ErrConflict, o.what)
			}
			return nil
		}
	}
	if o.check {
		n, err := t.count(o.query, o.args...)
		if err != nil {
			return fmt.Errorf("sqlite: check %s: %w", o.what, interpretError(err))
		}
		if n != o.want {
			return fmt.Errorf("%w: %s", store.ErrConflict, o.what)
		}
		return nil
	}
	n, err := t.exec(o.query, o.args...)
	if err != nil {
		return fmt.Errorf("sqlite: write %s: %w", o.what, interpretError(err))
	}
	if o.mustAffect && n == 0 {
		return fmt.Errorf("%w: %s", store.ErrConflict, o.what)
	}
	return nil
}

// versioned describes a table whose rows are written with the port's
// version rule: ExpectVersion 0 creates (an INSERT, so an existing row
// fails on the primary key), otherwise the stored version must equal
// ExpectVersion (an UPDATE whose WHERE clause carries the version).
type versioned struct {
	name           string
	insert, update string
}

func newVersioned(name string, keys, cols []string) versioned {
	all := append(append(append([]string{}, keys...), "version"), cols...)
	sets := make([]string, 0, len(cols)+1)
	sets = append(sets, "version = ?")
	for _, c := range cols {
		sets = append(sets, c+" = ?")
	}
	conds := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		conds = append(conds, k+" = ?")
	}
	conds = append(conds, "version = ?")
	return versioned{
		name: name,
		insert: "INSERT INTO " + name + " (" + strings.Join(all, ", ") + ") VALUES (" +
			strings.TrimSuffix(strings.Repeat("?, ", len(all)), ", ") + ")",
		update: "UPDATE " + name + " SET " + strings.Join(sets, ", ") + " WHERE " + strings.Join(conds, " AND "),
	}
}

// put returns the statement writing a row. The stored version becomes
// expect+1 whatever the record's own Version field says: the version is
// the store's, not the caller's.
func (v versioned) put(what string, keyArgs []any, expect int64, cols []any) (op, error) {
	if expect < 0 {
		return op{}, fmt.Errorf("sqlite: write %s: negative expected version %d", what, expect)
	}
	if expect == 0 {
		args := append(append(append([]any{}, keyArgs...), int64(1)), cols...)
		return op{what: what, query: v.insert, args: args}, nil
	}
	args := append(append(append(append([]any{}, expect+1), cols...), keyArgs...), expect)
	return op{what: fmt.Sprintf("%s at version %d", what, expect), query: v.update, args: args, mustAffect: true}, nil
}

var (
	pipelinesTable = newVersioned("pipelines", []string{"id"},
		[]string{"config_version", "doc", "hash", "file", "first_loaded_at", "updated_at", "paused", "paused_until", "paused_at", "resumed_at", "removed_at", "pause_windows", "watch_changed_at"})
	sensorsTable = newVersioned("sensors", []string{"pipeline_id", "key"},
		[]string{"data", "changed_at", "written_at", "period", "watched"})
	runsTable = newVersioned("runs", []string{"pipeline_id", "schedule_id", "period"},
		[]string{"state", "active", "outcome", "cause", "generation", "attempt",
			"created_at", "updated_at", "state_since", "expires_at", "eval_started_at", "eval_deadline",
			"trigger_errors", "trigger_in_flight", "job_run_id", "job_meta", "job_started_at", "poll_deadline",
			"ended_at", "last_failure_category", "last_failure_message", "config_version"})
)

const (
	sqlSensorDelete   = `DELETE FROM sensors WHERE pipeline_id = ? AND key = ?`
	sqlLedgerInsert   = `INSERT INTO ledger (` + sqlstore.LedgerCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)`
	sqlBaselinePut    = `INSERT OR REPLACE INTO baselines (` + sqlstore.BaselineCols + `) VALUES (?, ?, ?, ?, ?)`
	sqlBaselineDelete = `DELETE FROM baselines WHERE pipeline_id = ? AND schedule_id = ? AND period = ?`
	sqlMarkerInsert   = `INSERT INTO markers (` + sqlstore.MarkerCols + `) VALUES (?, ?, ?, ?, ?, ?)`
	sqlMarkerPut      = `INSERT OR REPLACE INTO markers (` + sqlstore.MarkerCols + `) VALUES (?, ?, ?, ?, ?, ?)`
	sqlMarkerDelete   = `DELETE FROM markers WHERE pipeline_id = ? AND schedule_id = ? AND period = ? AND kind = ?`
	// sqlTimerPut upserts a timer. A row already stored as written (a
	// decision that sets the timer it already set: a sixth of a
	// simulation's timer writes) is left alone, and one that differs is
	// updated in place, where INSERT OR REPLACE deleted it, its index
	// entries too, and inserted it again: the row stored is the same.
	sqlTimerPut = `INSERT INTO timers (` + sqlstore.TimerCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET kind = excluded.kind, pipeline_id = excluded.pipeline_id,
		schedule_id = excluded.schedule_id, period = excluded.period, due_at = excluded.due_at, detail = excluded.detail
		WHERE kind IS NOT excluded.kind OR pipeline_id IS NOT excluded.pipeline_id OR schedule_id IS NOT excluded.schedule_id
		OR period IS NOT excluded.period OR due_at IS NOT excluded.due_at OR detail IS NOT excluded.detail`
	sqlTimerReplace = `UPDATE timers SET kind = ?, pipeline_id = ?, schedule_id = ?, period = ?, due_at = ?, detail = ? WHERE key = ? AND due_at = ?`
	sqlTimerDelete  = `DELETE FROM timers WHERE key = ?`
	sqlTimerClaim   = `DELETE FROM timers WHERE key = ? AND due_at = ?`
)

// plan turns a Change into statements, in the order of Change's fields.
// The order does not matter for atomicity (any failure rolls back all of
// it); it only fixes which conflict is reported when several would fail.
func plan(c store.Change) ([]op, error) {
	e := sqlstore.Encoder{D: &dialect}
	ops := make([]op, 0, 16)
	add := func(o op, err error) {
		if err != nil && e.Err == nil {
			e.Err = err
		}
		ops = append(ops, o)
	}
	for _, w := range c.Pipelines {
		p := w.Pipeline
		add(pipelinesTable.put("pipeline "+p.ID, []any{p.ID}, w.ExpectVersion, sqlstore.EncodePipeline(&e, p)))
	}
	calendarOps(&e, c, add)
	checkOps(c, add)
	for _, w := range c.Sensors {
		x := w.Sensor
		add(sensorsTable.put("sensor "+x.PipelineID+"/"+x.Key, []any{x.PipelineID, x.Key}, w.ExpectVersion, sqlstore.EncodeSensor(&e, x)))
	}
	for _, d := range c.SensorDeletes {
		add(op{what: "sensor " + d.PipelineID + "/" + d.Key, query: sqlSensorDelete, args: []any{d.PipelineID, d.Key}}, nil)
	}
	for _, w := range c.Runs {
		k := w.Run.Key
		add(runsTable.put("run "+keyString(k), []any{k.PipelineID, k.ScheduleID, k.Period}, w.ExpectVersion, sqlstore.EncodeRun(&e, w.Run)))
	}
	for _, l := range c.Ledger {
		k := l.Key
		add(op{what: fmt.Sprintf("ledger entry %d of %s", l.Seq, keyString(k)), query: sqlLedgerInsert,
			args: []any{k.PipelineID, k.ScheduleID, k.Period, l.Seq, l.Reason, l.Source, e.Time("ledger entry at", l.At)}}, nil)
	}
	for _, b := range c.Baselines {
		k := b.Key
		add(op{what: "baseline " + keyString(k), query: sqlBaselinePut,
			args: []any{k.PipelineID, k.ScheduleID, k.Period, e.JSON("baseline sensors", b.Sensors, len(b.Sensors)),
				e.Time("baseline captured at", b.CapturedAt)}}, nil)
	}
	for _, k := range c.BaselineDelete {
		add(op{what: "baseline " + keyString(k), query: sqlBaselineDelete, args: []any{k.PipelineID, k.ScheduleID, k.Period}}, nil)
	}
	for _, w := range c.Markers {
		m := w.Marker
		q := sqlMarkerPut
		if w.IfAbsent {
			// A plain INSERT: an existing marker fails on the primary key.
			q = sqlMarkerInsert
		}
		add(op{what: "marker " + m.Kind + " of " + keyString(m.Key), query: q,
			args: []any{m.Key.PipelineID, m.Key.ScheduleID, m.Key.Period, m.Kind,
				e.Time("marker at", m.At), e.Object("marker detail", m.Detail)}}, nil)
	}
	for _, d := range c.MarkerDeletes {
		add(op{what: "marker " + d.Kind + " of " + keyString(d.Key), query: sqlMarkerDelete,
			args: []any{d.Key.PipelineID, d.Key.ScheduleID, d.Key.Period, d.Kind}}, nil)
	}
	for _, w := range c.Timers {
		add(timerPut(&e, w), nil)
	}
	if o, ok := timerDeletes(c.TimerDeletes); ok {
		add(o, nil)
	}
	for _, d := range c.TimerDeletes {
		if d.ExpectDueAt == nil {
			continue
		}
		add(op{what: "timer " + d.Key + " due at " + d.ExpectDueAt.UTC().Format(time.RFC3339Nano), query: sqlTimerClaim,
			args: []any{d.Key, e.Time("timer expected due time", *d.ExpectDueAt)}, mustAffect: true}, nil)
	}
	for _, ev := range c.Events {
		eventOps(&e, ev, add)
	}
	alertOps(&e, c, add)
	leaseOps(&e, c, add)
	backfillOps(&e, c, add)
	silenceOps(&e, c, add)
	if e.Err != nil {
		return nil, e.Err
	}
	return ops, nil
}

// timerDeletes is one statement for the timer deletes with no condition
// (a decision that closes a period drops its SLA timers, set or not): a
// DELETE of each key, or of all of them by IN. ok is false when there is
// none.
func timerDeletes(ds []store.TimerDelete) (op, bool) {
	var keys []string
	for _, d := range ds {
		if d.ExpectDueAt == nil {
			keys = append(keys, d.Key)
		}
	}
	switch len(keys) {
	case 0:
		return op{}, false
	case 1:
		return op{what: "timer " + keys[0], query: sqlTimerDelete, args: []any{keys[0]}}, true
	}
	w := sqlstore.Where{D: &dialect}
	addIn(&w, "key", keys)
	return op{what: fmt.Sprintf("%d timers", len(keys)), query: `DELETE FROM timers` + w.String(), args: w.Args}, true
}

// timerPut writes a timer: an upsert, or with ExpectDueAt an update whose
// WHERE clause demands the stored due time (the caller is the one that
// processed that firing; a timer moved or deleted since is a conflict).
func timerPut(e *sqlstore.Encoder, w store.TimerWrite) op {
	args := sqlstore.TimerArgs(e, w)
	if w.ExpectDueAt == nil {
		return op{what: "timer " + w.Timer.Key, query: sqlTimerPut, args: args}
	}
	return op{what: "timer " + w.Timer.Key + " due at " + w.ExpectDueAt.UTC().Format(time.RFC3339Nano), query: sqlTimerReplace,
		args: args, mustAffect: true}
}
