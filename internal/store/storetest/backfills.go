package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// testBackfills: a backfill is a versioned record like a lease — created
// only when absent, replaced only at the version read, so of two
// processes moving one backfill at once exactly one wins — read by key or
// by pipeline in request order, with its per-period progress whole.
func testBackfills(t *testing.T, o Options) {
	bf := func(pipeline, id string, requested time.Time) store.Backfill {
		return store.Backfill{PipelineID: pipeline, ID: id, From: "2026-03-01", To: "2026-03-03", Only: backfill.OnlyFailed, MaxActive: 2, Reverse: true,
			RequestedAt: requested, RequestedBy: "operator:ops", State: backfill.Running, EndedAt: at(time.Hour).In(elsewhere),
			Periods: []backfill.Period{
				{Period: "2026-03-03", State: backfill.PeriodActive, Reason: "rerun: its run failed"},
				{Period: "2026-03-02", State: backfill.PeriodSkipped, Reason: "its run succeeded"},
				{Period: "2026-03-01", State: backfill.PeriodPending},
			}}
	}
	stored := func(b store.Backfill, version int64) store.Backfill {
		b.Version = version
		b.RequestedAt, b.EndedAt = b.RequestedAt.UTC(), b.EndedAt.UTC()
		return b
	}

	t.Run("RoundTripsAndVersions", func(t *testing.T) {
		s := o.New(t)
		b := bf("orders", "1", at(123).In(elsewhere))
		b.Version = 1
		requireAllSet(t, "backfill", b)
		b.Version = 0
		_, err := s.BackfillGet(t.Context(), "orders", "1")
		notFound(t, "BackfillGet before any write", err)
		commit(t, s, store.Change{Backfills: []store.BackfillWrite{{Backfill: b}}})
		mustMatch(t, "BackfillGet", must(s.BackfillGet(t.Context(), "orders", "1")).get(t), stored(b, 1))
		b.State, b.EndedAt = backfill.Completed, time.Time{}
		b.Periods[0].State = backfill.PeriodSucceeded
		commit(t, s, store.Change{Backfills: []store.BackfillWrite{{Backfill: b, ExpectVersion: 1}}})
		mustMatch(t, "BackfillGet after a write", must(s.BackfillGet(t.Context(), "orders", "1")).get(t), stored(b, 2))
		_, err = s.BackfillGet(t.Context(), "orders", "2")
		notFound(t, "BackfillGet of another id", err)
		_, err = s.BackfillGet(t.Context(), "order", "1")
		notFound(t, "BackfillGet of another pipeline", err)
	})

	t.Run("StaleVersionIsAConflict", func(t *testing.T) {
		s := o.New(t)
		b := bf("orders", "1", at(0))
		commit(t, s, store.Change{Backfills: []store.BackfillWrite{{Backfill: b}}})
		conflict(t, s, store.Change{Backfills: []store.BackfillWrite{{Backfill: b}}})
		b.State = backfill.Cancelled
		commit(t, s, store.Change{Backfills: []store.BackfillWrite{{Backfill: b, ExpectVersion: 1}}})
		conflict(t, s, store.Change{Backfills: []store.BackfillWrite{{Backfill: bf("orders", "1", at(0)), ExpectVersion: 1}},
			Markers: []store.MarkerWrite{{Marker: store.Marker{Key: run.Key{PipelineID: "orders", ScheduleID: "cron", Period: "2026-03-01"}, Kind: run.MarkerBackfill, At: at(0)}}}})
		mustMatch(t, "BackfillGet", must(s.BackfillGet(t.Context(), "orders", "1")).get(t).State, backfill.Cancelled)
		if _, err := s.MarkerGet(t.Context(), run.Key{PipelineID: "orders", ScheduleID: "cron", Period: "2026-03-01"}, run.MarkerBackfill); err == nil {
			t.Fatal("a conflicting backfill write let its marker through")
		}
	})

	t.Run("OneWinnerAmongRacingWriters", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Backfills: []store.BackfillWrite{{Backfill: bf("orders", "1", at(0))}}})
		errs := race(t, 8, func(i int) error {
			b := bf("orders", "1", at(0))
			b.RequestedBy = string(rune('a' + i))
			return s.Commit(t.Context(), store.Change{Backfills: []store.BackfillWrite{{Backfill: b, ExpectVersion: 1}}})
		})
		w := oneWinner(t, errs)
		mustMatch(t, "BackfillGet", must(s.BackfillGet(t.Context(), "orders", "1")).get(t).RequestedBy, string(rune('a'+w)))
	})

	t.Run("ListByPipelineInRequestOrder", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Backfills: []store.BackfillWrite{
			{Backfill: bf("orders", "2", at(2*time.Minute))},
			{Backfill: bf("orders", "1", at(time.Minute))},
			{Backfill: bf("orders", "3", at(2*time.Minute))},
			{Backfill: bf("orders-v2", "1", at(0))},
		}})
		var ids []string
		for _, b := range must(s.BackfillList(t.Context(), "orders")).get(t) {
			ids = append(ids, b.PipelineID+"/"+b.ID)
		}
		mustMatch(t, "BackfillList", ids, []string{"orders/1", "orders/2", "orders/3"})
		mustMatch(t, "BackfillList of none", len(must(s.BackfillList(t.Context(), "invoices")).get(t)), 0)
	})

	t.Run("TouchedOnceperChange", func(t *testing.T) {
		s := o.New(t)
		b := bf("orders", "1", at(0))
		err := s.Commit(t.Context(), store.Change{Backfills: []store.BackfillWrite{{Backfill: b}, {Backfill: b}}})
		if err == nil {
			t.Fatal("a change writing one backfill twice was committed")
		}
	})
}
