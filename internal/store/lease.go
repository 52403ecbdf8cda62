package store

import "time"

// Lease is a duty that one process at a time holds — the watchdog's
// passes, an alert sink's deliveries — when several processes share a
// store (serve replicas on one PostgreSQL): whoever holds an unexpired
// lease does the work, the others wait for it to expire. Whether a process
// may take or keep a lease is decided by internal/lease; the store only
// keeps the record, with the port's version rule (LeaseWrite), so that of
// two processes taking the same lease at once exactly one succeeds.
//
// A commit that carries the holder's renewal of its lease (the alert
// worker's cursor commits do) fails with ErrConflict once another process
// has taken it: the work done under a lost lease is not recorded.
type Lease struct {
	Name    string
	Holder  string    // the process holding it
	Expires time.Time // it is free from this instant on
	Version int64     // the store's: moved by every write
}

// LeaseWrite puts a lease with the same version rule as PipelineWrite:
// ExpectVersion 0 means the lease must not exist; otherwise the stored
// Version must equal it. Leases never expire from the store.
type LeaseWrite struct {
	Lease         Lease
	ExpectVersion int64
}
