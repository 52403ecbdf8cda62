package sqlite

import (
	"context"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Silences (store/silences.go, migration 0013).

var silencesTable = newVersioned("silences", []string{"id"},
	[]string{"pipelines", "types", "levels", "owners", "starts_at", "ends_at", "expired_at", "end_at", "comment", "created_by", "created_at"})

// SilenceGet returns a silence by ID.
func (s *Store) SilenceGet(ctx context.Context, id string) (store.Silence, error) {
	return get(ctx, s.read, sqlstore.ScanSilence, "silence "+id,
		`SELECT `+sqlstore.SilenceCols+` FROM silences WHERE id = ?`, id)
}

// SilenceList returns the silences ending at or after p.EndedSince (the
// silences_end index), earliest created first.
func (s *Store) SilenceList(ctx context.Context, p store.SilenceListParams) ([]store.Silence, error) {
	if p.EndedSince.IsZero() {
		return list(ctx, s.read, sqlstore.ScanSilence, "silences",
			`SELECT `+sqlstore.SilenceCols+` FROM silences ORDER BY created_at, id`)
	}
	return list(ctx, s.read, sqlstore.ScanSilence, "silences",
		`SELECT `+sqlstore.SilenceCols+` FROM silences WHERE end_at >= ? ORDER BY created_at, id`, sqlstore.QueryNanos(p.EndedSince))
}

// silenceOps are the writes of a Change's silences.
func silenceOps(e *sqlstore.Encoder, c store.Change, add func(op, error)) {
	for _, w := range c.Silences {
		x := w.Silence
		add(silencesTable.put("silence "+x.ID, []any{x.ID}, w.ExpectVersion, sqlstore.EncodeSilence(e, x)))
	}
}
