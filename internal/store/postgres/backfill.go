package postgres

import (
	"context"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Backfills (store/backfill.go, migration 0004).

var backfillsTable = newVersioned("backfills", false, []string{"pipeline_id", "id"}, sqlstore.BackfillColsWritten)

// BackfillGet returns one backfill of a pipeline.
func (s *Store) BackfillGet(ctx context.Context, pipelineID, id string) (store.Backfill, error) {
	return get(ctx, s, sqlstore.ScanBackfill, "backfill "+pipelineID+"/"+id,
		`SELECT `+sqlstore.BackfillCols+` FROM backfills WHERE pipeline_id = $1 AND id = $2`, pipelineID, id)
}

// BackfillList returns a pipeline's backfills, oldest request first.
func (s *Store) BackfillList(ctx context.Context, pipelineID string) ([]store.Backfill, error) {
	q, args := dialect.BackfillListQuery(pipelineID)
	return list(ctx, s, sqlstore.ScanBackfill, "backfills of "+pipelineID, q, args...)
}

// backfillOps are the writes of a Change's backfills.
func backfillOps(e *encoder, c store.Change, addAll func([]op, error)) {
	for _, w := range c.Backfills {
		b := w.Backfill
		c := e.codec()
		vals, err := sqlstore.EncodeBackfill(&c, b)
		e.done(&c)
		if err != nil {
			addAll(nil, err)
			continue
		}
		addAll(backfillsTable.put("backfill "+b.PipelineID+"/"+b.ID, []any{b.PipelineID, b.ID}, w.ExpectVersion, vals))
	}
}
