// Package storetest is the conformance suite of the storage port: the
// semantics every store.Store backend must keep, written once and run
// against each (SQLite always; PostgreSQL and DynamoDB when their test
// endpoints are set).
//
// It checks behaviour the engine relies on, not CRUD: compare-and-swap
// versions, a Commit that writes all or nothing, exactly one winner among
// racing writers (the per-period trigger lock), timers that fire by the
// `now` passed in and are claimed once, an event log whose cursor visits
// every event once, and data that round-trips exactly (nanosecond times,
// numbers like 2^53+1).
//
// It owns no backend and must never reach past the port: a check that
// needs a backend's internals (its SQL, its error codes) belongs in that
// backend's own tests. Like the store, it never reads the clock.
//
// Under the race detector (go test -race: make race, make test's second half) it
// runs only its concurrent groups (concurrentGroups), whose cases race
// callers against each other: a sequential case calls the store from one
// goroutine, so the detector finds nothing in it that the plain run (make
// test-ci, make test's first half) did not already check, and running them made the
// race run of the SQLite package, with its three suites, several times as
// long. A backend that runs parts of one call on goroutines of its own
// (DynamoDB's parallel reads) sets Options.OwnGoroutines and keeps every
// case under the detector.
package storetest

import (
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/store"
)

// Options configure the suite for one backend.
type Options struct {
	// New returns a fresh, empty store. It is called once per subtest and
	// should register the store's cleanup (Close) with t.
	New func(t *testing.T) store.Store
	// Reopen closes s and returns a new store over the same data, as a
	// restarted process would open it. Nil skips the reopen checks (an
	// in-memory backend has nothing to reopen).
	Reopen func(t *testing.T, s store.Store) store.Store
	// TTL is set for a backend whose records expire by a time-to-live
	// written on each (DynamoDB): the Expire checks then check every
	// record's expiry instead of what Expire deleted (expirettl.go).
	TTL *TTLOptions
	// OwnGoroutines is set for a backend that runs parts of one call on
	// goroutines of its own (DynamoDB reads shards and tables in
	// parallel): its sequential cases are concurrent inside, so under the
	// race detector every group runs, not only the concurrent ones.
	OwnGoroutines bool
}

// concurrentGroups are the groups of RunWithOptions with cases that race
// callers against each other (race, testReadersBesideWriters): the ones
// the race detector has something to watch in. A case that races callers
// in another group fails (mustBeConcurrent).
var concurrentGroups = map[string]bool{"Races": true, "Leases": true, "Backfills": true, "Silences": true}

// inConcurrentGroup says the test named name (t.Name()) is a case of a
// concurrent group.
func inConcurrentGroup(name string) bool {
	for _, part := range strings.Split(name, "/") {
		if concurrentGroups[part] {
			return true
		}
	}
	return false
}

// Run runs the suite against the backend newStore creates.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	RunWithOptions(t, Options{New: newStore})
}

// RunWithOptions runs the suite with o.
func RunWithOptions(t *testing.T, o Options) {
	if o.New == nil {
		t.Fatal("storetest: Options.New is required")
	}
	groups := []struct {
		name string
		run  func(*testing.T, Options)
	}{
		{"Pipelines", testPipelines},
		{"Calendars", testCalendars},
		{"Checks", testChecks},
		{"Sensors", testSensors},
		{"SensorListChanged", testSensorListChanged},
		{"SensorReads", testSensorReads},
		{"Facts", testFacts},
		{"FactsRanges", testFactsRanges},
		{"Runs", testRuns},
		{"RunList", testRunList},
		{"Commit", testCommit},
		{"Races", testRaces},
		{"Markers", testMarkers},
		{"MarkerList", testMarkerList},
		{"ConditionFacts", testConditionFacts},
		{"ChangedSince", testChangedSince},
		{"Ledger", testLedger},
		{"Baselines", testBaselines},
		{"Timers", testTimers},
		{"TimerList", testTimerList},
		{"Events", testEvents},
		{"Alerts", testAlerts},
		{"Leases", testLeases},
		{"Backfills", testBackfills},
		{"Silences", testSilences},
		{"Expire", testExpire},
		{"Reopen", testReopen},
	}
	named := map[string]bool{}
	for _, g := range groups {
		named[g.name] = true
	}
	for name := range concurrentGroups {
		if !named[name] {
			t.Fatalf("storetest: concurrentGroups names %s, which is no group", name)
		}
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			if raceDetector && !concurrentGroups[g.name] && !o.OwnGoroutines {
				t.Skip("sequential: run without -race (make test); the race detector has nothing to watch in it")
			}
			g.run(t, o)
		})
	}
}
