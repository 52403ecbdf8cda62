package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Retention. Expire deletes, in one short write transaction, at most
// Limit expired records, kind after kind. Each statement deletes the rows
// a bounded SELECT finds through an index on the period (or the event
// time) — sensors_period, markers_period_kind, baselines_period,
// ledger_period, runs_period, events_time — so a batch costs what it
// deletes plus the protected rows it steps over (the few periods still at
// work), never a scan of the history. The caller (serve's sweep) calls it
// again while More is true, letting other writers in between.

// expiry is one kind's bounded delete. A period kind's statement takes
// the period cutoff, the limit and the activity cutoff (?1, ?2, ?3); a
// kind that expires by time takes the time cutoff and the limit.
type expiry struct {
	kind, query string
}

// keep is the condition that protects a period's records (the row is t):
// the period still has an active run or an armed timer in the pipeline.
// Both are lookups in covering indexes: runs_active (named: left to
// itself the planner picks runs_period and reads each run's row to test
// active) and timers_period.
const keep = `NOT EXISTS (SELECT 1 FROM runs r INDEXED BY runs_active WHERE r.active = 1 AND r.pipeline_id = t.pipeline_id AND r.period = t.period)
	AND NOT EXISTS (SELECT 1 FROM timers m WHERE m.pipeline_id = t.pipeline_id AND m.period = t.period)`

// quiet is the other half of run.PeriodExpired: the date of the row's
// period (the day, or the day of its hour) saw no activity in the
// pipeline since the cutoff ?3 — no run of the date changed and no sensor
// of the date was written (store.ExpireParams). Each is a range of one
// pipeline's date in an index: runs_pipeline_period, and
// sensors_pipeline_period (migration 0014), which covers written_at.
const quiet = `NOT EXISTS (SELECT 1 FROM runs a WHERE a.pipeline_id = t.pipeline_id
		AND a.period >= substr(t.period, 1, 10) AND a.period < substr(t.period, 1, 10) || 'U' AND a.updated_at >= ?3)
	AND NOT EXISTS (SELECT 1 FROM sensors w INDEXED BY sensors_pipeline_period WHERE w.pipeline_id = t.pipeline_id
		AND w.period >= substr(t.period, 1, 10) AND w.period < substr(t.period, 1, 10) || 'U' AND w.written_at >= ?3)`

// expiries lists the kinds in the order they are deleted: the run, the
// record that says the period happened, goes last.
var expiries = []expiry{
	// A per-period sensor of an hour ("…T05") may feed the run of its day
	// in a pipeline whose periods are days: that run protects it too.
	{"sensors", `DELETE FROM sensors WHERE (pipeline_id, key) IN (SELECT pipeline_id, key FROM sensors t
		WHERE t.period < ?1
		AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.active = 1 AND r.pipeline_id = t.pipeline_id AND r.period IN (t.period, substr(t.period, 1, 10)))
		AND NOT EXISTS (SELECT 1 FROM timers m WHERE m.pipeline_id = t.pipeline_id AND m.period IN (t.period, substr(t.period, 1, 10)))
		AND ` + quiet + `
		LIMIT ?2)`},
	{"markers", `DELETE FROM markers WHERE (pipeline_id, schedule_id, period, kind) IN (SELECT pipeline_id, schedule_id, period, kind FROM markers t
		WHERE t.period > '' AND t.period < ?1 AND ` + keep + ` AND ` + quiet + ` LIMIT ?2)`},
	{"baselines", `DELETE FROM baselines WHERE (pipeline_id, schedule_id, period) IN (SELECT pipeline_id, schedule_id, period FROM baselines t
		WHERE t.period > '' AND t.period < ?1 AND ` + keep + ` AND ` + quiet + ` LIMIT ?2)`},
	{"ledger", `DELETE FROM ledger WHERE (pipeline_id, schedule_id, period, seq) IN (SELECT pipeline_id, schedule_id, period, seq FROM ledger t
		WHERE t.period > '' AND t.period < ?1 AND ` + keep + ` AND ` + quiet + ` LIMIT ?2)`},
	{"runs", `DELETE FROM runs WHERE (pipeline_id, schedule_id, period) IN (SELECT pipeline_id, schedule_id, period FROM runs t
		WHERE t.period > '' AND t.period < ?1 AND t.active = 0 AND ` + keep + ` AND ` + quiet + ` LIMIT ?2)`},
	{"events", `DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE time < ?1 LIMIT ?2)`},
	// Alert delivery bookkeeping, by its At (a sink's cursor never
	// expires): the time indexes of migration 0008.
	{"alert_threads", `DELETE FROM alert_threads WHERE rowid IN (SELECT rowid FROM alert_threads WHERE at < ?1 LIMIT ?2)`},
	{"alerts_sent", `DELETE FROM alerts_sent WHERE rowid IN (SELECT rowid FROM alerts_sent WHERE at < ?1 LIMIT ?2)`},
	{"alerts_alerted", `DELETE FROM alerts_alerted WHERE rowid IN (SELECT rowid FROM alerts_alerted WHERE at < ?1 LIMIT ?2)`},
	{"dead_letters", `DELETE FROM dead_letters WHERE rowid IN (SELECT rowid FROM dead_letters WHERE at < ?1 LIMIT ?2)`},
	// Silences by their end (migration 0013's silences_end).
	{"silences", `DELETE FROM silences WHERE rowid IN (SELECT rowid FROM silences WHERE end_at < ?1 LIMIT ?2)`},
}

