package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

func testEvents(t *testing.T, o Options) {
	t.Run("RoundTripsEveryField", func(t *testing.T) {
		s := o.New(t)
		want := newEvent("ev-1", event.PostRunDrift, ordersDay, at(0).In(elsewhere))
		want.Shard, want.Seq = 3, 12345 // the store assigns both; it must ignore these
		requireAllSet(t, "newEvent", want)
		commit(t, s, addEvents(want))
		got := allEvents(t, s)
		if len(got) != 1 {
			t.Fatalf("%d events, want 1", len(got))
		}
		want.Shard, want.Seq = store.EventShard(ordersDay.PipelineID), 1
		mustMatch(t, "EventList", got[0], want)
	})

	t.Run("SeqFollowsCommitOrderNotCallerSeq", func(t *testing.T) {
		s := o.New(t)
		a1, a2 := newEvent("a1", event.JobTriggered, ordersDay, at(0)), newEvent("a2", event.JobCompleted, ordersDay, at(0))
		a1.Seq, a2.Seq = 900, 800
		b1 := newEvent("b1", event.SLAMet, ordersDay, at(-time.Hour)) // an earlier Time does not reorder the shard
		b1.Seq = 1
		c1, c2, c3 := newEvent("c1", event.PostRunPassed, ordersDay, at(0)), newEvent("c2", event.PostRunDrift, ordersDay, at(0)), newEvent("c3", event.RerunAccepted, ordersDay, at(0))
		commit(t, s, addEvents(a1, a2))
		commit(t, s, addEvents(b1))
		commit(t, s, addEvents(c1, c2, c3))
		got := allEvents(t, s)
		mustMatch(t, "event order", eventIDs(got), []string{"a1", "a2", "b1", "c1", "c2", "c3"})
		for i, e := range got {
			if e.Shard != store.EventShard(ordersDay.PipelineID) || e.Seq != int64(i+1) {
				t.Errorf("%s at (%d, %d), want (%d, %d): a shard counts 1, 2, 3 … in commit order",
					e.ID, e.Shard, e.Seq, store.EventShard(ordersDay.PipelineID), i+1)
			}
		}
	})

	t.Run("FailedCommitEventsNeverAppear", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Runs: []store.RunWrite{{Run: newRun(ordersDay)}}, Events: []event.Event{newEvent("created", event.ValidationPassed, ordersDay, at(0))}})
		first := must(s.EventList(t.Context(), store.EventListParams{})).get(t)
		conflict(t, s, store.Change{Runs: []store.RunWrite{{Run: newRun(ordersDay)}}, Events: []event.Event{newEvent("lost", event.ValidationPassed, ordersDay, at(0))}})
		commit(t, s, addEvents(newEvent("after", event.JobTriggered, ordersDay, at(0))))
		mustMatch(t, "events", eventIDs(allEvents(t, s)), []string{"created", "after"})
		// A reader that saw "created" and follows the cursor gets "after"
		// next: the failed commit took no position that would hide it.
		next := must(s.EventList(t.Context(), store.EventListParams{After: first.Next, Limit: 1})).get(t)
		mustMatch(t, "events after the first", eventIDs(next.Events), []string{"after"})
		if e := next.Events[0]; e.Seq != 2 {
			t.Errorf("after at seq %d, want 2: the failed commit used a position", e.Seq)
		}
	})

	t.Run("ShardsMergeByTimeEachInCommitOrder", func(t *testing.T) {
		// Two pipelines in different shards. Each shard is read in commit
		// order whatever its events' times; between shards the earlier
		// head goes first. Paging one event at a time gives the same order.
		s := o.New(t)
		a, b := key("orders", "daily", "2026-03-14"), key(otherShard("orders"), "daily", "2026-03-14")
		commit(t, s, addEvents(newEvent("a1", event.JobTriggered, a, at(5*time.Minute))))
		commit(t, s, addEvents(newEvent("b1", event.JobTriggered, b, at(3*time.Minute))))
		commit(t, s, addEvents(newEvent("a2", event.JobCompleted, a, at(time.Minute))))
		commit(t, s, addEvents(newEvent("b2", event.JobCompleted, b, at(2*time.Minute))))
		want := []string{"b1", "b2", "a1", "a2"}
		mustMatch(t, "EventList", eventIDs(allEvents(t, s)), want)
		mustMatch(t, "paging by one", pageAll(t, s, store.EventListParams{Limit: 1}), want)
		mustMatch(t, "one pipeline", eventIDs(must(s.EventList(t.Context(), store.EventListParams{PipelineID: "orders"})).get(t).Events),
			[]string{"a1", "a2"})
	})

	// The filter fixture, committed in three commits. e6's Time is earlier
	// than e4's and e5's: time filters go by Time, not by log order.
	// orders and billing share a shard (checked below), whose order is
	// commit order; e7, about no pipeline, is in another shard and later.
	global := key("", "", "")
	seed := [][]event.Event{
		{
			newEvent("e1", event.JobTriggered, key("orders", "daily", "2026-03-13"), at(0)),
			newEvent("e2", event.JobCompleted, key("orders", "daily", "2026-03-14"), at(time.Minute)),
		},
		{
			newEvent("e3", event.SLAWarning, key("billing", "daily", "2026-03-14"), at(2*time.Minute)),
		},
		{
			newEvent("e4", event.SLABreach, key("orders", "daily", "2026-03-14"), at(3*time.Minute)),
			newEvent("e5", event.JobCompleted, key("billing", "daily", "2026-03-13"), at(4*time.Minute)),
			newEvent("e6", event.JobCompleted, key("orders", "hourly", "2026-03-14T05"), at(2*time.Minute)),
			newEvent("e7", event.WatchdogDegraded, global, at(5*time.Minute)),
		},
	}
	load := func(t *testing.T) (store.Store, []event.Event) {
		if store.EventShard("orders") != store.EventShard("billing") || store.EventShard("orders") == store.EventShard("") {
			t.Fatal("the fixture wants orders and billing in one shard, and events about no pipeline in another")
		}
		s := o.New(t)
		for _, evs := range seed {
			commit(t, s, addEvents(evs...))
		}
		all := allEvents(t, s)
		mustMatch(t, "seeded events", eventIDs(all), []string{"e1", "e2", "e3", "e4", "e5", "e6", "e7"})
		return s, all
	}

	filters := []struct {
		name   string
		after  int // the cursor has passed the first n seeded events; 0: none
		params store.EventListParams
		want   []string
	}{
		{"All", 0, store.EventListParams{}, []string{"e1", "e2", "e3", "e4", "e5", "e6", "e7"}},
		{"ByPipeline", 0, store.EventListParams{PipelineID: "orders"}, []string{"e1", "e2", "e4", "e6"}},
		{"ByPipelineWithoutEvents", 0, store.EventListParams{PipelineID: otherShard("orders")}, []string{}},
		{"ByPeriodIsExact", 0, store.EventListParams{Period: "2026-03-14"}, []string{"e2", "e3", "e4"}},
		{"ByPipelineAndPeriod", 0, store.EventListParams{PipelineID: "orders", Period: "2026-03-14"}, []string{"e2", "e4"}},
		{"ByOneType", 0, store.EventListParams{Types: []event.Type{event.JobCompleted}}, []string{"e2", "e5", "e6"}},
		{"ByTypes", 0, store.EventListParams{Types: []event.Type{event.SLABreach, event.SLAWarning}}, []string{"e3", "e4"}},
		{"SinceIsInclusive", 0, store.EventListParams{Since: at(2 * time.Minute)}, []string{"e3", "e4", "e5", "e6", "e7"}},
		{"SinceInAnotherZone", 0, store.EventListParams{Since: at(4 * time.Minute).In(elsewhere)}, []string{"e5", "e7"}},
		{"After", 4, store.EventListParams{}, []string{"e5", "e6", "e7"}},
		{"AfterLastIsEmpty", 7, store.EventListParams{}, []string{}},
		{"Limit", 0, store.EventListParams{Limit: 2}, []string{"e1", "e2"}},
		{"LimitAppliesAfterFilters", 0, store.EventListParams{Types: []event.Type{event.JobCompleted}, Limit: 2}, []string{"e2", "e5"}},
		{"CursorFilterAndLimit", 2, store.EventListParams{PipelineID: "orders", Limit: 1}, []string{"e4"}},
		{"NoMatchIsEmpty", 0, store.EventListParams{PipelineID: "unknown"}, []string{}},
	}
	for _, tc := range filters {
		t.Run("Filter/"+tc.name, func(t *testing.T) {
			s, all := load(t)
			p := tc.params
			for _, e := range all[:tc.after] {
				p.After = p.After.Advance(e)
			}
			page := must(s.EventList(t.Context(), p)).get(t)
			mustMatch(t, "EventList", eventIDs(page.Events), tc.want)
			want := p.After
			for _, e := range page.Events {
				want = want.Advance(e)
			}
			if page.Next != want {
				t.Errorf("Next %s, want %s: the given cursor moved past the page's events", page.Next, want)
			}
		})
	}

	t.Run("FilteredEventsAreWhole", func(t *testing.T) {
		s, all := load(t)
		got := must(s.EventList(t.Context(), store.EventListParams{PipelineID: "billing"})).get(t).Events
		want := []event.Event{seed[1][0], seed[2][1]}
		want[0].Shard, want[0].Seq = all[2].Shard, all[2].Seq
		want[1].Shard, want[1].Seq = all[4].Shard, all[4].Seq
		mustMatch(t, "EventList", got, want)
	})

	t.Run("CursorPagingVisitsEveryEventOnce", func(t *testing.T) {
		// Commits on pipelines in several shards, their times running
		// backwards, so time order is not commit order.
		s := o.New(t)
		pipelines := []string{"orders", "billing", otherShard("orders"), ""}
		var ids []string
		for c := range 8 {
			var evs []event.Event
			for j := range c%4 + 2 { // commits of 2, 3, 4 and 5 events
				id := fmt.Sprintf("c%d-%d", c, j)
				ids = append(ids, id)
				evs = append(evs, newEvent(id, event.JobCompleted, key(pipelines[(c+j)%len(pipelines)], "daily", "2026-03-14"), at(-time.Duration(len(ids))*time.Second)))
			}
			commit(t, s, addEvents(evs...))
		}
		all := allEvents(t, s)
		for _, size := range []int{1, 3, 5, 14, 100} {
			t.Run(fmt.Sprint("PageSize", size), func(t *testing.T) {
				seen := pageAll(t, s, store.EventListParams{Limit: size})
				mustMatch(t, "events seen by paging", seen, eventIDs(all))
			})
		}
		mustMatch(t, "every event committed", len(all), len(ids))
	})

	t.Run("CursorPagingWithAFilter", func(t *testing.T) {
		s, _ := load(t)
		mustMatch(t, "events seen by paging", pageAll(t, s, store.EventListParams{Limit: 2, PipelineID: "orders"}), []string{"e1", "e2", "e4", "e6"})
		mustMatch(t, "events seen by paging", pageAll(t, s, store.EventListParams{Limit: 2, Types: []event.Type{event.JobCompleted, event.WatchdogDegraded}}),
			[]string{"e2", "e5", "e6", "e7"})
	})

	t.Run("CursorSeesLaterCommits", func(t *testing.T) {
		// A sink that has read everything and asks again gets exactly the
		// events committed since, an empty page keeping its cursor.
		s, _ := load(t)
		end := must(s.EventList(t.Context(), store.EventListParams{})).get(t).Next
		empty := must(s.EventList(t.Context(), store.EventListParams{After: end})).get(t)
		if len(empty.Events) != 0 || empty.Next != end {
			t.Fatalf("at the end: %v and cursor %s, want no event and cursor %s", eventIDs(empty.Events), empty.Next, end)
		}
		commit(t, s, addEvents(newEvent("late-1", event.JobFailed, ordersDay, at(0)), newEvent("late-2", event.RetryExhausted, ordersDay, at(0))))
		got := must(s.EventList(t.Context(), store.EventListParams{After: end})).get(t)
		mustMatch(t, "events after the cursor", eventIDs(got.Events), []string{"late-1", "late-2"})
	})

	t.Run("CursorText", func(t *testing.T) {
		// A page's cursor survives its text form: a reader that stored
		// it (an alert sink, an API client) carries on where it was.
		s, all := load(t)
		half := must(s.EventList(t.Context(), store.EventListParams{Limit: 3})).get(t)
		back, err := store.ParseCursor(half.Next.String())
		if err != nil || back != half.Next {
			t.Fatalf("ParseCursor(%q) = %v, %v; want %v", half.Next.String(), back, err, half.Next)
		}
		rest := must(s.EventList(t.Context(), store.EventListParams{After: back})).get(t)
		mustMatch(t, "events after the parsed cursor", eventIDs(rest.Events), eventIDs(all[3:]))

		var wide store.Cursor
		for i := range wide {
			wide[i] = int64(i) * 1e15
		}
		for _, c := range []store.Cursor{{}, {0, 0, 7}, {1 << 62}, wide} {
			if got, err := store.ParseCursor(c.String()); err != nil || got != c {
				t.Errorf("ParseCursor(%q) = %v, %v; want %v", c.String(), got, err, c)
			}
		}
		for _, text := range []string{"", "0"} {
			if got, err := store.ParseCursor(text); err != nil || got != (store.Cursor{}) {
				t.Errorf("ParseCursor(%q) = %v, %v; want the start", text, got, err)
			}
		}
	})

	t.Run("BadCursorText", func(t *testing.T) {
		tooMany := "v1"
		for range store.EventShards + 1 {
			tooMany += ".1"
		}
		for _, text := range []string{
			"abc", "v2.1", "v1.", "v1..1", "v1.-1", "v1.+1", "v1.01", "v1.1 ", "V1.1", "v1.zzzzzzzzzzzzzzzzz",
			"42", // a cursor of an older interlock: one global sequence number
			tooMany,
		} {
			if c, err := store.ParseCursor(text); !errors.Is(err, store.ErrBadCursor) {
				t.Errorf("ParseCursor(%q) = %v, %v; want store.ErrBadCursor", text, c, err)
			}
		}
	})
}

// allEvents reads the whole event log.
func allEvents(t *testing.T, s store.Store) []event.Event {
	t.Helper()
	return must(s.EventList(t.Context(), store.EventListParams{})).get(t).Events
}

// pageAll follows the cursor from p.After page by page (p.Limit events
// each) until an empty page, and returns the ids seen.
func pageAll(t *testing.T, s store.Store, p store.EventListParams) []string {
	t.Helper()
	seen := []string{}
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatalf("paging did not end after %d pages (cursor %s)", pages, p.After)
		}
		page := must(s.EventList(t.Context(), p)).get(t)
		if p.Limit > 0 && len(page.Events) > p.Limit {
			t.Fatalf("page of %d events, limit %d", len(page.Events), p.Limit)
		}
		if len(page.Events) == 0 {
			return seen
		}
		seen = append(seen, eventIDs(page.Events)...)
		p.After = page.Next
	}
}

// otherShard returns a pipeline id whose events are in another shard than
// id's.
func otherShard(id string) string {
	for i := 0; ; i++ {
		if other := fmt.Sprint("p", i); store.EventShard(other) != store.EventShard(id) {
			return other
		}
	}
}
