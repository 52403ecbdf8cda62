package sqlite

import (
	"path/filepath"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A store of one connection runs it without SQLite's connection mutex
// (nomutex.go), after a reopen too; a file store's writer keeps its own.
// This fails when the driver's connection no longer has the handle
// nomutex.go reads (the mutex is then left in place): the scratch store
// runs the simulation ~2 s of CPU slower.
func TestOneConnectionStoreHasNoMutex(t *testing.T) {
	scratch := filepath.Join(t.TempDir(), "scratch.db")
	first := openScratch(t, scratch)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		s       *Store
		mutexed bool
	}{
		{"scratch, reopened", openScratch(t, scratch), false},
		{"in memory", openPath(t, Memory), false},
		{"file (writer)", openFile(t), true},
	} {
		var handle, mutex uintptr
		err := c.s.write.onDriver(t.Context(), func(w *wtx) error {
			db, ok := connHandle(w.conn)
			if !ok {
				t.Fatalf("%s: the driver's connection (%T) has no handle nomutex.go can read", c.name, w.conn)
			}
			tls := libc.NewTLS()
			defer tls.Close()
			handle, mutex = db, sqlite3.Xsqlite3_db_mutex(tls, db)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := mutex != 0; got != c.mutexed {
			t.Errorf("%s: connection %#x has a mutex: %v, want %v", c.name, handle, got, c.mutexed)
		}
	}
}
