package postgres

import (
	"context"

	"github.com/interlockhq/interlock/internal/store"
)

// Leases (store/lease.go, migration 0002).

var leasesTable = newVersioned("leases", false, []string{"name"}, []string{"holder", "expires"})

func scanLease(r scanner) (store.Lease, error) {
	var l store.Lease
	err := r.Scan(&l.Name, &l.Version, &l.Holder, timeCol{&l.Expires})
	return l, err
}

// LeaseGet returns a lease by name.
func (s *Store) LeaseGet(ctx context.Context, name string) (store.Lease, error) {
	return get(ctx, s, scanLease, "lease "+name,
		`SELECT name, version, holder, expires FROM leases WHERE name = $1`, name)
}

// leaseOps are the writes of a Change's leases.
func leaseOps(e *encoder, c store.Change, addAll func([]op, error)) {
	for _, w := range c.Leases {
		l := w.Lease
		addAll(leasesTable.put("lease "+l.Name, []any{l.Name}, w.ExpectVersion, []any{l.Holder, e.time("lease expires", l.Expires)}))
	}
}
