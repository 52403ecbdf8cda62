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
	ordersDay, billingDay := key("orders", "daily", "2026-03-14"), key("billing", "daily", "2026-03-14")
	// Written in an order unlike the expected one; one timer is already
	// past due, two share a due time, and one has a key that names
	// "orders" but concerns billing (PipelineID filters Run, not the key).
	seed := []store.Timer{
		timer("sla-breach:orders", "sla-breach", ordersDay, at(2*time.Hour)),
		timer("cron:orders", "cron", run.Key{PipelineID: "orders"}, at(time.Minute)),
		timer("orders:moved", "evaluate", billingDay, at(3*time.Hour)),
		timer("sla-warning:orders", "sla-warning", ordersDay, at(time.Hour).In(elsewhere)),
		timer("sla-breach:billing", "sla-breach", billingDay, at(-time.Hour)),
		timer("cron:billing", "cron", run.Key{PipelineID: "billing"}, at(time.Minute)),
	}
	load := func(t *testing.T) store.Store {
		s := o.New(t)
		var c store.Change
		for _, tm := range seed {
			c.Timers = append(c.Timers, store.TimerWrite{Timer: tm})
		}
		commit(t, s, c)
		return s
	}
	keys := func(ts []store.Timer) []string {
		out := []string{}
		for _, tm := range ts {
			out = append(out, tm.Key)
		}
		return out
	}

	tests := []struct {
		name   string
		params store.TimerListParams
		want   []string
	}{
		{"AllEarliestFirstThenByKey", store.TimerListParams{}, []string{
			"sla-breach:billing", "cron:billing", "cron:orders", "sla-warning:orders", "sla-breach:orders", "orders:moved",
		}},
		{"ByKind", store.TimerListParams{Kind: "sla-breach"}, []string{"sla-breach:billing", "sla-breach:orders"}},
		{"ByPipelineReadsTheRunNotTheKey", store.TimerListParams{PipelineID: "orders"}, []string{
			"cron:orders", "sla-warning:orders", "sla-breach:orders",
		}},
		{"ByOtherPipeline", store.TimerListParams{PipelineID: "billing"}, []string{
			"sla-breach:billing", "cron:billing", "orders:moved",
		}},
		{"ByKindAndPipeline", store.TimerListParams{Kind: "cron", PipelineID: "orders"}, []string{"cron:orders"}},
		{"KindOfAnotherPipelineIsEmpty", store.TimerListParams{Kind: "sla-warning", PipelineID: "billing"}, []string{}},
		{"UnknownKindIsEmpty", store.TimerListParams{Kind: "unknown"}, []string{}},
		{"UnknownPipelineIsEmpty", store.TimerListParams{PipelineID: "unknown"}, []string{}},
		{"LimitKeepsTheEarliest", store.TimerListParams{Limit: 2}, []string{"sla-breach:billing", "cron:billing"}},
		{"LimitAfterFilter", store.TimerListParams{PipelineID: "orders", Limit: 2}, []string{"cron:orders", "sla-warning:orders"}},
		{"LimitLargerThanMatches", store.TimerListParams{Kind: "cron", Limit: 10}, []string{"cron:billing", "cron:orders"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := load(t)
			mustMatch(t, "TimerList", keys(must(s.TimerList(t.Context(), tc.params)).get(t)), tc.want)
		})
	}

	t.Run("EmptyStoreIsEmpty", func(t *testing.T) {
		s := o.New(t)
		if got := must(s.TimerList(t.Context(), store.TimerListParams{})).get(t); len(got) != 0 {
			t.Fatalf("TimerList on an empty store: %d timers, want none", len(got))
		}
	})

	t.Run("ReturnsWholeRecords", func(t *testing.T) {
		s := load(t)
		got := must(s.TimerList(t.Context(), store.TimerListParams{PipelineID: "orders"})).get(t)
		mustMatch(t, "TimerList", got, []store.Timer{seed[1], seed[3], seed[0]})
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
		mustMatch(t, "TimerList", keys(must(s.TimerList(t.Context(), store.TimerListParams{PipelineID: "orders"})).get(t)),
			[]string{"sla-breach:orders", "sla-warning:orders"})
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
			{store.TimerListParams{PipelineID: "billing"}, 3},
			{store.TimerListParams{Limit: 1}, 1},
			{store.TimerListParams{Kind: "sla-breach", PipelineID: "orders"}, 1},
			{store.TimerListParams{}, 6},
		} {
			if got := len(must(s.TimerList(t.Context(), tc.params)).get(t)); got != tc.want {
				t.Errorf("TimerList(%+v): %d timers, want %d", tc.params, got, tc.want)
			}
		}
	})
}
