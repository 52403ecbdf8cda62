package sqlite

import (
	"context"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Backfills (store/backfill.go, migration 0012).

var backfillsTable = newVersioned("backfills", []string{"pipeline_id", "id"}, sqlstore.BackfillColsWritten)

// BackfillGet returns one backfill of a pipeline.
func (s *Store) BackfillGet(ctx context.Context, pipelineID, id string) (store.Backfill, error) {
	return get(ctx, s.read, sqlstore.ScanBackfill, "backfill "+pipelineID+"/"+id,
		`SELECT `+sqlstore.BackfillCols+` FROM backfills WHERE pipeline_id = ? AND id = ?`, pipelineID, id)
}

// BackfillList returns a pipeline's backfills, oldest request first.
func (s *Store) BackfillList(ctx context.Context, pipelineID string) ([]store.Backfill, error) {
	q, args := dialect.BackfillListQuery(pipelineID)
	return list(ctx, s.read, sqlstore.ScanBackfill, "backfills of "+pipelineID, q, args...)
}

// backfillOps are the writes of a Change's backfills.
func backfillOps(e *sqlstore.Encoder, c store.Change, add func(op, error)) {
	for _, w := range c.Backfills {
		b := w.Backfill
		body, err := store.EncodeBackfillBody(b)
		if err != nil {
			add(op{}, err)
			continue
		}
		add(backfillsTable.put("backfill "+b.PipelineID+"/"+b.ID, []any{b.PipelineID, b.ID}, w.ExpectVersion,
			[]any{e.Time("backfill requested at", b.RequestedAt), string(body)}))
	}
}
