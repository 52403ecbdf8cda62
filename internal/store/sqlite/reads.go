package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Reads are single statements on the reader pool: each sees one committed
// state, and none waits for a writer.

// get runs a single-row query; no row is store.ErrNotFound.
//
// A point lookup takes tens of microseconds: a context that ends during
// one does not interrupt it. It is checked before the lookup starts, and
// the lookup runs without the driver's watch for the end of the context,
// which costs a goroutine per statement.
func get[T any](ctx context.Context, db *pool, scan func(sqlstore.Scanner) (T, error), what, query string, args ...any) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, fmt.Errorf("sqlite: read %s: %w", what, err)
	}
	return sqlstore.Get(&dialect, db.queryRow(context.WithoutCancel(ctx), query, args...), scan, what)
}

// list runs a query and scans every row. An empty result is an empty,
// non-nil slice, so callers can range over it and encode it as [].
func list[T any](ctx context.Context, db *pool, scan func(sqlstore.Scanner) (T, error), what, query string, args ...any) ([]T, error) {
	if db.wstmts != nil {
		// One connection: read on its driver (rawread.go).
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: list %s: %w", what, err)
		}
		var (
			out  []T
			lerr error
		)
		err := db.onDriver(context.WithoutCancel(ctx), func(t *wtx) error {
			rows, err := t.rows(query, args)
			if err == nil {
				defer rows.Close()
			}
			out, lerr = sqlstore.List(&dialect, rows, err, scan, what)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("sqlite: list %s: %w", what, err)
		}
		return out, lerr
	}
	rows, err := db.query(ctx, query, args...)
	if err == nil {
		defer rows.Close()
	}
	return sqlstore.List(&dialect, rows, err, scan, what)
}

// addIn adds "col IN (?, …)" for a non-empty set of values (a method
// cannot take the type parameter).
func addIn[S ~string](w *sqlstore.Where, col string, vals []S) {
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = string(v)
	}
	w.Add(col+" IN ("+strings.TrimSuffix(strings.Repeat("?,", len(vals)), ",")+")", args...)
}

func keyString(k run.Key) string { return k.PipelineID + "/" + k.ScheduleID + "/" + k.Period }

// PipelineGet returns the pipeline with the given id.
func (s *Store) PipelineGet(ctx context.Context, id string) (store.Pipeline, error) {
	var gen uint64
	if s.pipelines != nil {
		p, ok, g := s.pipelines.get(id)
		if ok {
			return p, nil
		}
		gen = g
	}
	p, err := get(ctx, s.read, sqlstore.ScanPipeline, "pipeline "+id,
		`SELECT `+sqlstore.PipelineCols+` FROM pipelines WHERE id = ?`, id)
	if err == nil && s.pipelines != nil {
		s.pipelines.put(gen, p)
	}
	return p, err
}

// PipelineList returns every pipeline, sorted by id.
func (s *Store) PipelineList(ctx context.Context) ([]store.Pipeline, error) {
	var gen uint64
	if s.pipelines != nil {
		rows, ok, g := s.pipelines.list()
		if ok {
			return rows, nil
		}
		gen = g
	}
	rows, err := list(ctx, s.read, sqlstore.ScanPipeline, "pipelines", sqlstore.PipelineListQuery)
	if err == nil && s.pipelines != nil {
		s.pipelines.putList(gen, rows)
	}
	return rows, err
}

// SensorGet returns one sensor.
func (s *Store) SensorGet(ctx context.Context, pipelineID, key string) (store.Sensor, error) {
	return get(ctx, s.read, dialect.ScanSensor, "sensor "+pipelineID+"/"+key,
		`SELECT `+sqlstore.SensorCols+` FROM sensors WHERE pipeline_id = ? AND key = ?`, pipelineID, key)
}

// SensorList returns the pipeline's sensors, sorted by key.
func (s *Store) SensorList(ctx context.Context, pipelineID string) ([]store.Sensor, error) {
	return list(ctx, s.read, dialect.ScanSensor, "sensors of "+pipelineID,
		`SELECT `+sqlstore.SensorCols+` FROM sensors WHERE pipeline_id = ? ORDER BY key`, pipelineID)
}

// SensorGetMany returns the pipeline's sensors stored under p.Keys, sorted
// by key: one statement, each key a lookup of the primary key.
func (s *Store) SensorGetMany(ctx context.Context, p store.SensorGetManyParams) ([]store.Sensor, error) {
	if len(p.Keys) == 0 {
		return []store.Sensor{}, nil
	}
	w := sqlstore.Where{D: &dialect}
	w.Add("pipeline_id = ?", p.PipelineID)
	addIn(&w, "key", p.Keys)
	return list(ctx, s.read, dialect.ScanSensor, "sensors of "+p.PipelineID,
		`SELECT `+sqlstore.SensorCols+` FROM sensors`+w.String()+` ORDER BY key`, w.Args...)
}

// SensorListPrefix returns the pipeline's sensors whose key starts with
// p.Prefix, sorted by key: a range of the primary key, [prefix, the first
// string after every string that starts with prefix). LIKE and GLOB would
// not use the index on a BINARY column without an exact-case rule, and
// substr() never does.
func (s *Store) SensorListPrefix(ctx context.Context, p store.SensorListPrefixParams) ([]store.Sensor, error) {
	q, args := dialect.SensorListPrefixQuery(p)
	return list(ctx, s.read, dialect.ScanSensor, "sensors of "+p.PipelineID+" starting with "+p.Prefix, q, args...)
}

