package alert

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/interlockhq/interlock/internal/lease"
	"github.com/interlockhq/interlock/internal/store"
)

// errLeaseLost stops a sweep whose sink's lease another process took: what
// it was doing is left for the new holder.
var errLeaseLost = errors.New("the sink's lease was taken by another process")

// leaseName is the lease of a sink's deliveries.
func leaseName(sink string) string { return "alert-sink/" + sink }

// randomHolder names a process that was given no name.
func randomHolder() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	host, _ := os.Hostname()
	return host + "/" + hex.EncodeToString(b)
}

// hold makes sure the worker holds its sink's lease, renewing it when less
// than half of it is left. continuous says the worker held it without a
// break since it last wrote it: otherwise another process may have moved
// the cursor meanwhile.
func (w *worker) hold(ctx context.Context) (held, continuous bool, err error) {
	ttl := w.d.o.LeaseTTL
	now := w.d.clk.Now()
	if lease.Held(w.lease, now, ttl/2) {
		return true, true, nil
	}
	l, ok, err := lease.Acquire(ctx, w.d.st, leaseName(w.name), w.d.o.Holder, now, ttl)
	if err != nil {
		return false, false, fmt.Errorf("alert: sink %s: %w", w.name, err)
	}
	if !ok {
		if w.lease.Holder != "" {
			w.d.log.Info("alert sink delivered by another process now", "sink", w.name, "holder", w.d.o.Holder)
		}
		w.lease = store.Lease{}
		return false, false, nil
	}
	continuous = w.lease.Holder != "" && w.lease.Version == l.Version-1
	w.lease = l
	return true, continuous, nil
}

// renewal is the lease write a cursor commit carries.
func (w *worker) renewal() []store.LeaseWrite {
	return []store.LeaseWrite{lease.Renew(w.lease, w.d.clk.Now(), w.d.o.LeaseTTL)}
}

// committed records the outcome of a commit that carried renewal r: the
// lease as renewed, or, on a conflict, no lease (the next sweep takes it
// again, and re-reads the cursor, if it is free).
func (w *worker) committed(r []store.LeaseWrite, err error) {
	switch {
	case err == nil:
		w.lease = r[0].Lease
	case errors.Is(err, store.ErrConflict):
		w.lease = store.Lease{}
	}
}
