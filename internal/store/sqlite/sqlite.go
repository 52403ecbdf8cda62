// Package sqlite is the embedded store.Store backend: one SQLite file (or
// an in-memory database), through the pure-Go driver modernc.org/sqlite, so
// `interlock serve` and `interlock simulate` need no server and no cgo.
//
// It owns the SQL schema and its migrations, the mapping of SQLite errors
// onto the port's sentinels, and the connection discipline: every write goes
// through one connection in a BEGIN IMMEDIATE transaction, which concurrent
// Commits share (group commit, group.go); reads use a separate pool that
// sees the last committed state (WAL); a goroutine with a connection of its
// own checkpoints the WAL (checkpoint.go); statements are prepared once
// (stmts.go). A scratch store is one connection for everything
// (OpenScratch). It must never read the clock — every stored or compared
// time comes from the caller — and never decide anything: which states are
// terminal, which timers matter, what a conflict means to the engine are
// all decided above the port.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/interlockhq/interlock/internal/store"

	// The driver registers itself as "sqlite".
	_ "modernc.org/sqlite"
)

var _ store.Store = (*Store)(nil)

// Memory is the path of a private in-memory database: nothing survives
// Close. `interlock simulate` and quick tests use it.
const Memory = ":memory:"

// busyTimeoutMS is how long a statement waits for a lock held by another
// process sharing the file (a second `interlock` against the same path, a
// backup tool) before failing with SQLITE_BUSY. Inside one process writes
// never wait on SQLite's lock: they queue for the single writer connection.
const busyTimeoutMS = 5000

// maxReaders bounds the reader pool. Reads are short point lookups and
// index scans; a few connections keep both cores busy without holding many
// WAL snapshots open (an open snapshot stops the checkpointer).
const maxReaders = 4

// Store is the SQLite backend. It is safe for concurrent use.
type Store struct {
	path string
	// write has exactly one connection. SQLite allows one writer at a time
	// per file; holding a single connection turns that into an in-process
	// queue (database/sql waits for the connection) instead of BUSY errors
	// and retries, and its DSN makes every transaction BEGIN IMMEDIATE so
	// the write lock is taken before the first read of the transaction —
	// a condition checked inside the transaction cannot be invalidated by a
	// writer in another process before we write.
	write *pool
	// read is the reader pool. In WAL mode readers never block the writer
	// and always see the last committed transaction. For an in-memory
	// database it is the writer's pool: each connection to ":memory:" would
	// be a different, empty database.
	read *pool

	// group queues concurrent Commits into shared transactions (group.go).
	group committer
	// ckpt copies the WAL into the database file off the commit path
	// (checkpoint.go); nil for an in-memory database, which has no WAL.
	ckpt *checkpointer

	// pipelines caches the pipeline rows when the store has its database
	// to itself (rowcache.go); nil otherwise.
	pipelines *pipelineCache
	// runs caches the runs it read, likewise (rowcache.go); nil otherwise.
	runs *runCache
	// timers caches the timers it read or wrote (rowcache.go); nil
	// otherwise.
	timers *timerCache

	// wstmts are the Commit path's statements, prepared on the writer
	// connection (wtx.go).
	wstmts writerStmts

	// scratch: the database is in memory, read from path at open and
	// written back at Close (OpenScratch).
	scratch bool
	// maxPages, when not 0, is the page limit of the store's memdb
	// database (scratchParams).
	maxPages int

	closeOnce sync.Once
	closeErr  error
}

// Synchronous settings of the writer connection (PRAGMA synchronous).
const (
	// syncFull fsyncs the WAL on every commit: an acknowledged commit
	// survives a process crash and a power loss. The default; see Open.
	syncFull = "FULL"
	// syncNormal fsyncs only at checkpoints: an acknowledged commit
	// survives a process crash (kill -9) but the last commits can be lost
	// on power loss. Kept for the benchmark that measures the difference.
	syncNormal = "NORMAL"
	// syncOff never fsyncs: for scratch stores whose content is thrown
	// away (OpenScratch, which also makes them one connection).
	syncOff = "OFF"
)

