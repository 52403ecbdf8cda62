package dynamodb

import (
	"context"

	"github.com/interlockhq/interlock/internal/store"
)

// Leases (store/lease.go) live in the events table beside the delivery
// cursors, under LEASES / <name>, with no ttl: the port's version rule
// as a condition on the item's version.

const pkLeases = "LEASES"

func leaseItem(l store.Lease, version int64) *itemWriter {
	w := newItem(pkLeases, l.Name)
	w.str("name", l.Name)
	w.num(aVersion, version)
	w.str("holder", l.Holder)
	w.time("expires", l.Expires)
	return w
}

func decodeLease(it item) (store.Lease, error) {
	r := readItem(it)
	l := store.Lease{Name: r.str("name"), Version: r.num(aVersion), Holder: r.str("holder"), Expires: r.time("expires")}
	return l, r.err
}

// LeaseGet returns a lease by name.
func (s *Store) LeaseGet(ctx context.Context, name string) (store.Lease, error) {
	return getAs(ctx, s, s.t.Events, pkLeases, name, decodeLease)
}

// leaseActions are the writes of a Change's leases.
func (s *Store) leaseActions(c store.Change, add func(action, error)) {
	for _, w := range c.Leases {
		cond, v := versionCond(w.ExpectVersion)
		add(put(s.t.Events, "lease "+w.Lease.Name, leaseItem(w.Lease, w.ExpectVersion+1), cond, v))
	}
}
