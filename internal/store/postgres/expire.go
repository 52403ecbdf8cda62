package postgres

import (
	"context"
	"fmt"

	"github.com/interlockhq/interlock/internal/store"
)

// Retention. Expire deletes, in one transaction, at most Limit expired
// records, kind after kind, as the SQLite store does: each statement
// deletes the rows a bounded SELECT finds through an index on the period
// (sensors_period, markers_period, baselines_period, ledger_period,
// runs_period) or the time (events_time and the alert tables' at
// indexes), so a batch costs what it deletes plus the protected rows it
// steps over, never a scan of the history. The caller calls again while
// More is true.

type expiry struct {
	kind, query string
	byTime      bool // expires by ExpireParams.Before rather than by period
}

// keep is the condition that protects a period's records (the row is t):
// the period still has an active run or an armed timer in the pipeline
// (runs_active, timers_period).
const keep = `NOT EXISTS (SELECT 1 FROM runs r WHERE r.active AND r.pipeline_id = t.pipeline_id AND r.period = t.period)
	AND NOT EXISTS (SELECT 1 FROM timers m WHERE m.pipeline_id = t.pipeline_id AND m.period = t.period)`

// quiet is the other half of run.PeriodExpired: the date of the row's
// period (the day, or the day of its hour) saw no activity in the
// pipeline since the cutoff $3 — no run of the date changed and no sensor
// of the date was written (store.ExpireParams). Each is a range of one
// pipeline's date in an index: runs_pipeline_period, and
// sensors_pipeline_period (migration 0006).
const quiet = `NOT EXISTS (SELECT 1 FROM runs a WHERE a.pipeline_id = t.pipeline_id
		AND a.period >= substr(t.period, 1, 10) AND a.period < substr(t.period, 1, 10) || 'U' AND a.updated_at >= $3)
	AND NOT EXISTS (SELECT 1 FROM sensors w WHERE w.pipeline_id = t.pipeline_id
		AND w.period >= substr(t.period, 1, 10) AND w.period < substr(t.period, 1, 10) || 'U' AND w.written_at >= $3)`

// expiries lists the kinds in the order they are deleted: the run, the
// record that says the period happened, goes last. A period kind takes
// the period cutoff ($1), the limit ($2) and the activity cutoff ($3); a
// kind that expires by time takes the time cutoff and the limit.
var expiries = []expiry{
	// A per-period sensor of an hour ("…T05") may feed the run of its day
	// in a pipeline whose periods are days: that run protects it too. The
	// outer written_at test is rechecked on a row a concurrent write
	// updated while this delete waited for it (READ COMMITTED): that
	// write is kept.
	{"sensors", `DELETE FROM sensors WHERE (pipeline_id, key) IN (SELECT pipeline_id, key FROM sensors t
		WHERE t.period < $1
		AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.active AND r.pipeline_id = t.pipeline_id AND r.period IN (t.period, substr(t.period, 1, 10)))
		AND NOT EXISTS (SELECT 1 FROM timers m WHERE m.pipeline_id = t.pipeline_id AND m.period IN (t.period, substr(t.period, 1, 10)))
		AND ` + quiet + `
		LIMIT $2) AND (written_at IS NULL OR written_at < $3)`, false},
	{"markers", `DELETE FROM markers WHERE (pipeline_id, schedule_id, period, kind) IN (SELECT pipeline_id, schedule_id, period, kind FROM markers t
		WHERE t.period > '' AND t.period < $1 AND ` + keep + ` AND ` + quiet + ` LIMIT $2)`, false},
	{"baselines", `DELETE FROM baselines WHERE (pipeline_id, schedule_id, period) IN (SELECT pipeline_id, schedule_id, period FROM baselines t
		WHERE t.period > '' AND t.period < $1 AND ` + keep + ` AND ` + quiet + ` LIMIT $2)`, false},
	{"ledger", `DELETE FROM ledger WHERE (pipeline_id, schedule_id, period, seq) IN (SELECT pipeline_id, schedule_id, period, seq FROM ledger t
		WHERE t.period > '' AND t.period < $1 AND ` + keep + ` AND ` + quiet + ` LIMIT $2)`, false},
	{"runs", `DELETE FROM runs WHERE (pipeline_id, schedule_id, period) IN (SELECT pipeline_id, schedule_id, period FROM runs t
		WHERE t.period > '' AND t.period < $1 AND NOT t.active AND ` + keep + ` AND ` + quiet + ` LIMIT $2)
		AND NOT active AND (updated_at IS NULL OR updated_at < $3)`, false},
	{"events", `DELETE FROM events WHERE (shard, seq) IN (SELECT shard, seq FROM events WHERE time < $1 LIMIT $2)`, true},
	{"alert_threads", `DELETE FROM alert_threads WHERE (sink, pipeline_id, schedule_id, period) IN
		(SELECT sink, pipeline_id, schedule_id, period FROM alert_threads WHERE at < $1 LIMIT $2)`, true},
	{"alerts_sent", `DELETE FROM alerts_sent WHERE (sink, pipeline_id, schedule_id, period, type, hash) IN
		(SELECT sink, pipeline_id, schedule_id, period, type, hash FROM alerts_sent WHERE at < $1 LIMIT $2)`, true},
	{"alerts_alerted", `DELETE FROM alerts_alerted WHERE (sink, pipeline_id, schedule_id, period) IN
		(SELECT sink, pipeline_id, schedule_id, period FROM alerts_alerted WHERE at < $1 LIMIT $2)`, true},
	{"dead_letters", `DELETE FROM dead_letters WHERE (sink, event_id) IN (SELECT sink, event_id FROM dead_letters WHERE at < $1 LIMIT $2)`, true},
	// Silences by their end (migration 0005's silences_end).
	{"silences", `DELETE FROM silences WHERE id IN (SELECT id FROM silences WHERE end_at < $1 LIMIT $2)`, true},
}

// Expire deletes expired history (store.ExpireParams), at most p.Limit
// records, in one transaction.
func (s *Store) Expire(ctx context.Context, p store.ExpireParams) (store.ExpireResult, error) {
	if p.Limit <= 0 {
		return store.ExpireResult{}, fmt.Errorf("postgres: expire: limit %d: want a positive bound", p.Limit)
	}
	res := store.ExpireResult{Deleted: map[string]int{}}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return res, fmt.Errorf("postgres: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	left := p.Limit
	for _, x := range expiries {
		if p.Before.IsZero() || (!x.byTime && p.PeriodBefore == "") {
			continue
		}
		args := []any{queryNanos(p.Before), left}
		if !x.byTime {
			args = []any{p.PeriodBefore, left, queryNanos(p.Before)}
		}
		if left == 0 {
			res.More = true
			break
		}
		tag, err := tx.Exec(ctx, x.query, args...)
		if err != nil {
			return store.ExpireResult{}, fmt.Errorf("postgres: expire %s: %w", x.kind, err)
		}
		if n := int(tag.RowsAffected()); n > 0 {
			res.Deleted[x.kind] = n
			left -= n
		}
	}
	if left == 0 {
		res.More = true
	}
	if err := tx.Commit(ctx); err != nil {
		return store.ExpireResult{}, fmt.Errorf("postgres: commit: %w", err)
	}
	return res, nil
}
