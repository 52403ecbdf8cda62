package dynamodb

import (
	"context"
	"slices"
	"strings"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// Silences (store/silences.go) live in the control table under
// SILENCES / SILENCE#<id>: one partition, as the calendars, because they
// are few (a handful active, the ones that ended within the retention)
// and SilenceList reads them all. Each carries a ttl from its end, so
// DynamoDB deletes it when a deleting store's Expire would; an early
// expiry rewrites the item, and with it the ttl.

const (
	pkSilences       = "SILENCES"
	skSilencePrefix  = "SILENCE#"
	attrSilenceEndAt = "endAt"
)

func (s *Store) silenceItem(x store.Silence, version int64) *itemWriter {
	w := newItem(pkSilences, skSilencePrefix+x.ID)
	w.str("id", x.ID)
	w.num(aVersion, version)
	w.json("pipelines", x.Pipelines, len(x.Pipelines))
	w.json("types", x.Types, len(x.Types))
	w.json("levels", x.Levels, len(x.Levels))
	w.json("owners", x.Owners, len(x.Owners))
	w.time("startsAt", x.StartsAt)
	w.time("endsAt", x.EndsAt)
	w.time("expiredAt", x.ExpiredAt)
	w.time(attrSilenceEndAt, x.End())
	w.str("comment", x.Comment)
	w.str("createdBy", x.CreatedBy)
	w.time("createdAt", x.CreatedAt)
	s.setTimeTTL(w, x.End())
	return w
}

func decodeSilence(it item) (store.Silence, error) {
	r := readItem(it)
	var x store.Silence
	x.ID, x.Version = r.str("id"), r.num(aVersion)
	r.json("pipelines", &x.Pipelines)
	var types []event.Type
	r.json("types", &types)
	var levels []event.Level
	r.json("levels", &levels)
	x.Types, x.Levels = types, levels
	r.json("owners", &x.Owners)
	x.StartsAt, x.EndsAt, x.ExpiredAt = r.time("startsAt"), r.time("endsAt"), r.time("expiredAt")
	x.Comment, x.CreatedBy, x.CreatedAt = r.str("comment"), r.str("createdBy"), r.time("createdAt")
	return x, r.err
}

// SilenceGet returns a silence by ID.
func (s *Store) SilenceGet(ctx context.Context, id string) (store.Silence, error) {
	return getAs(ctx, s, s.t.Control, pkSilences, skSilencePrefix+id, decodeSilence)
}

// SilenceList reads the silences' partition (few items) and keeps those
// ending at or after p.EndedSince, earliest created first.
func (s *Store) SilenceList(ctx context.Context, p store.SilenceListParams) ([]store.Silence, error) {
	items, err := s.queryAll(ctx, queryRange{table: s.t.Control, pk: pkSilences,
		cond: "begins_with(#sk, :a)", values: []string{skSilencePrefix}})
	if err != nil {
		return nil, err
	}
	all, err := decodeAll(items, decodeSilence)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, x := range all {
		if p.EndedSince.IsZero() || !x.End().Before(p.EndedSince) {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b store.Silence) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// silenceActions are the writes of a Change's silences.
func (s *Store) silenceActions(c store.Change, add func(action, error)) {
	for _, w := range c.Silences {
		cond, v := versionCond(w.ExpectVersion)
		add(put(s.t.Control, "silence "+w.Silence.ID, s.silenceItem(w.Silence, w.ExpectVersion+1), cond, v))
	}
}