// Open opens (creating it if needed) the database at path, or a private
// in-memory database when path is Memory, and applies any pending schema
// migrations. The directory holding path must exist: Open does not create
// directories, so a typo in a configured path fails here, clearly, instead
// of silently starting an empty store somewhere else.
//
// Durability: the writer runs with journal_mode=WAL and synchronous=FULL,
// so a Commit that returned nil survives kill -9 and power loss. That
// matters for safety, not just for data: a run row is the per-period
// trigger lock, and a lock lost to a power cut after the job was triggered
// would let the restarted process trigger the same period again.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, syncFull)
}

// OpenScratch opens a store whose content does not need to outlive the
// machine: the temporary store of `interlock simulate`. The database lives
// in memory, on one connection: open reads the file at path into it (when
// the file exists), Close writes it back whole; in between the file is not
// touched. It may hold up to 1 GiB (scratchParams); a commit past that
// fails, saying so. Its Commits share one transaction, committed every
// few dozen (scratchtx.go). A commit writes no page to a file, and a read never
// leaves memory: in a simulation the commits' page writes and journal
// handling were a tenth of its CPU, and readers beside the writer, as Open has, ran nothing in parallel
// (simulate drives the engine from one goroutine) while each of their
// page caches was emptied by every commit. The schema, the migrations, the
// Commit semantics and reopening after a simulated restart are as Open's;
// a process that dies before Close leaves the file as the last Close wrote
// it (nothing of a scratch store is promised to survive a crash).
func OpenScratch(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, syncOff)
}

func open(ctx context.Context, path, synchronous string) (*Store, error) {
	return openPages(ctx, path, synchronous, scratchMaxPages)
}