// SensorListChanged returns sensors matching p, earliest ChangedAt first
// (ties by pipeline, then key). A zero ChangedAt is stored as NULL, which
// SQLite sorts first and which no "changed_at >= ?" matches: the zero time
// is earlier than every other.
func (s *Store) SensorListChanged(ctx context.Context, p store.SensorListChangedParams) ([]store.Sensor, error) {
	if _, err := p.Index(); err != nil {
		return nil, err
	}
	q, args := dialect.SensorListChangedQuery(p)
	return list(ctx, s.read, dialect.ScanSensor, "changed sensors", q, args...)
}

// RunGet returns the run with the given key.
func (s *Store) RunGet(ctx context.Context, key run.Key) (run.Run, error) {
	read := func() (run.Run, error) {
		return get(ctx, s.read, sqlstore.ScanRun, "run "+keyString(key),
			`SELECT `+sqlstore.RunCols+` FROM runs WHERE pipeline_id = ? AND schedule_id = ? AND period = ?`,
			key.PipelineID, key.ScheduleID, key.Period)
	}
	if s.runs == nil {
		return read()
	}
	return readThrough(s.runs, key, "run "+keyString(key), read)
}

// RunList returns runs matching p, newest period first (ties by pipeline,
// then schedule). Period strings sort chronologically as text.
func (s *Store) RunList(ctx context.Context, p store.RunListParams) ([]run.Run, error) {
	if _, err := p.Index(); err != nil {
		return nil, err
	}
	q, args := dialect.RunListQuery(p)
	return list(ctx, s.read, sqlstore.ScanRun, "runs", q, args...)
}

// LedgerList returns the rerun ledger of a period, oldest (lowest Seq)
// first.
func (s *Store) LedgerList(ctx context.Context, key run.Key) ([]store.LedgerEntry, error) {
	return list(ctx, s.read, sqlstore.ScanLedger, "ledger of "+keyString(key),
		`SELECT `+sqlstore.LedgerCols+` FROM ledger WHERE pipeline_id = ? AND schedule_id = ? AND period = ? ORDER BY seq`,
		key.PipelineID, key.ScheduleID, key.Period)
}

// BaselineGet returns the post-run baseline of a period.
func (s *Store) BaselineGet(ctx context.Context, key run.Key) (store.Baseline, error) {
	return get(ctx, s.read, sqlstore.ScanBaseline, "baseline "+keyString(key),
		`SELECT `+sqlstore.BaselineCols+` FROM baselines WHERE pipeline_id = ? AND schedule_id = ? AND period = ?`,
		key.PipelineID, key.ScheduleID, key.Period)
}

// MarkerGet returns one marker of a period.
func (s *Store) MarkerGet(ctx context.Context, key run.Key, kind string) (store.Marker, error) {
	return get(ctx, s.read, sqlstore.ScanMarker, "marker "+kind+" of "+keyString(key),
		`SELECT `+sqlstore.MarkerCols+` FROM markers WHERE pipeline_id = ? AND schedule_id = ? AND period = ? AND kind = ?`,
		key.PipelineID, key.ScheduleID, key.Period, kind)
}

// MarkerListOf returns every marker of one period, sorted by kind: a
// range of the primary key.
func (s *Store) MarkerListOf(ctx context.Context, key run.Key) ([]store.Marker, error) {
	return list(ctx, s.read, sqlstore.ScanMarker, "markers of "+keyString(key),
		`SELECT `+sqlstore.MarkerCols+` FROM markers WHERE pipeline_id = ? AND schedule_id = ? AND period = ? ORDER BY kind`,
		key.PipelineID, key.ScheduleID, key.Period)
}

// MarkerList returns markers matching p, sorted by pipeline, schedule,
// period and kind.
func (s *Store) MarkerList(ctx context.Context, p store.MarkerListParams) ([]store.Marker, error) {
	if _, err := p.Index(); err != nil {
		return nil, err
	}
	q, args := dialect.MarkerListQuery(p)
	return list(ctx, s.read, sqlstore.ScanMarker, "markers", q, args...)
}

// TimerListDue returns timers due at or before now, earliest first (ties
// by key), at most limit (limit <= 0: all of them).
func (s *Store) TimerListDue(ctx context.Context, now time.Time, limit int) ([]store.Timer, error) {
	q, args := dialect.TimerListDueQuery(now, limit)
	return list(ctx, s.read, sqlstore.ScanTimer, "due timers", q, args...)
}

// TimerNext returns the earliest timer (ties by key).
func (s *Store) TimerNext(ctx context.Context) (store.Timer, error) {
	return get(ctx, s.read, sqlstore.ScanTimer, "next timer",
		`SELECT `+sqlstore.TimerCols+` FROM timers ORDER BY due_at, key LIMIT 1`)
}

// TimerList returns timers matching p, due or not, earliest first (ties
// by key).
func (s *Store) TimerList(ctx context.Context, p store.TimerListParams) ([]store.Timer, error) {
	q, args := dialect.TimerListQuery(p)
	return list(ctx, s.read, sqlstore.ScanTimer, "timers", q, args...)
}

// TimerGet returns the timer with the given key.
func (s *Store) TimerGet(ctx context.Context, key string) (store.Timer, error) {
	read := func() (store.Timer, error) {
		return get(ctx, s.read, sqlstore.ScanTimer, "timer "+key, `SELECT `+sqlstore.TimerCols+` FROM timers WHERE key = ?`, key)
	}
	if s.timers == nil {
		return read()
	}
	return readThrough(s.timers, key, "timer "+key, read)
}
