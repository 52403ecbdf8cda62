package sqlstore

import (
	"time"

	"github.com/interlockhq/interlock/internal/store"
)

// The statements of the filtered list reads, the same on both SQL stores
// but for the dialect; each backend's Facts runs those of RunList,
// SensorListPrefix and SensorListChanged as range reads (RangeReads).

// narrow is a range condition the caller knows to be narrow (the
// watchdog asks for the last few days). Without the hint SQLite's planner
// guesses a range keeps a quarter of the table and prefers walking the
// primary key in ORDER BY order to a range scan and a sort: for markers it
// picked a full scan, a cost that grows with history (the SQLite store's
// TestQueryPlans pins the choice). unlikely() returns its argument
// unchanged.
func (d *Dialect) narrow(cond string) string {
	if d.Hinted {
		return "unlikely(" + cond + ")"
	}
	return cond
}

// RunListQuery is RunList's statement: runs matching p, newest period
// first (ties by pipeline, then schedule). Period strings sort
// chronologically as text.
func (d *Dialect) RunListQuery(p store.RunListParams) (string, []any) {
	w := Where{D: d}
	if p.PipelineID != "" {
		w.Add("pipeline_id = ?", p.PipelineID)
	}
	if p.ScheduleID != "" {
		w.Add("schedule_id = ?", p.ScheduleID)
	}
	if p.Period != "" {
		w.Add("period = ?", p.Period)
	}
	if p.PeriodFrom != "" {
		w.Add(d.narrow("period >= ?"), p.PeriodFrom)
	}
	if p.PeriodTo != "" {
		w.Add("period <= ?", p.PeriodTo)
	}
	if !p.UpdatedSince.IsZero() {
		w.Add(d.narrow("updated_at >= ?"), QueryNanos(p.UpdatedSince))
	}
	from := ` FROM runs`
	if p.ActiveOnly {
		w.Add(d.IsTrue("active"))
		if d.Hinted {
			// The partial index holds the active runs only: its cost
			// follows what is in flight, never a pipeline's history (the
			// planner, without statistics, prefers runs_pipeline_period
			// otherwise).
			from = ` FROM runs INDEXED BY runs_active`
		}
	}
	q := `SELECT ` + RunCols + from + w.String() + ` ORDER BY period DESC, pipeline_id, schedule_id` + w.Limit(p.Limit)
	return q, w.Args
}

// MarkerListQuery is MarkerList's statement: markers matching p, sorted
// by pipeline, schedule, period and kind.
func (d *Dialect) MarkerListQuery(p store.MarkerListParams) (string, []any) {
	w := Where{D: d}
	if p.PeriodFrom != "" {
		w.Add(d.narrow("period >= ?"), p.PeriodFrom)
	}
	if !p.Since.IsZero() {
		w.Add(d.narrow("at >= ?"), QueryNanos(p.Since))
	}
	q := `SELECT ` + MarkerCols + ` FROM markers` + w.String() + ` ORDER BY pipeline_id, schedule_id, period, kind`
	return q, w.Args
}

// SensorListPrefixQuery is SensorListPrefix's statement: the pipeline's
// sensors whose key starts with p.Prefix (byte-wise), sorted by key — a
// range of the primary key, [prefix, the least key after every key that
// starts with it). LIKE and GLOB would not use SQLite's index on a BINARY
// column without an exact-case rule, and substr() never does.
func (d *Dialect) SensorListPrefixQuery(p store.SensorListPrefixParams) (string, []any) {
	w := Where{D: d}
	w.Add("pipeline_id = ?", p.PipelineID)
	w.Add("key >= ?", d.KeyArg(p.Prefix))
	if end, ok := PrefixEnd(p.Prefix); ok {
		w.Add("key < ?", d.KeyArg(end))
	}
	return `SELECT ` + SensorCols + ` FROM sensors` + w.String() + ` ORDER BY key`, w.Args
}

// SensorListChangedQuery is SensorListChanged's statement: sensors
// matching p, earliest ChangedAt first (ties by pipeline, then key). A
// zero ChangedAt is stored as NULL, sorted first, and matched by no
// "changed_at >= ?": the zero time is earlier than every other.
func (d *Dialect) SensorListChangedQuery(p store.SensorListChangedParams) (string, []any) {
	w := Where{D: d}
	if p.PipelineID != "" {
		w.Add("pipeline_id = ?", p.PipelineID)
	}
	if p.Watched {
		w.Add(d.IsTrue("watched")) // sensors_changed's own condition: the partial index serves it
	}
	if !p.Since.IsZero() {
		w.Add("changed_at >= ?", QueryNanos(p.Since))
	}
	q := `SELECT ` + SensorCols + ` FROM sensors` + w.String() + ` ORDER BY changed_at NULLS FIRST, pipeline_id, key` + w.Limit(p.Limit)
	return q, w.Args
}

// TimerListDueQuery is TimerListDue's statement: timers due at or before
// now, earliest first (ties by key), at most limit (limit <= 0: all).
func (d *Dialect) TimerListDueQuery(now time.Time, limit int) (string, []any) {
	w := Where{D: d}
	w.Add("due_at <= ?", QueryNanos(now))
	return `SELECT ` + TimerCols + ` FROM timers` + w.String() + ` ORDER BY due_at, key` + w.Limit(limit), w.Args
}

// TimerListQuery is TimerList's statement: timers matching p, due or not,
// earliest first (ties by key).
//
// It walks timers_due in order and filters: the timers table holds only
// pending timers (one per key, removed or moved once processed), so its
// size follows pipelines and work in flight, never history, and an index
// per filter would cost every timer write for little (the SQLite store's
// TestQueryPlans pins the walk).
func (d *Dialect) TimerListQuery(p store.TimerListParams) (string, []any) {
	w := Where{D: d}
	if p.Kind != "" {
		w.Add("kind = ?", p.Kind)
	}
	return `SELECT ` + TimerCols + ` FROM timers` + w.String() + ` ORDER BY due_at, key`, w.Args
}
