package enginebench

import (
	"path/filepath"
	"testing"

	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// SQLiteWatchdogStore is a SQLite store in b's temporary directory holding
// LoadWatchdogFixture(n, oldSensors): loaded through a scratch store, for
// speed, and returned opened as serve opens it (durable, WAL, readers
// beside the writer), closed when b ends.
func SQLiteWatchdogStore(b *testing.B, n, oldSensors int) *sqlite.Store {
	b.Helper()
	scratch, err := sqlite.OpenScratch(b.Context(), filepath.Join(b.TempDir(), "fixture.db"))
	if err != nil {
		b.Fatal(err)
	}
	LoadWatchdogFixture(b, scratch, n, oldSensors)
	if err := scratch.Close(); err != nil {
		b.Fatal(err)
	}
	durable, err := sqlite.Open(b.Context(), scratch.Path())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = durable.Close() })
	return durable
}
