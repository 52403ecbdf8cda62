package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

var _ store.SensorFactsReader = (*Store)(nil)

// SensorFacts reads a sensor decision's first facts — the pipeline row,
// the sensor's stored state and the runs asked for — in one round trip:
// the three primary-key reads PipelineGet, SensorGet and RunGet would make,
// sent as one batch. The store has no inbox (a sensor is written through
// Commit only): InboxErr is store.ErrNotFound.
func (s *Store) SensorFacts(ctx context.Context, p store.SensorFactsParams) (store.SensorFacts, error) {
	f := store.SensorFacts{Runs: map[run.Key]run.Run{}, InboxErr: store.ErrNotFound}
	var pids, sids, periods []string
	seen := map[run.Key]bool{}
	for _, k := range p.Runs {
		if !seen[k] {
			seen[k] = true
			pids, sids, periods = append(pids, k.PipelineID), append(sids, k.ScheduleID), append(periods, k.Period)
		}
	}
	var b pgx.Batch
	b.Queue(`SELECT `+sqlstore.PipelineCols+` FROM pipelines WHERE id = $1`, p.PipelineID)
	b.Queue(`SELECT `+sqlstore.SensorCols+` FROM sensors WHERE pipeline_id = $1 AND key = $2`, p.PipelineID, []byte(p.Key))
	if len(pids) > 0 {
		b.Queue(`SELECT `+sqlstore.RunCols+` FROM runs WHERE (pipeline_id, schedule_id, period) IN
			(SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`, pids, sids, periods)
	}
	br := s.pool.SendBatch(ctx, &b)
	defer br.Close()
	var err error
	f.Pipeline, err = sqlstore.ScanPipeline(br.QueryRow())
	if f.PipelineFound, err = found(err); err != nil {
		return store.SensorFacts{}, fmt.Errorf("postgres: read pipeline %s: %w", p.PipelineID, err)
	}
	f.Sensor, err = dialect.ScanSensor(br.QueryRow())
	if f.SensorFound, err = found(err); err != nil {
		return store.SensorFacts{}, fmt.Errorf("postgres: read sensor %s/%s: %w", p.PipelineID, p.Key, err)
	}
	if len(pids) == 0 {
		return f, br.Close()
	}
	rows, err := br.Query()
	if err != nil {
		return store.SensorFacts{}, fmt.Errorf("postgres: read runs of %s: %w", p.PipelineID, err)
	}
	for rows.Next() {
		r, err := sqlstore.ScanRun(rows)
		if err != nil {
			rows.Close()
			return store.SensorFacts{}, fmt.Errorf("postgres: read runs of %s: %w", p.PipelineID, err)
		}
		f.Runs[r.Key] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.SensorFacts{}, fmt.Errorf("postgres: read runs of %s: %w", p.PipelineID, err)
	}
	return f, br.Close()
}

// found turns a single-row read's error into whether the row was there.
func found(err error) (bool, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
