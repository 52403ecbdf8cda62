package postgres

import (
	"context"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Silences (store/silences.go, migration 0005).

var silencesTable = newVersioned("silences", false, []string{"id"}, sqlstore.SilenceColsWritten)

// SilenceGet returns a silence by ID.
func (s *Store) SilenceGet(ctx context.Context, id string) (store.Silence, error) {
	return get(ctx, s, sqlstore.ScanSilence, "silence "+id,
		`SELECT `+sqlstore.SilenceCols+` FROM silences WHERE id = $1`, id)
}

// SilenceList returns the silences ending at or after p.EndedSince (the
// silences_end index), earliest created first.
func (s *Store) SilenceList(ctx context.Context, p store.SilenceListParams) ([]store.Silence, error) {
	if p.EndedSince.IsZero() {
		return list(ctx, s, sqlstore.ScanSilence, "silences",
			`SELECT `+sqlstore.SilenceCols+` FROM silences ORDER BY created_at, id`)
	}
	return list(ctx, s, sqlstore.ScanSilence, "silences",
		`SELECT `+sqlstore.SilenceCols+` FROM silences WHERE end_at >= $1 ORDER BY created_at, id`, queryNanos(p.EndedSince))
}

// silenceOps are the writes of a Change's silences.
func silenceOps(e *encoder, c store.Change, addAll func([]op, error)) {
	for _, w := range c.Silences {
		x := w.Silence
		addAll(silencesTable.put("silence "+x.ID, []any{x.ID}, w.ExpectVersion, encodeRow(e, sqlstore.EncodeSilence, x)))
	}
}
