package dynamodb

import (
	"cmp"
	"context"
	"slices"

	"github.com/interlockhq/interlock/internal/store"
)

// Backfills (store/backfill.go) live in the events table, one partition
// per pipeline, BACKFILLS#<pipeline> / <id>, with no ttl: the port's
// version rule as a condition on the item's version. A pipeline's list
// is one Query of its partition.

const pkBackfillsPrefix = "BACKFILLS#"

func backfillItem(b store.Backfill, version int64) *itemWriter {
	w := newItem(pkBackfillsPrefix+b.PipelineID, b.ID)
	w.str(aPipeline, b.PipelineID)
	w.str("id", b.ID)
	w.num(aVersion, version)
	w.time("requestedAt", b.RequestedAt)
	body, err := store.EncodeBackfillBody(b)
	if err != nil {
		w.fail(err)
	}
	w.bytes("body", body)
	return w
}

func decodeBackfill(it item) (store.Backfill, error) {
	r := readItem(it)
	b := store.Backfill{PipelineID: r.str(aPipeline), ID: r.str("id"), Version: r.num(aVersion), RequestedAt: r.time("requestedAt")}
	body := r.bytes("body")
	if r.err != nil {
		return b, r.err
	}
	return b, store.DecodeBackfillBody(body, &b)
}

// BackfillGet returns one backfill of a pipeline.
func (s *Store) BackfillGet(ctx context.Context, pipelineID, id string) (store.Backfill, error) {
	return getAs(ctx, s, s.t.Events, pkBackfillsPrefix+pipelineID, id, decodeBackfill)
}

// BackfillList returns a pipeline's backfills, oldest request first.
func (s *Store) BackfillList(ctx context.Context, pipelineID string) ([]store.Backfill, error) {
	items, err := s.queryAll(ctx, queryRange{table: s.t.Events, pk: pkBackfillsPrefix + pipelineID})
	if err != nil {
		return nil, err
	}
	out := make([]store.Backfill, 0, len(items))
	for _, it := range items {
		b, err := decodeBackfill(it)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b store.Backfill) int {
		return cmp.Or(a.RequestedAt.Compare(b.RequestedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// backfillActions are the writes of a Change's backfills.
func (s *Store) backfillActions(c store.Change, add func(action, error)) {
	for _, w := range c.Backfills {
		cond, v := versionCond(w.ExpectVersion)
		add(put(s.t.Events, "backfill "+w.Backfill.PipelineID+"/"+w.Backfill.ID, backfillItem(w.Backfill, w.ExpectVersion+1), cond, v))
	}
}
