package store

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
)

// The event log is EventShards logs, one per shard, with no order between
// them that a writer must take a lock for. An event's shard is
// EventShard(PipelineID), so every event of one pipeline is in one shard,
// in commit order. Each shard has a counter record: a Commit that appends
// events to a shard increments its counter in the same transaction, and
// the event's position is (Shard, Seq). On every backend a shard's
// positions become visible in commit order (SQLite has one writer;
// PostgreSQL row-locks the counter until commit; DynamoDB conditions the
// transaction on the counter's value), so a reader that remembers, per
// shard, the last position it saw — a Cursor — never skips an event
// committed later at a lower position, and no counter is shared by every
// writer of the store. docs/architecture.md, "Event order and delivery
// cursors".

// EventShards is the number of event log shards. It is part of the stored
// data (each event's shard, each cursor's width): changing it, or the
// hash in EventShard, needs a migration of both.
const EventShards = 16

// EventShard returns the shard of the events of a pipeline (the empty id,
// for events about no pipeline, too): FNV-1a of the id, modulo
// EventShards.
func EventShard(pipelineID string) int {
	h := fnv.New32a()
	h.Write([]byte(pipelineID))
	return int(h.Sum32() % EventShards)
}

// Cursor is a position in the event log: per shard, the Seq of the last
// event read (0: none). The zero Cursor is the start of the log. Cursors
// are values; Advance returns a new one.
type Cursor [EventShards]int64

// ErrBadCursor: a cursor's text is not one String wrote.
var ErrBadCursor = errors.New("store: bad event cursor")

// cursorVersion starts a cursor's text, so a later format can be told
// apart (and an older binary's cursor refused clearly).
const cursorVersion = "v1"

// String returns the cursor's text: "v1", then each shard's position in
// base 36 after a dot, trailing zero positions left out ("v1" is the
// start, "v1.5.0.a" is 5 in shard 0 and 10 in shard 2). ParseCursor reads
// it back. It is opaque to everyone but the store.
func (c Cursor) String() string {
	n := len(c)
	for n > 0 && c[n-1] == 0 {
		n--
	}
	var b strings.Builder
	b.WriteString(cursorVersion)
	for _, seq := range c[:n] {
		b.WriteByte('.')
		b.WriteString(strconv.FormatInt(seq, 36))
	}
	return b.String()
}

// ParseCursor reads a cursor String wrote. The empty text, and "0" (the
// start of the log in the numbered cursors of earlier versions), are the
// zero Cursor; any other text that String did not write is ErrBadCursor.
func ParseCursor(s string) (Cursor, error) {
	var c Cursor
	if s == "" || s == "0" {
		return c, nil
	}
	fields := strings.Split(s, ".")
	if fields[0] != cursorVersion {
		if _, err := strconv.ParseUint(s, 10, 64); err == nil {
			return c, fmt.Errorf("%w: %q is a cursor of an older interlock (a number); start again without it", ErrBadCursor, s)
		}
		return c, fmt.Errorf("%w: %q does not start with %q", ErrBadCursor, s, cursorVersion)
	}
	if len(fields)-1 > EventShards {
		return c, fmt.Errorf("%w: %q has %d positions, at most %d", ErrBadCursor, s, len(fields)-1, EventShards)
	}
	for i, f := range fields[1:] {
		seq, err := strconv.ParseInt(f, 36, 64)
		if err != nil || seq < 0 || f != strconv.FormatInt(seq, 36) {
			return Cursor{}, fmt.Errorf("%w: %q: position %d is %q, not a base-36 count", ErrBadCursor, s, i, f)
		}
		c[i] = seq
	}
	return c, nil
}

// Advance returns c moved past e: e's shard position becomes e.Seq unless
// it is already there or further.
func (c Cursor) Advance(e event.Event) Cursor {
	if e.Shard >= 0 && e.Shard < EventShards {
		c[e.Shard] = max(c[e.Shard], e.Seq)
	}
	return c
}

// Passed reports whether c is at or past e: a reader holding c has read e.
func (c Cursor) Passed(e event.Event) bool {
	return e.Shard >= 0 && e.Shard < EventShards && c[e.Shard] >= e.Seq
}

// EventListParams selects a page of EventList. Zero fields do not filter.
type EventListParams struct {
	// After is where the page starts: events the cursor has not passed.
	After Cursor
	Limit int // 0: no limit
	// PipelineID scopes the read to one pipeline, and so to one shard.
	PipelineID string
	Period     string
	Types      []event.Type
	Since      time.Time // inclusive
}

// Shards returns the shards a read with p touches: the pipeline's one
// when p names a pipeline, every shard otherwise.
func (p EventListParams) Shards() []int {
	if p.PipelineID != "" {
		return []int{EventShard(p.PipelineID)}
	}
	all := make([]int, EventShards)
	for i := range all {
		all[i] = i
	}
	return all
}

// EventPage is a page of the event log and the cursor after it.
type EventPage struct {
	Events []event.Event // never nil
	// Next is the page's cursor moved past every event in it: pass it as
	// After for the following page. A page with no event returns the
	// cursor it was given.
	Next Cursor
}

// MergeEventShards builds the page of a read with p from each shard's
// matching events after p.After, each slice in its shard's order and
// holding at least the first p.Limit of them (all of them when p.Limit is
// 0). It is the merge every backend uses: repeatedly the head that is
// earliest by Time (ties by shard) until p.Limit events, so a shard's
// events keep their order within and across pages whatever their times,
// and a reader following Next sees each event exactly once.
func MergeEventShards(p EventListParams, shards [][]event.Event) EventPage {
	page := EventPage{Events: []event.Event{}, Next: p.After}
	total := 0
	for _, s := range shards {
		total += len(s)
	}
	if p.Limit > 0 {
		total = min(total, p.Limit)
	}
	heads := make([]int, len(shards))
	for len(page.Events) < total {
		best := -1
		for i, s := range shards {
			if heads[i] == len(s) {
				continue
			}
			if best < 0 || earlier(s[heads[i]], shards[best][heads[best]]) {
				best = i
			}
		}
		e := shards[best][heads[best]]
		heads[best]++
		page.Events = append(page.Events, e)
		page.Next = page.Next.Advance(e)
	}
	return page
}

// earlier orders the heads of two shards: by time, then, at one instant,
// by id — the engine's ids of one instant sort in the order they were
// made, so an event caused by another's commit comes after it whatever
// shards the two pipelines hash to (an upstream's JOB_COMPLETED before
// the VALIDATION_PASSED it caused downstream) — then by shard.
func earlier(a, b event.Event) bool {
	return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Shard, b.Shard)) < 0
}
