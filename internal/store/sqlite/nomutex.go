package sqlite

import (
	"reflect"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// A store of one connection (the scratch store, the in-memory one) runs
// its connection without SQLite's per-connection mutex, as if it had been
// opened SQLITE_OPEN_NOMUTEX (SQLite's "multi-thread" mode: safe as long
// as no connection is used by two threads at once). The driver opens every
// connection SQLITE_OPEN_FULLMUTEX and offers no other way; so, once the
// connection is open and idle, the store frees that mutex and clears the
// connection's pointer to it, which is what NOMUTEX leaves there. Every
// sqlite3_* call on the connection (each step, bind, and each column of
// each row read) locked and unlocked it: in the simulation benchmark, ~2 s
// of its ~26 s of CPU.
//
// Nothing is lost: that mutex never guarded anything a store of one
// connection needs. database/sql hands its driver connection to one caller
// at a time (Conn.Raw, a statement, a Rows, each under the connection's
// lock; the pool has one connection, so the store's reads and writes take
// turns on it), and the driver itself says its connections are not safe
// for concurrent use whatever the mutex (its Go state is used before
// SQLite's mutex is reached). Cancelling a call interrupts it from another
// goroutine by sqlite3_interrupt, which takes no mutex in either mode. The
// global mutexes (the page cache's, the allocator's) are untouched, and a
// file store's connections (a writer, readers, a checkpointer, each its
// own) keep theirs.
//
// The connection's handle is the driver's unexported field; a driver that
// no longer has it leaves the mutex in place (slower, as correct), and
// TestOneConnectionStoreHasNoMutex fails, naming this file.

// unserialize drops the SQLite mutex of dc, a driver connection that is
// open and not in use. When dc is not the driver connection this file
// knows it does nothing: the mutex stays, which is correct, only slower,
// and TestOneConnectionStoreHasNoMutex is what notices (no caller could
// do better with a report at run time).
func unserialize(dc any) {
	db, ok := connHandle(dc)
	if !ok {
		return
	}
	tls := libc.NewTLS()
	defer tls.Close()
	m := sqlite3.Xsqlite3_db_mutex(tls, db)
	if m == 0 {
		return
	}
	var x sqlite3.Tsqlite3
	libc.Xmemset(tls, db+unsafe.Offsetof(x.Fmutex), 0, types.Size_t(unsafe.Sizeof(x.Fmutex)))
	sqlite3.Xsqlite3_mutex_free(tls, m)
}

// connHandle returns the sqlite3* of the driver connection dc.
func connHandle(dc any) (uintptr, bool) {
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return 0, false
	}
	f := v.Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Uintptr || f.Uint() == 0 {
		return 0, false
	}
	return uintptr(f.Uint()), true
}
