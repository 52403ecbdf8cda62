package postgres

import (
	"context"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// Silences (store/silences.go, migration 0005).

const silenceCols = `id, version, pipelines, types, levels, owners, starts_at, ends_at, expired_at, end_at, comment, created_by, created_at`

var silencesTable = newVersioned("silences", false, []string{"id"},
	[]string{"pipelines", "types", "levels", "owners", "starts_at", "ends_at", "expired_at", "end_at", "comment", "created_by", "created_at"})

func scanSilence(r scanner) (store.Silence, error) {
	var (
		s      store.Silence
		types  []event.Type
		levels []event.Level
		end    int64
	)
	err := r.Scan(&s.ID, &s.Version, jsonCol{&s.Pipelines}, jsonCol{&types}, jsonCol{&levels}, jsonCol{&s.Owners},
		timeCol{&s.StartsAt}, timeCol{&s.EndsAt}, timeCol{&s.ExpiredAt}, &end, &s.Comment, &s.CreatedBy, timeCol{&s.CreatedAt})
	s.Types, s.Levels = types, levels
	return s, err
}

// encodeSilence returns the values of silenceCols after id and version.
func encodeSilence(e *encoder, s store.Silence) []any {
	return []any{e.json("silence pipelines", s.Pipelines, len(s.Pipelines)), e.json("silence types", s.Types, len(s.Types)),
		e.json("silence levels", s.Levels, len(s.Levels)), e.json("silence owners", s.Owners, len(s.Owners)),
		e.time("silence starts at", s.StartsAt), e.time("silence ends at", s.EndsAt), e.time("silence expired at", s.ExpiredAt),
		queryNanos(s.End()), s.Comment, s.CreatedBy, e.time("silence created at", s.CreatedAt)}
}

// SilenceGet returns a silence by ID.
func (s *Store) SilenceGet(ctx context.Context, id string) (store.Silence, error) {
	return get(ctx, s, scanSilence, "silence "+id,
		`SELECT `+silenceCols+` FROM silences WHERE id = $1`, id)
}

// SilenceList returns the silences ending at or after p.EndedSince (the
// silences_end index), earliest created first.
func (s *Store) SilenceList(ctx context.Context, p store.SilenceListParams) ([]store.Silence, error) {
	if p.EndedSince.IsZero() {
		return list(ctx, s, scanSilence, "silences",
			`SELECT `+silenceCols+` FROM silences ORDER BY created_at, id`)
	}
	return list(ctx, s, scanSilence, "silences",
		`SELECT `+silenceCols+` FROM silences WHERE end_at >= $1 ORDER BY created_at, id`, queryNanos(p.EndedSince))
}

// silenceOps are the writes of a Change's silences.
func silenceOps(e *encoder, c store.Change, addAll func([]op, error)) {
	for _, w := range c.Silences {
		x := w.Silence
		addAll(silencesTable.put("silence "+x.ID, []any{x.ID}, w.ExpectVersion, encodeSilence(e, x)))
	}
}
