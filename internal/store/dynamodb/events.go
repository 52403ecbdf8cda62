package dynamodb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// The event log: EV#<shard> / <seq> in the events table, with the shard's
// counter at EVSHARD#<shard> / COUNTER (commit.go appends). A read takes,
// per shard it touches, the events after the cursor's position from one
// range — the shard itself, or one of its pipeline's, period's or type's
// index partitions — and store.MergeEventShards makes the page.

// EventList reads each shard p touches after p.After, in parallel. It
// reads the shards' counters first (one BatchGetItem) and queries only the
// shards whose counter is past the cursor: a shard's counter moves in the
// transaction that appends to it, so a counter at the cursor's position
// means nothing new there — and a reader polling an idle log (alert
// delivery) costs one request, not sixteen.
func (s *Store) EventList(ctx context.Context, p store.EventListParams) (store.EventPage, error) {
	shards, err := s.shardsPast(ctx, p.Shards(), p.After)
	if err != nil {
		return store.EventPage{}, err
	}
	per := make([][]event.Event, len(shards))
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	for i, n := range shards {
		wg.Go(func() { per[i], errs[i] = s.shardEvents(ctx, p, n) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return store.EventPage{}, err
	}
	return store.MergeEventShards(p, per), nil
}

// EventLogEnd returns the cursor at the end of the log: every shard's
// counter, in one BatchGetItem, strongly consistent. A reader that wants
// only new events (a control plane's live tail, on a log the deployment's
// functions write) starts there instead of reading the log forward.
func (s *Store) EventLogEnd(ctx context.Context) (store.Cursor, error) {
	shards := make([]int, store.EventShards)
	for i := range shards {
		shards[i] = i
	}
	counters, err := s.readCounterValues(ctx, shards)
	if err != nil {
		return store.Cursor{}, err
	}
	var c store.Cursor
	for n, v := range counters {
		c[n] = v
	}
	return c, nil
}

// shardsPast returns the shards among shards whose counter is past the
// cursor's position, strongly consistent.
func (s *Store) shardsPast(ctx context.Context, shards []int, after store.Cursor) ([]int, error) {
	counters, err := s.readCounterValues(ctx, shards)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, n := range shards {
		if counters[n] > after[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// shardEvents reads shard n's events matching p after p.After[n], in seq
// order, at most p.Limit of them.
func (s *Store) shardEvents(ctx context.Context, p store.EventListParams, n int) ([]event.Event, error) {
	after := p.After[n]
	var ranges []queryRange
	f := eventFilter{since: p.Since}
	switch {
	case p.PipelineID != "" && p.Period != "":
		ranges = append(ranges, s.eventRange(idxEventsByPeriod, "EVD#"+p.PipelineID+"#"+p.Period, after))
		f.types = p.Types
	case p.PipelineID != "":
		ranges = append(ranges, s.eventRange(idxEventsByPipeline, "EVP#"+p.PipelineID, after))
		f.types = p.Types
	case len(p.Types) > 0:
		seen := map[event.Type]bool{}
		for _, t := range p.Types {
			if !seen[t] {
				seen[t] = true
				ranges = append(ranges, s.eventRange(idxEventsByType, "EVT#"+string(t)+"#"+strconv.Itoa(n), after))
			}
		}
		f.period = p.Period
	default:
		ranges = append(ranges, queryRange{table: s.t.Events, pk: eventPK(n), cond: "#sk > :a", values: []string{eventSK(after)}})
		f.period = p.Period
	}
	var lists [][]event.Event
	for _, q := range ranges {
		f.apply(&q)
		var evs []event.Event
		var derr error
		err := s.query(ctx, q, func(it item) bool {
			e, _, err := decodeEvent(it)
			if err != nil {
				derr = err
				return false
			}
			evs = append(evs, e)
			return p.Limit <= 0 || len(evs) < p.Limit
		})
		if err := errors.Join(err, derr); err != nil {
			return nil, err
		}
		lists = append(lists, evs)
	}
	all := slices.Concat(lists...)
	if len(lists) > 1 { // several types of one shard: their union in seq order
		slices.SortFunc(all, func(a, b event.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	return limited(all, p.Limit), nil
}

func (s *Store) eventRange(ix index, pk string, after int64) queryRange {
	return queryRange{table: s.t.Events, index: ix, pk: pk, cond: "#sk > :a", values: []string{strconv.FormatInt(after, 10)}}
}

// eventFilter is what no key of the range read serves: a FilterExpression
// over the events the range holds after the cursor. The API's optional
// filters (since, a type beside a pipeline, a period without a pipeline)
// are the only ones; decisions read by pipeline and period.
type eventFilter struct {
	types  []event.Type
	period string
	since  time.Time
}

func (f eventFilter) apply(q *queryRange) {
	var conds []string
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	if len(f.types) > 0 {
		var in []string
		for i, t := range f.types {
			v := fmt.Sprintf(":ft%d", i)
			in = append(in, v)
			values[v] = strAttr(string(t))
		}
		names["#ftype"] = "type"
		conds = append(conds, fmt.Sprintf("#ftype IN (%s)", strings.Join(in, ", ")))
	}
	if f.period != "" {
		names["#fdate"] = "date"
		values[":fdate"] = strAttr(f.period)
		conds = append(conds, "#fdate = :fdate")
	}
	if !f.since.IsZero() {
		names["#ftime"] = "time"
		values[":ftime"] = numAttr(clampNanos(f.since))
		conds = append(conds, "#ftime >= :ftime")
	}
	if len(conds) == 0 {
		return
	}
	q.filter = strings.Join(conds, " AND ")
	q.filterNames = names
	q.filterValues = values
}
