package sqlite

import (
	"context"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Leases (store/lease.go, migration 0010).

var leasesTable = newVersioned("leases", []string{"name"}, []string{"holder", "expires"})

func scanLease(r sqlstore.Scanner) (store.Lease, error) {
	var l store.Lease
	err := r.Scan(&l.Name, &l.Version, &l.Holder, sqlstore.TimeCol{T: &l.Expires})
	return l, err
}

// LeaseGet returns a lease by name.
func (s *Store) LeaseGet(ctx context.Context, name string) (store.Lease, error) {
	return get(ctx, s.read, scanLease, "lease "+name,
		`SELECT name, version, holder, expires FROM leases WHERE name = ?`, name)
}

// leaseOps are the writes of a Change's leases.
func leaseOps(e *sqlstore.Encoder, c store.Change, add func(op, error)) {
	for _, w := range c.Leases {
		l := w.Lease
		add(leasesTable.put("lease "+l.Name, []any{l.Name}, w.ExpectVersion, []any{l.Holder, e.Time("lease expires", l.Expires)}))
	}
}
