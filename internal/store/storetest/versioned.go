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

// testVersionRule is a group's VersionRule case for the record type k
// adapts.
func testVersionRule(t *testing.T, o Options, k versionedKind) {
	t.Run("VersionRule", func(t *testing.T) { versionRule(t, o, k) })
}

func versionRule(t *testing.T, o Options, k versionedKind) {
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
	// Each case writes in turn (a write whose want is false must conflict),
	// then finds the record at version with payload; version 0: absent.
	type write struct {
		payload, expect int64
		want            bool
	}
	tests := []struct {
		name             string
		writes           []write
		version, payload int64
	}{
		{"GetMissingIsNotFound", nil, 0, 0},
		{"CreateStoresVersion1", []write{{10, 0, true}}, 1, 10},
		{"SecondCreateConflictsAndKeepsFirst", []write{{10, 0, true}, {20, 0, false}}, 1, 10},
		{"UpdateWithCurrentVersionBumpsIt", []write{{10, 0, true}, {11, 1, true}, {12, 2, true}}, 3, 12},
		{"StaleVersionConflictsAndKeepsStored", []write{{10, 0, true}, {11, 1, true}, {99, 1, false}}, 2, 11},
		{"FutureVersionConflicts", []write{{10, 0, true}, {99, 2, false}}, 1, 10},
		// An update that expects a record nobody created must not create it.
		{"UpdateOfMissingConflicts", []write{{10, 1, false}}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := o.New(t)
			for _, w := range tc.writes {
				if w.want {
					commit(t, s, k.write(w.payload, w.expect))
				} else {
					conflict(t, s, k.write(w.payload, w.expect))
				}
			}
			if tc.version == 0 {
				_, _, err := k.read(t, s)
				notFound(t, "read of a record never created", err)
				return
			}
			stored(t, s, tc.version, tc.payload)
		})
	}
}
