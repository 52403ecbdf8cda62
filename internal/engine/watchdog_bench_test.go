package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/interlockhq/interlock/internal/engine/enginebench"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// BenchmarkWatchdogPass10k measures one watchdog pass over 10,000
// pipelines on SQLite (product spec §8: under 1 s on two cores). The
// store also holds 100,000 old sensors and 100,000 old events that the
// pass must not read: compare with BenchmarkWatchdogPass10kNoHistory.
func BenchmarkWatchdogPass10k(b *testing.B) { benchWatchdog(b, 10000, 10) }

// BenchmarkWatchdogPass10kNoHistory is the same without the history, to
// show the pass does not grow with stored sensors or events.
func BenchmarkWatchdogPass10kNoHistory(b *testing.B) { benchWatchdog(b, 10000, 0) }

func benchWatchdog(b *testing.B, n, oldSensors int) {
	st, err := sqlite.OpenScratch(b.Context(), filepath.Join(b.TempDir(), "wd.db"))
	if err != nil {
		b.Fatal(err)
	}
	enginebench.LoadWatchdogFixture(b, st, n, oldSensors)
	// Loaded through a scratch store, for speed; measured on the store as
	// serve opens it: durable, WAL, readers beside the writer.
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	durable, err := sqlite.Open(b.Context(), st.Path())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = durable.Close() })
	enginebench.WatchdogPasses(b, durable)
}
