package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// testTimerList checks TimerList: every timer matching the filters, due
// or not, earliest first and ties by key.
func testTimerList(t *testing.T, o Options) {
	timer := func(k, kind string, r run.Key, due time.Time) store.Timer {
		return store.Timer{Key: k, Kind: kind, Run: r, DueAt: due, Detail: detail("timer", k)}
	}
	billingDay := key("billing", "daily", "2026-03-14")
	// Written in an order unlike the expected one; one timer is already
	// past due, two share a due time, and one has a key that names
	// "orders" but concerns billing.
	seed := []store.Timer{
		timer("sla-breach:orders", "sla-breach", ordersDay, at(2*time.Hour)),
		timer("cron:orders", "cron", run.Key{PipelineID: "orders"}, at(time.Minute)),
		timer("orders:moved", "evaluate", billingDay, at(3*time.Hour)),
		timer("sla-warning:orders", "sla-warning", ordersDay, at(time.Hour).In(elsewhere)),
		timer("sla-breach:billing", "sla-breach", billingDay, at(-time.Hour)),
		timer("cron:billing", "cron", run.Key{PipelineID: "billing"}, at(time.Minute)),
	}
	load := func(t *testing.T) store.Store { return seeded(t, o, timerWrites(seed)) }

	checkLists(t, load, "TimerList", store.Store.TimerList, timerKey, []listCase[store.TimerListParams]{
		{"AllEarliestFirstThenByKey", store.TimerListParams{}, []string{
			"sla-breach:billing", "cron:billing", "cron:orders", "sla-warning:orders", "sla-breach:orders", "orders:moved",
		}},
		{"ByKind", store.TimerListParams{Kind: "sla-breach"}, []string{"sla-breach:billing", "sla-breach:orders"}},
		{"UnknownKindIsEmpty", store.TimerListParams{Kind: "unknown"}, []string{}},
	})

	t.Run("EmptyStoreIsEmpty", func(t *testing.T) {
		s := o.New(t)
		if got := must(s.TimerList(t.Context(), store.TimerListParams{})).get(t); len(got) != 0 {
			t.Fatalf("TimerList on an empty store: %d timers, want none", len(got))
		}
	})

	t.Run("ReturnsWholeRecords", func(t *testing.T) {
		s := load(t)
		got := must(s.TimerList(t.Context(), store.TimerListParams{Kind: "sla-warning"})).get(t)
		mustMatch(t, "TimerList", got, []store.Timer{seed[3]})
	})

	t.Run("FollowsPutsAndDeletes", func(t *testing.T) {
		// A moved timer takes its new place; a deleted one is gone.
		s := load(t)
		moved := seed[0]
		moved.DueAt = at(-2 * time.Hour)
		commit(t, s, store.Change{
			Timers:       []store.TimerWrite{{Timer: moved}},
			TimerDeletes: []store.TimerDelete{{Key: "cron:orders"}},
		})
		mustMatch(t, "TimerList", idsOf(must(s.TimerList(t.Context(), store.TimerListParams{})).get(t), timerKey),
			[]string{"sla-breach:orders", "sla-breach:billing", "cron:billing", "sla-warning:orders", "orders:moved"})
	})

	t.Run("IsDrivenOnlyByTheParameters", func(t *testing.T) {
		// No notion of now: timers long due and far off are listed alike,
		// and reading the due timers first changes nothing. One store
		// asked different questions, in any order, answers each on its own.
		s := load(t)
		if n := len(must(s.TimerListDue(t.Context(), at(0), 0)).get(t)); n != 1 {
			t.Fatalf("TimerListDue(at(0)): %d timers, want 1", n)
		}
		for _, tc := range []struct {
			params store.TimerListParams
			want   int
		}{
			{store.TimerListParams{Kind: "cron"}, 2},
			{store.TimerListParams{}, 6},
			{store.TimerListParams{}, 6},
		} {
			if got := len(must(s.TimerList(t.Context(), tc.params)).get(t)); got != tc.want {
				t.Errorf("TimerList(%+v): %d timers, want %d", tc.params, got, tc.want)
			}
		}
	})
}
