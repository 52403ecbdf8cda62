package sqlite

import (
	"context"

	"github.com/interlockhq/interlock/internal/store"
)

// Backfills (store/backfill.go, migration 0012).

var backfillsTable = newVersioned("backfills", []string{"pipeline_id", "id"}, []string{"requested_at", "body"})

const backfillCols = `pipeline_id, id, version, requested_at, body`

func scanBackfill(r scanner) (store.Backfill, error) {
	var (
		b    store.Backfill
		body string
	)
	if err := r.Scan(&b.PipelineID, &b.ID, &b.Version, timeCol{&b.RequestedAt}, &body); err != nil {
		return b, err
	}
	return b, store.DecodeBackfillBody([]byte(body), &b)
}

// BackfillGet returns one backfill of a pipeline.
func (s *Store) BackfillGet(ctx context.Context, pipelineID, id string) (store.Backfill, error) {
	return get(ctx, s.read, scanBackfill, "backfill "+pipelineID+"/"+id,
		`SELECT `+backfillCols+` FROM backfills WHERE pipeline_id = ? AND id = ?`, pipelineID, id)
}

// BackfillList returns a pipeline's backfills, oldest request first.
func (s *Store) BackfillList(ctx context.Context, pipelineID string) ([]store.Backfill, error) {
	return list(ctx, s.read, scanBackfill, "backfills of "+pipelineID,
		`SELECT `+backfillCols+` FROM backfills WHERE pipeline_id = ? ORDER BY requested_at, id`, pipelineID)
}

// backfillOps are the writes of a Change's backfills.
func backfillOps(e *encoder, c store.Change, add func(op, error)) {
	for _, w := range c.Backfills {
		b := w.Backfill
		body, err := store.EncodeBackfillBody(b)
		if err != nil {
			add(op{}, err)
			continue
		}
		add(backfillsTable.put("backfill "+b.PipelineID+"/"+b.ID, []any{b.PipelineID, b.ID}, w.ExpectVersion,
			[]any{e.time("backfill requested at", b.RequestedAt), string(body)}))
	}
}
