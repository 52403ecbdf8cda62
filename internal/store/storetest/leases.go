package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/store"
)

// testLeases: a lease is a versioned record like a pipeline row — created
// only when absent, replaced only at the version read — so that of
// processes taking it at once exactly one wins, and a commit that renews a
// lease taken meanwhile writes nothing of its other records.
func testLeases(t *testing.T, o Options) {
	lease := func(holder string, expires time.Time, version int64) store.Lease {
		return store.Lease{Name: "watchdog", Holder: holder, Expires: expires, Version: version}
	}

	t.Run("RoundTripsAndVersions", func(t *testing.T) {
		s := o.New(t)
		_, err := s.LeaseGet(t.Context(), "watchdog")
		notFound(t, "LeaseGet before any write", err)
		commit(t, s, store.Change{Leases: []store.LeaseWrite{{Lease: lease("replica-a:7070", at(30*time.Second+123), 0)}}})
		mustMatch(t, "LeaseGet", must(s.LeaseGet(t.Context(), "watchdog")).get(t), lease("replica-a:7070", at(30*time.Second+123), 1))
		commit(t, s, store.Change{Leases: []store.LeaseWrite{{Lease: lease("replica-b:7070", at(time.Minute), 0), ExpectVersion: 1}}})
		mustMatch(t, "LeaseGet after a take", must(s.LeaseGet(t.Context(), "watchdog")).get(t), lease("replica-b:7070", at(time.Minute), 2))
		_, err = s.LeaseGet(t.Context(), "alert-sink/slack")
		notFound(t, "LeaseGet of another lease", err)
	})

	t.Run("StaleVersionIsAConflict", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Leases: []store.LeaseWrite{{Lease: lease("a", at(time.Minute), 0)}}})
		conflict(t, s, store.Change{Leases: []store.LeaseWrite{{Lease: lease("b", at(time.Minute), 0)}}})
		commit(t, s, store.Change{Leases: []store.LeaseWrite{{Lease: lease("b", at(2*time.Minute), 0), ExpectVersion: 1}}})
		conflict(t, s, store.Change{Leases: []store.LeaseWrite{{Lease: lease("a", at(3*time.Minute), 0), ExpectVersion: 1}}})
		mustMatch(t, "LeaseGet", must(s.LeaseGet(t.Context(), "watchdog")).get(t), lease("b", at(2*time.Minute), 2))
	})

	t.Run("OneWinnerAmongRacingTakers", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Leases: []store.LeaseWrite{{Lease: lease("dead", at(0), 0)}}})
		errs := race(t, 8, func(i int) error {
			return s.Commit(t.Context(), store.Change{Leases: []store.LeaseWrite{{Lease: lease(string(rune('a'+i)), at(time.Minute), 0), ExpectVersion: 1}}})
		})
		w := oneWinner(t, errs)
		mustMatch(t, "LeaseGet", must(s.LeaseGet(t.Context(), "watchdog")).get(t), lease(string(rune('a'+w)), at(time.Minute), 2))
	})

	t.Run("LostLeaseWritesNothingWithIt", func(t *testing.T) {
		// The alert worker commits its cursor with its lease's renewal:
		// once another process took the lease, the cursor must not move.
		s := o.New(t)
		first := store.DeliveryCursor{Sink: "slack", Cursor: store.Cursor{0, 1}, At: at(0)}
		commit(t, s, store.Change{Leases: []store.LeaseWrite{{Lease: lease("a", at(time.Minute), 0)}},
			DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: first, IfAbsent: true}}})
		commit(t, s, store.Change{Leases: []store.LeaseWrite{{Lease: lease("b", at(3*time.Minute), 0), ExpectVersion: 1}}})
		conflict(t, s, store.Change{Leases: []store.LeaseWrite{{Lease: lease("a", at(2*time.Minute), 0), ExpectVersion: 1}},
			DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: store.DeliveryCursor{Sink: "slack", Cursor: store.Cursor{0, 9}, At: at(time.Minute)}}}})
		mustMatch(t, "DeliveryCursorGet", must(s.DeliveryCursorGet(t.Context(), "slack")).get(t), first)
	})
}