// openPages is open with a scratch store's page limit (scratchMaxPages;
// a test lowers it).
func openPages(ctx context.Context, path, synchronous string, scratchPages int) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	s := &Store{path: path}
	if path != Memory {
		dir := filepath.Dir(path)
		if st, err := os.Stat(dir); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("sqlite: open %s: directory %s does not exist (create it first)", path, dir)
			}
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("sqlite: open %s: %s is not a directory", path, dir)
		}
	}
	// An in-memory database and a scratch store are one connection for
	// reads and writes (OpenScratch).
	single := path == Memory || synchronous == syncOff
	if single {
		dsn := "file::memory:?" + dsnParams(synchronous, false)
		if path != Memory {
			dsn = "file:scratch?" + scratchParams(scratchPages)
			s.maxPages = scratchPages
		}
		db, err := openOne(path, dsn)
		if err != nil {
			return nil, err
		}
		s.write = newPool(db)
		s.write.detached = true
		s.write.wstmts = &s.wstmts
		s.read = s.write
		s.pipelines = newPipelineCache()
		s.runs = newRunCache()
		s.timers = newTimerCache()
	} else {
		w, err := openOne(path, fileURI(path)+"?"+dsnParams(synchronous, false))
		if err != nil {
			return nil, err
		}
		r, err := sql.Open("sqlite", fileURI(path)+"?"+dsnParams(synchronous, true))
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		r.SetMaxOpenConns(maxReaders)
		r.SetMaxIdleConns(maxReaders)
		s.write, s.read = newPool(w), newPool(r)
	}
	// The writer connects first: it creates the file, switches it to WAL
	// and migrates, so readers only ever open a migrated WAL database.
	if err := s.write.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if single {
		// Its one connection takes turns between callers: it needs no
		// SQLite mutex of its own (nomutex.go).
		if err := s.write.onDriver(ctx, func(t *wtx) error { unserialize(t.conn); return nil }); err != nil {
			s.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
	}
	if single && path != Memory {
		if err := s.load(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		// Only now may Close write the database to the file: an empty
		// one must not replace a file that could not be read.
		s.scratch = true
	}
	if err := migrate(ctx, s.write.DB); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if !single {
		// Like the readers, the checkpointer connects to a migrated WAL
		// database.
		c, err := openOne(path, fileURI(path)+"?"+checkpointerParams(synchronous))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.ckpt = newCheckpointer(c, &s.group.writing)
	}
	return s, nil
}

// openOne opens dsn as a pool of one connection, never closed while the
// store is open: closing it would drop an in-memory database, and the
// writer's statements are prepared on its one connection (wtx.go); the
// checkpointer needs no second.
func openOne(path, dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// dsnParams are the connection settings. They are per connection, so they
// go in the DSN: database/sql may replace a connection at any time and the
// new one must be configured the same way.
func dsnParams(synchronous string, reader bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	if reader {
		// A reader that tried to write would be a bug in this package;
		// make it an error rather than a second writer.
		q.Add("_pragma", "query_only(1)")
		return q.Encode()
	}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	// The checkpointer copies the WAL into the database file, not the
	// commit that fills it (checkpoint.go).
	q.Add("_pragma", "wal_autocheckpoint(0)")
	q.Set("_txlock", "immediate")
	return q.Encode()
}

// scratchParams are the settings of a scratch store's one connection to
// its in-memory database (OpenScratch).
//
// The database is a memdb one (vfs=memdb: one growing buffer, private to
// the connection, as the name does not start with '/'), read through a
// page cache of its own, not ":memory:", whose pages all live in the page
// cache. Ending each transaction truncates the page cache to the
// database's size, and SQLite's b-tree balancing numbers a page, for a
// moment, as the lock-byte page (262,145 at 4 kB pages): below 1 GiB every
// such commit then scanned the whole cache, which for ":memory:" is the
// whole database — a tenth of a simulation's CPU. A memdb database caps
// its size at 1 GiB (SQLITE_MEMDB_DEFAULT_MAXSIZE; the driver offers no
// way to raise it), so the store sets that limit itself (max_page_count)
// and names it when a commit reaches it (scratchFull). Its journal is in
// memory, as ":memory:"'s was; a file journal would be a real file beside
// the process.
func scratchParams(maxPages int) string {
	q := url.Values{}
	q.Set("vfs", "memdb")
	q.Add("_pragma", "journal_mode(MEMORY)")
	q.Add("_pragma", "synchronous("+syncOff+")")
	q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -scratchCacheKiB))
	q.Add("_pragma", fmt.Sprintf("max_page_count(%d)", maxPages))
	q.Set("_txlock", "immediate")
	return q.Encode()
}

// scratchCacheKiB is a scratch store's page cache: small enough that the
// truncation at the end of a transaction stays short, large enough for a
// simulation's working set (a miss is a copy from the memdb buffer).
const scratchCacheKiB = 8 << 10

// scratchMaxPages bounds a scratch store's database, in pages of the
// default 4 kB: 1 GiB, the memdb VFS's own limit.
const scratchMaxPages = (1 << 30) / 4096

// checkpointerParams are the checkpointer connection's settings: the
// writer's synchronous setting, which decides whether a checkpoint syncs
// the WAL before copying it and the database file before the log may
// start over.
func checkpointerParams(synchronous string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "synchronous("+synchronous+")")
	q.Add("_pragma", "wal_autocheckpoint(0)")
	return q.Encode()
}

// fileURI turns a file path into an SQLite URI. The driver opens names as
// URIs, where '?' starts the parameters and '#' a fragment, so a path
// containing either (or '%') must be escaped to mean itself.
func fileURI(path string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return "file:" + r.Replace(path)
}

// Path returns the path the store was opened with.
func (s *Store) Path() string { return s.path }

// Close closes the database. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.scratch {
			errs = append(errs, s.save())
		}
		if s.ckpt != nil {
			errs = append(errs, s.ckpt.close())
		}
		if s.read != nil && s.read != s.write {
			errs = append(errs, s.read.close())
		}
		if s.write != nil {
			errs = append(errs, s.closeWriterStmts(), s.write.close())
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