// byTime reports whether a kind expires by ExpireParams.Before rather
// than by period.
func (x expiry) byTime() bool {
	switch x.kind {
	case "events", "alert_threads", "alerts_sent", "alerts_alerted", "dead_letters", "silences":
		return true
	}
	return false
}

// Expire deletes expired history (store.ExpireParams), at most p.Limit
// records, in one transaction on the writer connection.
func (s *Store) Expire(ctx context.Context, p store.ExpireParams) (store.ExpireResult, error) {
	if p.Limit <= 0 {
		return store.ExpireResult{}, fmt.Errorf("sqlite: expire: limit %d: want a positive bound", p.Limit)
	}
	if err := ctx.Err(); err != nil {
		return store.ExpireResult{}, err
	}
	// Like a Commit, a batch that started runs to its end: it is short.
	ctx = context.WithoutCancel(ctx)
	res := store.ExpireResult{Deleted: map[string]int{}}
	var args [][]any // each kind's arguments, the limit left out; nil skips it
	for _, x := range expiries {
		switch {
		case p.Before.IsZero():
			args = append(args, nil)
		case x.byTime():
			args = append(args, []any{sqlstore.QueryNanos(p.Before)})
		case p.PeriodBefore == "":
			args = append(args, nil)
		default:
			args = append(args, []any{p.PeriodBefore, nil, sqlstore.QueryNanos(p.Before)})
		}
	}
	// Held like a group's leader holds it: the checkpointer waits, and
	// Commits queue behind this one short transaction.
	s.group.writing.Lock()
	defer s.group.writing.Unlock()
	// The caches are told under the lock, as a Commit's are (cacheHooks):
	// their finish runs before the Unlock.
	if s.runs != nil { // it may delete runs (rowcache.go)
		gen := s.runs.drop(nil)
		defer s.runs.finish(gen, nil, nil)
	}
	if s.timers != nil { // it deletes no timer today; if it ever does
		gen := s.timers.drop(nil)
		defer s.timers.finish(gen, nil, nil)
	}
	err := s.onWriter(ctx, func(conn *sql.Conn) error {
		if err := s.settleScratch(ctx, conn); err != nil {
			return err
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqlite: begin: %w", err)
		}
		defer tx.Rollback()
		left := p.Limit
		for i, x := range expiries {
			if args[i] == nil {
				continue
			}
			if left == 0 {
				res.More = true
				break
			}
			a := slices.Clone(args[i])
			if len(a) == 1 {
				a = append(a, left)
			} else {
				a[1] = left
			}
			r, err := tx.ExecContext(ctx, x.query, a...)
			if err != nil {
				return fmt.Errorf("sqlite: expire %s: %w", x.kind, interpretError(err))
			}
			n, err := r.RowsAffected()
			if err != nil {
				return fmt.Errorf("sqlite: expire %s: %w", x.kind, err)
			}
			if n > 0 {
				res.Deleted[x.kind] = int(n)
			}
			left -= int(n)
		}
		if left == 0 {
			res.More = true
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqlite: commit: %w", interpretError(err))
		}
		return nil
	})
	if err != nil {
		return store.ExpireResult{}, err
	}
	return res, nil
}
