package storetest

import (
	"testing"

	"github.com/interlockhq/interlock/internal/store"
)

func testLedger(t *testing.T, o Options) {
	other := key("orders", "daily", "2026-03-13")

	t.Run("RoundTripsEveryField", func(t *testing.T) {
		s := o.New(t)
		want := ledgerEntry(ordersDay, 1)
		requireAllSet(t, "ledgerEntry", want)
		commit(t, s, store.Change{Ledger: []store.LedgerEntry{want}})
		mustMatch(t, "LedgerList", must(s.LedgerList(t.Context(), ordersDay)).get(t), []store.LedgerEntry{want})
	})

	t.Run("EmptyPeriodIsEmptyNotAnError", func(t *testing.T) {
		s := o.New(t)
		if got := must(s.LedgerList(t.Context(), ordersDay)).get(t); len(got) != 0 {
			t.Fatalf("got %d entries, want none", len(got))
		}
	})

	t.Run("ListIsOldestFirstAcrossCommits", func(t *testing.T) {
		s := o.New(t)
		// Appended in two commits, the second out of order within itself.
		commit(t, s, store.Change{Ledger: []store.LedgerEntry{ledgerEntry(ordersDay, 1)}})
		commit(t, s, store.Change{Ledger: []store.LedgerEntry{ledgerEntry(ordersDay, 3), ledgerEntry(ordersDay, 2)}})
		mustMatch(t, "LedgerList", must(s.LedgerList(t.Context(), ordersDay)).get(t),
			[]store.LedgerEntry{ledgerEntry(ordersDay, 1), ledgerEntry(ordersDay, 2), ledgerEntry(ordersDay, 3)})
	})

	t.Run("DuplicateSeqConflictsAndKeepsFirst", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Ledger: []store.LedgerEntry{ledgerEntry(ordersDay, 1), ledgerEntry(ordersDay, 2)}})
		dup := ledgerEntry(ordersDay, 2)
		dup.Reason = "a second rerun 2"
		conflict(t, s, store.Change{Ledger: []store.LedgerEntry{ledgerEntry(ordersDay, 3), dup}})
		mustMatch(t, "LedgerList", must(s.LedgerList(t.Context(), ordersDay)).get(t),
			[]store.LedgerEntry{ledgerEntry(ordersDay, 1), ledgerEntry(ordersDay, 2)})
	})

	t.Run("PeriodsAreSeparate", func(t *testing.T) {
		// Each period has its own budget: the same Seq in another period
		// (or schedule, or pipeline) is not a duplicate.
		s := o.New(t)
		hourly := key("orders", "hourly", ordersDay.Period)
		billing := key("billing", "daily", ordersDay.Period)
		commit(t, s, store.Change{Ledger: []store.LedgerEntry{
			ledgerEntry(ordersDay, 1), ledgerEntry(other, 1), ledgerEntry(hourly, 1), ledgerEntry(billing, 1), ledgerEntry(ordersDay, 2),
		}})
		mustMatch(t, "LedgerList(k)", must(s.LedgerList(t.Context(), ordersDay)).get(t),
			[]store.LedgerEntry{ledgerEntry(ordersDay, 1), ledgerEntry(ordersDay, 2)})
		mustMatch(t, "LedgerList(other)", must(s.LedgerList(t.Context(), other)).get(t),
			[]store.LedgerEntry{ledgerEntry(other, 1)})
		mustMatch(t, "LedgerList(hourly)", must(s.LedgerList(t.Context(), hourly)).get(t),
			[]store.LedgerEntry{ledgerEntry(hourly, 1)})
	})
}
