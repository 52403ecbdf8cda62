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
package storetest

import (
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
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, o) })
	}
}
