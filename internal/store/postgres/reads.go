package postgres

import (
	"context"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Reads are single statements on the pool: each sees one committed state
// (READ COMMITTED takes a snapshot per statement) and none waits for a
// writer.

// get runs a single-row query; no row is store.ErrNotFound.
func get[T any](ctx context.Context, s *Store, scan func(scanner) (T, error), what, query string, args ...any) (T, error) {
	return sqlstore.Get(&dialect, s.pool.QueryRow(ctx, query, args...), scan, what)
}

// list runs a query and scans every row. An empty result is an empty,
// non-nil slice.
func list[T any](ctx context.Context, s *Store, scan func(scanner) (T, error), what, query string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err == nil {
		defer rows.Close()
	}
	return sqlstore.List(&dialect, rows, err, scan, what)
}

func keyString(k run.Key) string { return k.PipelineID + "/" + k.ScheduleID + "/" + k.Period }

// PipelineGet returns the pipeline with the given id.
func (s *Store) PipelineGet(ctx context.Context, id string) (store.Pipeline, error) {
	return get(ctx, s, sqlstore.ScanPipeline, "pipeline "+id,
		`SELECT `+sqlstore.PipelineCols+` FROM pipelines WHERE id = $1`, id)
}

// PipelineList returns every pipeline, sorted by id.
func (s *Store) PipelineList(ctx context.Context) ([]store.Pipeline, error) {
	return list(ctx, s, sqlstore.ScanPipeline, "pipelines", sqlstore.PipelineListQuery)
}

// SensorGet returns one sensor.
func (s *Store) SensorGet(ctx context.Context, pipelineID, key string) (store.Sensor, error) {
	return get(ctx, s, dialect.ScanSensor, "sensor "+pipelineID+"/"+key,
		`SELECT `+sqlstore.SensorCols+` FROM sensors WHERE pipeline_id = $1 AND key = $2`, pipelineID, []byte(key))
}

// SensorList returns the pipeline's sensors, sorted by key.
func (s *Store) SensorList(ctx context.Context, pipelineID string) ([]store.Sensor, error) {
	return list(ctx, s, dialect.ScanSensor, "sensors of "+pipelineID,
		`SELECT `+sqlstore.SensorCols+` FROM sensors WHERE pipeline_id = $1 ORDER BY key`, pipelineID)
}

// SensorGetMany returns the pipeline's sensors stored under p.Keys, sorted
// by key: one statement, each key a lookup of the primary key.
func (s *Store) SensorGetMany(ctx context.Context, p store.SensorGetManyParams) ([]store.Sensor, error) {
	if len(p.Keys) == 0 {
		return []store.Sensor{}, nil
	}
	keys := make([][]byte, len(p.Keys))
	for i, k := range p.Keys {
		keys[i] = []byte(k)
	}
	return list(ctx, s, dialect.ScanSensor, "sensors of "+p.PipelineID,
		`SELECT `+sqlstore.SensorCols+` FROM sensors WHERE pipeline_id = $1 AND key = ANY($2::bytea[]) ORDER BY key`, p.PipelineID, keys)
}

// SensorListPrefix returns the pipeline's sensors whose key starts with
// p.Prefix (byte-wise), sorted by key: a range of the primary key,
// [prefix, the least key after every key that starts with it).
func (s *Store) SensorListPrefix(ctx context.Context, p store.SensorListPrefixParams) ([]store.Sensor, error) {
	q, args := dialect.SensorListPrefixQuery(p)
	return list(ctx, s, dialect.ScanSensor, "sensors of "+p.PipelineID+" starting with "+p.Prefix, q, args...)
}

// SensorListChanged returns sensors matching p, earliest ChangedAt first
// (ties by pipeline, then key). A zero ChangedAt is stored as NULL, sorted
// first, and matched by no "changed_at >= $n".
func (s *Store) SensorListChanged(ctx context.Context, p store.SensorListChangedParams) ([]store.Sensor, error) {
	if _, err := p.Index(); err != nil {
		return nil, err
	}
	q, args := dialect.SensorListChangedQuery(p)
	return list(ctx, s, dialect.ScanSensor, "changed sensors", q, args...)
}

// RunGet returns the run with the given key.
func (s *Store) RunGet(ctx context.Context, key run.Key) (run.Run, error) {
	return get(ctx, s, sqlstore.ScanRun, "run "+keyString(key),
		`SELECT `+sqlstore.RunCols+` FROM runs WHERE pipeline_id = $1 AND schedule_id = $2 AND period = $3`,
		key.PipelineID, key.ScheduleID, key.Period)
}

// RunList returns runs matching p, newest period first (ties by pipeline,
// then schedule).
func (s *Store) RunList(ctx context.Context, p store.RunListParams) ([]run.Run, error) {
	if _, err := p.Index(); err != nil {
		return nil, err
	}
	q, args := dialect.RunListQuery(p)
	return list(ctx, s, sqlstore.ScanRun, "runs", q, args...)
}

// LedgerList returns the rerun ledger of a period, oldest (lowest Seq)
// first.
func (s *Store) LedgerList(ctx context.Context, key run.Key) ([]store.LedgerEntry, error) {
	return list(ctx, s, sqlstore.ScanLedger, "ledger of "+keyString(key),
		`SELECT `+sqlstore.LedgerCols+` FROM ledger WHERE pipeline_id = $1 AND schedule_id = $2 AND period = $3 ORDER BY seq`,
		key.PipelineID, key.ScheduleID, key.Period)
}

// BaselineGet returns the post-run baseline of a period.
func (s *Store) BaselineGet(ctx context.Context, key run.Key) (store.Baseline, error) {
	return get(ctx, s, sqlstore.ScanBaseline, "baseline "+keyString(key),
		`SELECT `+sqlstore.BaselineCols+` FROM baselines WHERE pipeline_id = $1 AND schedule_id = $2 AND period = $3`,
		key.PipelineID, key.ScheduleID, key.Period)
}

// MarkerGet returns one marker of a period.
func (s *Store) MarkerGet(ctx context.Context, key run.Key, kind string) (store.Marker, error) {
	return get(ctx, s, sqlstore.ScanMarker, "marker "+kind+" of "+keyString(key),
		`SELECT `+sqlstore.MarkerCols+` FROM markers WHERE pipeline_id = $1 AND schedule_id = $2 AND period = $3 AND kind = $4`,
		key.PipelineID, key.ScheduleID, key.Period, kind)
}

// MarkerListOf returns every marker of one period, sorted by kind: a range
// of the primary key.
func (s *Store) MarkerListOf(ctx context.Context, key run.Key) ([]store.Marker, error) {
	return list(ctx, s, sqlstore.ScanMarker, "markers of "+keyString(key),
		`SELECT `+sqlstore.MarkerCols+` FROM markers WHERE pipeline_id = $1 AND schedule_id = $2 AND period = $3 ORDER BY kind`,
		key.PipelineID, key.ScheduleID, key.Period)
}

// MarkerList returns markers matching p, sorted by pipeline, schedule,
// period and kind.
func (s *Store) MarkerList(ctx context.Context, p store.MarkerListParams) ([]store.Marker, error) {
	if _, err := p.Index(); err != nil {
		return nil, err
	}
	q, args := dialect.MarkerListQuery(p)
	return list(ctx, s, sqlstore.ScanMarker, "markers", q, args...)
}

// TimerListDue returns timers due at or before now, earliest first (ties
// by key), at most limit (limit <= 0: all of them).
func (s *Store) TimerListDue(ctx context.Context, now time.Time, limit int) ([]store.Timer, error) {
	q, args := dialect.TimerListDueQuery(now, limit)
	return list(ctx, s, sqlstore.ScanTimer, "due timers", q, args...)
}

// TimerNext returns the earliest timer (ties by key).
func (s *Store) TimerNext(ctx context.Context) (store.Timer, error) {
	return get(ctx, s, sqlstore.ScanTimer, "next timer", `SELECT `+sqlstore.TimerCols+` FROM timers ORDER BY due_at, key LIMIT 1`)
}

// TimerList returns timers matching p, due or not, earliest first (ties by
// key). The table holds pending timers only, so walking timers_due and
// filtering costs what is scheduled, never history.
func (s *Store) TimerList(ctx context.Context, p store.TimerListParams) ([]store.Timer, error) {
	q, args := dialect.TimerListQuery(p)
	return list(ctx, s, sqlstore.ScanTimer, "timers", q, args...)
}

// TimerGet returns the timer with the given key.
func (s *Store) TimerGet(ctx context.Context, key string) (store.Timer, error) {
	return get(ctx, s, sqlstore.ScanTimer, "timer "+key, `SELECT `+sqlstore.TimerCols+` FROM timers WHERE key = $1`, key)
}
