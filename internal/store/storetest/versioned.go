package storetest

import (
	"testing"

	"github.com/interlockhq/interlock/internal/store"
)

// versionedKind adapts one record type that follows the port's version
// rule (pipelines, sensors, runs) so the rule is checked the same way for
// each: ExpectVersion 0 creates and fails if the record exists; otherwise
// the stored Version must equal ExpectVersion; the stored Version becomes
// ExpectVersion+1.
type versionedKind struct {
	// write returns a Change putting the record with a payload value
	// (some field the test can read back) and an ExpectVersion.
	write func(payload int64, expect int64) store.Change
	// read returns the stored record's Version and payload.
	read func(t *testing.T, s store.Store) (version, payload int64, err error)
}

func testVersionRule(t *testing.T, o Options, k versionedKind) {
	// stored fails the test unless the record is at version with payload.
	stored := func(t *testing.T, s store.Store, version, payload int64) {
		t.Helper()
		v, p, err := k.read(t, s)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if v != version || p != payload {
			t.Fatalf("stored version %d with payload %d, want version %d with payload %d", v, p, version, payload)
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T, s store.Store)
	}{
		{"GetMissingIsNotFound", func(t *testing.T, s store.Store) {
			_, _, err := k.read(t, s)
			notFound(t, "read before create", err)
		}},
		{"CreateStoresVersion1", func(t *testing.T, s store.Store) {
			commit(t, s, k.write(10, 0))
			stored(t, s, 1, 10)
		}},
		{"SecondCreateConflictsAndKeepsFirst", func(t *testing.T, s store.Store) {
			commit(t, s, k.write(10, 0))
			conflict(t, s, k.write(20, 0))
			stored(t, s, 1, 10)
		}},
		{"UpdateWithCurrentVersionBumpsIt", func(t *testing.T, s store.Store) {
			commit(t, s, k.write(10, 0))
			commit(t, s, k.write(11, 1))
			commit(t, s, k.write(12, 2))
			stored(t, s, 3, 12)
		}},
		{"StaleVersionConflictsAndKeepsStored", func(t *testing.T, s store.Store) {
			commit(t, s, k.write(10, 0))
			commit(t, s, k.write(11, 1))
			conflict(t, s, k.write(99, 1))
			stored(t, s, 2, 11)
		}},
		{"FutureVersionConflicts", func(t *testing.T, s store.Store) {
			commit(t, s, k.write(10, 0))
			conflict(t, s, k.write(99, 2))
			stored(t, s, 1, 10)
		}},
		{"UpdateOfMissingConflicts", func(t *testing.T, s store.Store) {
			// An update that expects a record nobody created must not
			// create it.
			conflict(t, s, k.write(10, 1))
			_, _, err := k.read(t, s)
			notFound(t, "read after failed update", err)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, o.New(t)) })
	}
}
