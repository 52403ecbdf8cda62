package postgres

import (
	"testing"

	"github.com/interlockhq/interlock/internal/engine/enginebench"
)

// BenchmarkWatchdogPass10k is the engine's benchmark of the same name
// (internal/engine, SQLite) on PostgreSQL: one watchdog pass over 10,000
// pipelines of the same fixture (enginebench.LoadWatchdogFixture), with
// 100,000 old sensors and events the pass must not read, against the
// test's own server (fsync off).
func BenchmarkWatchdogPass10k(b *testing.B) {
	st := open(b, schemaURL(b))
	enginebench.LoadWatchdogFixture(b, st, 10000, 10)
	enginebench.WatchdogPasses(b, st)
}
