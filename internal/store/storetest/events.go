package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

func testEvents(t *testing.T, o Options) {
	k := key("orders", "daily", "2026-03-14")

	t.Run("RoundTripsEveryField", func(t *testing.T) {
		s := o.New(t)
		want := newEvent("ev-1", event.PostRunDrift, k, at(0).In(elsewhere))
		want.Seq = 12345 // the store assigns Seq; it must ignore this one
		requireAllSet(t, "newEvent", want)
		commit(t, s, addEvents(want))
		got := must(s.EventList(t.Context(), store.EventListParams{})).get(t)
		if len(got) != 1 {
			t.Fatalf("%d events, want 1", len(got))
		}
		if got[0].Seq <= 0 {
			t.Errorf("Seq %d, want a positive sequence number", got[0].Seq)
		}
		want.Seq = got[0].Seq
		mustMatch(t, "EventList", got[0], want)
	})

	t.Run("SeqFollowsCommitOrderNotCallerSeq", func(t *testing.T) {
		s := o.New(t)
		a1, a2 := newEvent("a1", event.JobTriggered, k, at(0)), newEvent("a2", event.JobCompleted, k, at(0))
		a1.Seq, a2.Seq = 900, 800
		b1 := newEvent("b1", event.SLAMet, k, at(-time.Hour)) // an earlier Time does not reorder the log
		b1.Seq = 1
		c1, c2, c3 := newEvent("c1", event.PostRunPassed, k, at(0)), newEvent("c2", event.PostRunDrift, k, at(0)), newEvent("c3", event.RerunAccepted, k, at(0))
		commit(t, s, addEvents(a1, a2))
		commit(t, s, addEvents(b1))
		commit(t, s, addEvents(c1, c2, c3))
		got := must(s.EventList(t.Context(), store.EventListParams{})).get(t)
		mustMatch(t, "event order", eventIDs(got), []string{"a1", "a2", "b1", "c1", "c2", "c3"})
		for i := 1; i < len(got); i++ {
			if got[i].Seq <= got[i-1].Seq {
				t.Errorf("%s has seq %d after %s's %d: not strictly increasing", got[i].ID, got[i].Seq, got[i-1].ID, got[i-1].Seq)
			}
		}
	})

	t.Run("FailedCommitEventsNeverAppear", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Runs: []store.RunWrite{{Run: newRun(k)}}, Events: []event.Event{newEvent("created", event.ValidationPassed, k, at(0))}})
		conflict(t, s, store.Change{Runs: []store.RunWrite{{Run: newRun(k)}}, Events: []event.Event{newEvent("lost", event.ValidationPassed, k, at(0))}})
		commit(t, s, addEvents(newEvent("after", event.JobTriggered, k, at(0))))
		got := must(s.EventList(t.Context(), store.EventListParams{})).get(t)
		mustMatch(t, "events", eventIDs(got), []string{"created", "after"})
		// A reader that saw "created" and follows the cursor gets "after"
		// next: the failed commit left no hole that would hide it.
		next := must(s.EventList(t.Context(), store.EventListParams{AfterSeq: got[0].Seq, Limit: 1})).get(t)
		mustMatch(t, "events after the first", eventIDs(next), []string{"after"})
	})

	// The filter fixture, committed in three commits. e6's Time is earlier
	// than e4's and e5's: time filters go by Time, not by log order.
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
		s := o.New(t)
		for _, evs := range seed {
			commit(t, s, addEvents(evs...))
		}
		all := must(s.EventList(t.Context(), store.EventListParams{})).get(t)
		mustMatch(t, "seeded events", eventIDs(all), []string{"e1", "e2", "e3", "e4", "e5", "e6", "e7"})
		return s, all
	}

	filters := []struct {
		name   string
		after  int // the cursor is the Seq of the n-th seeded event (1-based); 0: none
		params store.EventListParams
		want   []string
	}{
		{"All", 0, store.EventListParams{}, []string{"e1", "e2", "e3", "e4", "e5", "e6", "e7"}},
		{"ByPipeline", 0, store.EventListParams{PipelineID: "orders"}, []string{"e1", "e2", "e4", "e6"}},
		{"ByPeriodIsExact", 0, store.EventListParams{Period: "2026-03-14"}, []string{"e2", "e3", "e4"}},
		{"ByPipelineAndPeriod", 0, store.EventListParams{PipelineID: "orders", Period: "2026-03-14"}, []string{"e2", "e4"}},
		{"ByOneType", 0, store.EventListParams{Types: []event.Type{event.JobCompleted}}, []string{"e2", "e5", "e6"}},
		{"ByTypes", 0, store.EventListParams{Types: []event.Type{event.SLABreach, event.SLAWarning}}, []string{"e3", "e4"}},
		{"SinceIsInclusive", 0, store.EventListParams{Since: at(2 * time.Minute)}, []string{"e3", "e4", "e5", "e6", "e7"}},
		{"UntilIsExclusive", 0, store.EventListParams{Until: at(2 * time.Minute)}, []string{"e1", "e2"}},
		{"SinceAndUntil", 0, store.EventListParams{Since: at(time.Minute), Until: at(3 * time.Minute)}, []string{"e2", "e3", "e6"}},
		{"SinceInAnotherZone", 0, store.EventListParams{Since: at(4 * time.Minute).In(elsewhere)}, []string{"e5", "e7"}},
		{"AfterSeq", 4, store.EventListParams{}, []string{"e5", "e6", "e7"}},
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
			if tc.after > 0 {
				p.AfterSeq = all[tc.after-1].Seq
			}
			mustMatch(t, "EventList", eventIDs(must(s.EventList(t.Context(), p)).get(t)), tc.want)
		})
	}

	t.Run("FilteredEventsAreWhole", func(t *testing.T) {
		s, all := load(t)
		got := must(s.EventList(t.Context(), store.EventListParams{PipelineID: "billing"})).get(t)
		want := []event.Event{seed[1][0], seed[2][1]}
		want[0].Seq, want[1].Seq = all[2].Seq, all[4].Seq
		mustMatch(t, "EventList", got, want)
	})

	t.Run("CursorPagingVisitsEveryEventOnce", func(t *testing.T) {
		s := o.New(t)
		var ids []string
		for c := range 4 {
			var evs []event.Event
			for j := range c + 2 { // commits of 2, 3, 4 and 5 events
				id := fmt.Sprintf("c%d-%d", c, j)
				ids = append(ids, id)
				evs = append(evs, newEvent(id, event.JobCompleted, k, at(time.Duration(len(ids))*time.Second)))
			}
			commit(t, s, addEvents(evs...))
		}
		for _, size := range []int{1, 3, 5, 14, 100} {
			t.Run(fmt.Sprint("PageSize", size), func(t *testing.T) {
				var seen []string
				var cursor int64
				for pages := 0; ; pages++ {
					if pages > len(ids)+1 {
						t.Fatalf("paging did not end after %d pages (cursor %d)", pages, cursor)
					}
					page := must(s.EventList(t.Context(), store.EventListParams{AfterSeq: cursor, Limit: size})).get(t)
					if len(page) > size {
						t.Fatalf("page of %d events, limit %d", len(page), size)
					}
					if len(page) == 0 {
						break
					}
					seen = append(seen, eventIDs(page)...)
					cursor = page[len(page)-1].Seq
				}
				mustMatch(t, "events seen by paging", seen, ids)
			})
		}
	})

	t.Run("CursorPagingWithAFilter", func(t *testing.T) {
		s, _ := load(t)
		var seen []string
		var cursor int64
		for range 10 {
			page := must(s.EventList(t.Context(), store.EventListParams{AfterSeq: cursor, Limit: 2, PipelineID: "orders"})).get(t)
			if len(page) == 0 {
				break
			}
			seen = append(seen, eventIDs(page)...)
			cursor = page[len(page)-1].Seq
		}
		mustMatch(t, "events seen by paging", seen, []string{"e1", "e2", "e4", "e6"})
	})

	t.Run("CursorSeesLaterCommits", func(t *testing.T) {
		// A sink that has read everything and asks again gets exactly the
		// events committed since.
		s, all := load(t)
		cursor := all[len(all)-1].Seq
		commit(t, s, addEvents(newEvent("late-1", event.JobFailed, k, at(0)), newEvent("late-2", event.RetryExhausted, k, at(0))))
		got := must(s.EventList(t.Context(), store.EventListParams{AfterSeq: cursor})).get(t)
		mustMatch(t, "events after the cursor", eventIDs(got), []string{"late-1", "late-2"})
	})
}
