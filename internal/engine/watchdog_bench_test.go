package engine_test

import (
	"testing"

	"github.com/interlockhq/interlock/internal/engine/enginebench"
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
	enginebench.WatchdogPasses(b, enginebench.SQLiteWatchdogStore(b, n, oldSensors))
}
