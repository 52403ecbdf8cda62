// Package lease decides who holds a duty when several processes share a
// store (serve replicas on one PostgreSQL): the watchdog's passes, each
// alert sink's deliveries. A lease is a record with a holder and an
// expiry (store.Lease); Take is the decision, a pure function of the
// record and now; Acquire reads the record, decides, and commits the
// decision under the record's version, so that of two processes taking a
// free lease at once exactly one succeeds.
//
// A holder renews its lease before it expires; a holder that dies stops
// renewing, and another process takes the lease once it has expired. A
// process keeps its own lease across a restart when it comes back with the
// same identity (a replica's holder name is stable: its host and listen
// address), so a single `serve` restarted does not wait for its own lease.
package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/store"
)

// Take decides whether holder may hold the lease cur (found false: there
// is no record yet) at now for ttl: it may when the lease is free — no
// record, expired at or before now — or already its own. The write
// renews or takes it, under the record's version.
func Take(name string, cur store.Lease, found bool, holder string, now time.Time, ttl time.Duration) (store.LeaseWrite, bool) {
	if found && cur.Holder != holder && cur.Expires.After(now) {
		return store.LeaseWrite{}, false
	}
	var expect int64
	if found {
		expect = cur.Version
	}
	return store.LeaseWrite{Lease: store.Lease{Name: name, Holder: holder, Expires: now.Add(ttl), Version: expect + 1}, ExpectVersion: expect}, true
}

// Renew is the write that renews a lease the caller holds (as last
// written, l.Version the stored version), to be committed with the work
// done under it: the commit fails with store.ErrConflict once another
// process has taken the lease.
func Renew(l store.Lease, now time.Time, ttl time.Duration) store.LeaseWrite {
	return store.LeaseWrite{Lease: store.Lease{Name: l.Name, Holder: l.Holder, Expires: now.Add(ttl), Version: l.Version + 1}, ExpectVersion: l.Version}
}

// Held reports whether a lease the caller wrote is still good at now for
// at least margin more.
func Held(l store.Lease, now time.Time, margin time.Duration) bool {
	return l.Holder != "" && l.Expires.After(now.Add(margin))
}

// Acquire takes or renews the lease name for holder: the lease as written
// and true, or false when another process holds it (or took it in the same
// instant). Only store failures are errors.
func Acquire(ctx context.Context, st store.Store, name, holder string, now time.Time, ttl time.Duration) (store.Lease, bool, error) {
	cur, err := st.LeaseGet(ctx, name)
	found := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.Lease{}, false, fmt.Errorf("lease %s: %w", name, err)
	}
	w, ok := Take(name, cur, found, holder, now, ttl)
	if !ok {
		return cur, false, nil
	}
	switch err := st.Commit(ctx, store.Change{Leases: []store.LeaseWrite{w}}); {
	case errors.Is(err, store.ErrConflict):
		return store.Lease{}, false, nil // another process wrote it first
	case err != nil:
		return store.Lease{}, false, fmt.Errorf("lease %s: %w", name, err)
	}
	return w.Lease, true, nil
}
