package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// EventList reads each shard p touches after its cursor position — one
// statement for all of them, a LATERAL range of the primary key (shard,
// seq) per shard, or of events_pipeline / events_period for a read scoped
// by pipeline — then merges them (store.MergeEventShards).
//
// A shard's numbers become visible in the order they were taken (the
// commit that takes them holds the counter's row lock until it ends), so a
// statement that sees number n of a shard sees every number below n that
// will ever be committed: a cursor never passes an event still to come.
func (s *Store) EventList(ctx context.Context, p store.EventListParams) (store.EventPage, error) {
	q, args, shards := eventListQuery(p)
	evs, err := list(ctx, s, sqlstore.ScanEvent, "events", q, args...)
	if err != nil {
		return store.EventPage{}, err
	}
	return eventPage(p, shards, evs)
}

// eventListQuery is EventList's statement (Facts runs it too) and the
// shards it reads.
func eventListQuery(p store.EventListParams) (string, []any, []int) {
	shards := p.Shards()
	after := make([]int64, len(shards))
	ids := make([]int32, len(shards))
	for i, sh := range shards {
		ids[i], after[i] = int32(sh), p.After[sh]
	}
	w := sqlstore.Where{D: &dialect}
	w.Args = []any{ids, after}
	if p.PipelineID != "" {
		w.Add("e.pipeline_id = ?", p.PipelineID)
		if p.Period != "" {
			w.Add("e.date = ?", p.Period)
		}
	} else {
		w.Add("e.shard = c.shard")
		if p.Period != "" {
			w.Add("e.date = ?", p.Period)
		}
	}
	w.Add("e.seq > c.after")
	if len(p.Types) > 0 {
		types := make([]string, len(p.Types))
		for i, t := range p.Types {
			types[i] = string(t)
		}
		w.Add("e.type = ANY(?::text[])", types)
	}
	if !p.Since.IsZero() {
		w.Add("e.time >= ?", queryNanos(p.Since))
	}
	q := `SELECT x.* FROM unnest($1::int[], $2::bigint[]) AS c(shard, after)
		CROSS JOIN LATERAL (SELECT ` + prefixed("e.", sqlstore.EventCols) + ` FROM events e` + w.String() + ` ORDER BY e.seq` + w.Limit(p.Limit) + `) x
		ORDER BY x.shard, x.seq`
	return q, w.Args, shards
}

// eventPage is the page of the events eventListQuery read, by shard.
func eventPage(p store.EventListParams, shards []int, evs []event.Event) (store.EventPage, error) {
	per := make([][]event.Event, len(shards))
	pos := map[int]int{}
	for i, sh := range shards {
		pos[sh] = i
	}
	for _, ev := range evs {
		i, ok := pos[ev.Shard]
		if !ok {
			return store.EventPage{}, fmt.Errorf("postgres: list events: event %s in shard %d, not one read", ev.ID, ev.Shard)
		}
		per[i] = append(per[i], ev)
	}
	return store.MergeEventShards(p, per), nil
}

// prefixed qualifies each column of a column list with p.
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}
