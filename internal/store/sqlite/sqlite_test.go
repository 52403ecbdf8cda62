package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/storetest"
)

// openFile opens a fresh database file in the test's temporary directory.
func openFile(t *testing.T) *Store {
	t.Helper()
	return openPath(t, filepath.Join(t.TempDir(), "interlock.db"))
}

func openPath(t *testing.T, path string) *Store {
	t.Helper()
	return openWith(t, "Open", Open, path)
}

// openWith opens path with open (named name in the failure), closed when
// the test ends.
func openWith(t *testing.T, name string, open func(context.Context, string) (*Store, error), path string) *Store {
	t.Helper()
	s, err := open(t.Context(), path)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// databaseAt creates a database file as a binary that knew only the first
// version migrations left it, for tests of what opening it does; the
// caller closes db before opening the store on path.
func databaseAt(t *testing.T, version int) (db *sql.DB, path string) {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "interlock.db")
	db, err = sql.Open("sqlite", fileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := migrateTo(t.Context(), db, ms[:version]); err != nil {
		t.Fatal(err)
	}
	return db, path
}

func TestConformance(t *testing.T) {
	// The three backends' suites are independent (each store its own
	// file or memory): run at once, they keep the race run short.
	t.Parallel()
	storetest.RunWithOptions(t, storetest.Options{
		New:    func(t *testing.T) store.Store { return openFile(t) },
		Reopen: reopenWith(openPath),
	})
}

// reopenWith is a conformance run's Reopen: close the store, open its
// file again with open.
func reopenWith(open func(*testing.T, string) *Store) func(*testing.T, store.Store) store.Store {
	return func(t *testing.T, s store.Store) store.Store {
		path := s.(*Store).Path()
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		return open(t, path)
	}
}

// The in-memory mode shares one connection between reads and writes; it
// must keep the same semantics (`interlock simulate` runs on it).
func TestConformanceInMemory(t *testing.T) {
	// The three backends' suites are independent (each store its own
	// file or memory): run at once, they keep the race run short.
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return openPath(t, Memory) })
}

func TestOpenMissingDirectoryFailsClearly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no", "such", "dir")
	_, err := Open(t.Context(), filepath.Join(dir, "interlock.db"))
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("got %v, want an error saying %s does not exist", err, dir)
	}
	if _, statErr := os.Stat(dir); !errors.Is(statErr, os.ErrNotExist) {
		t.Fatalf("Open created %s; it must not create directories", dir)
	}
}

func TestOpenPathWithURICharacters(t *testing.T) {
	// '?', '#' and '%' mean something in an SQLite URI; in a path they
	// must mean themselves, or the data lands in another file.
	dir := t.TempDir()
	path := filepath.Join(dir, "a?b#c%20d.db")
	s := openPath(t, path)
	if err := s.Commit(t.Context(), store.Change{Pipelines: []store.PipelineWrite{{Pipeline: store.Pipeline{ID: "p"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the given path: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "a?b#c%20d.db") {
			t.Errorf("stray file %q next to the database", e.Name())
		}
	}
}

func TestOpenSetsDurabilityPragmas(t *testing.T) {
	s := openFile(t)
	ctx := t.Context()
	var mode string
	var sync, busy int
	if err := s.write.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := s.write.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if err := s.read.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy); err != nil {
		t.Fatal(err)
	}
	// synchronous: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
	if mode != "wal" || sync != 2 || busy != busyTimeoutMS {
		t.Fatalf("journal_mode=%s synchronous=%d busy_timeout=%d, want wal, 2 (FULL), %d", mode, sync, busy, busyTimeoutMS)
	}
}

// TestOneConnectionPools: the writer and the checkpointer of a file
// store are one connection each, and an in-memory store is one connection
// for reads and writes (openOne): a second writer connection would lose
// the statements prepared on the first, and a second in-memory connection
// would be another, empty database.
func TestOneConnectionPools(t *testing.T) {
	f := openFile(t)
	m := openPath(t, Memory)
	for name, db := range map[string]*sql.DB{"writer": f.write.DB, "checkpointer": f.ckpt.db, "in-memory": m.write.DB} {
		if n := db.Stats().MaxOpenConnections; n != 1 {
			t.Errorf("%s: at most %d open connections, want 1", name, n)
		}
	}
	if m.read != m.write {
		t.Error("in-memory: reads and writes on separate pools")
	}
}

func TestReaderCannotWrite(t *testing.T) {
	s := openFile(t)
	if _, err := s.read.ExecContext(t.Context(), `DELETE FROM events`); err == nil {
		t.Fatal("a reader connection wrote; readers must be query-only")
	}
}

// schemaState is what migrating would change.
func schemaState(t *testing.T, db *sql.DB) (schemaVersion int, migrations []string) {
	t.Helper()
	if err := db.QueryRowContext(t.Context(), `PRAGMA schema_version`).Scan(&schemaVersion); err != nil {
		t.Fatal(err)
	}
	return schemaVersion, selectStrings(t, db, `SELECT version || ' ' || name FROM schema_migrations ORDER BY version`)
}

// schemaObjects lists the tables and indexes of db with their SQL.
func schemaObjects(t *testing.T, db *sql.DB) string {
	t.Helper()
	return strings.Join(selectStrings(t, db, `SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`), "\n")
}

// selectStrings runs query, which selects one text column, on db.
func selectStrings(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	out, err := queryStrings(t.Context(), db, query)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMigrations(t *testing.T) {
	t.Run("FreshDatabaseRecordsEveryMigration", func(t *testing.T) {
		s := openFile(t)
		ms, err := migrations()
		if err != nil {
			t.Fatal(err)
		}
		_, got := schemaState(t, s.write.DB)
		if len(got) != len(ms) || got[0] != "1 0001_init.sql" {
			t.Fatalf("schema_migrations %v, want one row per embedded migration starting with 1 0001_init.sql", got)
		}
	})

	t.Run("ReopeningIsANoOp", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "interlock.db")
		s := openPath(t, path)
		v1, m1 := schemaState(t, s.write.DB)
		s.Close()
		s = openPath(t, path)
		v2, m2 := schemaState(t, s.write.DB)
		if v1 != v2 || strings.Join(m1, ",") != strings.Join(m2, ",") {
			t.Fatalf("reopen changed the schema: version %d → %d, migrations %v → %v", v1, v2, m1, m2)
		}
	})

	t.Run("NewerDatabaseIsRefused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "interlock.db")
		s := openPath(t, path)
		if _, err := s.write.ExecContext(t.Context(), `INSERT INTO schema_migrations (version, name) VALUES (999, '0999_future.sql')`); err != nil {
			t.Fatal(err)
		}
		s.Close()
		_, err := Open(t.Context(), path)
		if err == nil || !strings.Contains(err.Error(), "newer than this binary") {
			t.Fatalf("got %v, want a refusal to open a newer schema", err)
		}
	})

	t.Run("UpgradesAVersion1DatabaseWithData", func(t *testing.T) {
		// A database written by a binary that knew only 0001: opening it
		// applies the rest, indexes the rows already there, and the reads
		// that rely on the new indexes see those rows.
		db, path := databaseAt(t, 1)
		ctx := t.Context()
		changed := time.Date(2026, time.March, 14, 6, 0, 0, 0, time.UTC)
		if _, err := db.ExecContext(ctx, `
			INSERT INTO sensors (pipeline_id, key, version, data, changed_at, written_at) VALUES ('orders', 'count', 1, NULL, ?, ?);
			INSERT INTO sensors (pipeline_id, key, version) VALUES ('orders', 'count#2026-03-10', 1), ('orders', 'count#20260309T05', 1),
				('orders', 'count#eu', 1), ('orders', 'count#2026-02-30', 1);
			INSERT INTO markers (pipeline_id, schedule_id, period, kind, at, detail) VALUES ('orders', 'daily', '2026-03-14', 'sla-breach', ?, NULL);`,
			changed.UnixNano(), changed.UnixNano(), changed.UnixNano()); err != nil {
			t.Fatal(err)
		}
		db.Close()

		s := openPath(t, path)
		ms, err := migrations()
		if err != nil {
			t.Fatal(err)
		}
		if _, got := schemaState(t, s.write.DB); len(got) != len(ms) {
			t.Fatalf("schema_migrations %v after upgrade, want %d migrations", got, len(ms))
		}
		sensors, err := s.SensorListChanged(ctx, store.SensorListChangedParams{Since: changed, Watched: true})
		if err != nil || len(sensors) != 1 || sensors[0].Key != "count" {
			t.Fatalf("SensorListChanged after upgrade: %v, %v; want the sensor written before it", sensors, err)
		}
		markers, err := s.MarkerList(ctx, store.MarkerListParams{PeriodFrom: "2026-03-14"})
		if err != nil || len(markers) != 1 || markers[0].Kind != "sla-breach" {
			t.Fatalf("MarkerList after upgrade: %v, %v; want the marker written before it", markers, err)
		}
		// 0006 gave the per-period sensors written before it their period,
		// so retention finds them; plain keys have none.
		res, err := s.Expire(ctx, store.ExpireParams{PeriodBefore: "2026-03-11", Before: changed, Limit: 100})
		if err != nil || res.Deleted["sensors"] != 2 {
			t.Fatalf("Expire after upgrade: %+v, %v; want the 2 per-period sensors written before it deleted", res, err)
		}
		if left, _ := s.SensorList(ctx, "orders"); len(left) != 3 {
			t.Fatalf("sensors left after Expire: %v, want count, count#2026-02-30 and count#eu", left)
		}
		if got, want := schemaObjects(t, s.write.DB), schemaObjects(t, openFile(t).write.DB); got != want {
			t.Fatalf("upgraded schema differs from a fresh one:\n%s\nfresh:\n%s", got, want)
		}
	})

	t.Run("FailedMigrationLeavesNoTrace", func(t *testing.T) {
		// A migration that fails half-way must not leave its first
		// statements applied: the next Open would then fail on them.
		db, err := sql.Open("sqlite", "file::memory:")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		if err := migrate(t.Context(), db); err != nil {
			t.Fatal(err)
		}
		tx, _ := db.BeginTx(t.Context(), nil)
		_, err = tx.ExecContext(t.Context(), "CREATE TABLE half (x INTEGER); CREATE TABLE pipelines (x INTEGER);")
		tx.Rollback()
		if err == nil {
			t.Fatal("the broken script applied")
		}
		var n int
		db.QueryRowContext(t.Context(), `SELECT count(*) FROM sqlite_master WHERE name = 'half'`).Scan(&n)
		if n != 0 {
			t.Fatal("a statement of a rolled-back script stayed applied")
		}
	})

	t.Run("EmbeddedAreValid", func(t *testing.T) {
		if _, err := migrations(); err != nil {
			t.Fatal(err)
		}
	})
}

// interpretError is the one place SQLite's errors become the port's; these
// cases pin it with errors produced by a real SQLite.
func TestInterpretError(t *testing.T) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := t.Context()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (k TEXT PRIMARY KEY, u TEXT UNIQUE, n TEXT NOT NULL, c INTEGER CHECK (c > 0)) STRICT;
		INSERT INTO t VALUES ('a', 'x', 'n', 1)`); err != nil {
		t.Fatal(err)
	}
	exec := func(q string) error { _, err := db.ExecContext(ctx, q); return err }
	tests := []struct {
		name     string
		err      error
		conflict bool
	}{
		{"PrimaryKey", exec(`INSERT INTO t VALUES ('a', 'y', 'n', 1)`), true},
		{"Unique", exec(`INSERT INTO t VALUES ('b', 'x', 'n', 1)`), true},
		{"NotNullIsABug", exec(`INSERT INTO t VALUES ('c', 'z', NULL, 1)`), false},
		{"CheckIsABug", exec(`INSERT INTO t VALUES ('d', 'w', 'n', 0)`), false},
		{"StrictTypeIsABug", exec(`INSERT INTO t VALUES ('e', 'v', 'n', 'text')`), false},
		{"SyntaxIsABug", exec(`INSERT INTO nowhere VALUES (1)`), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("the statement did not fail")
			}
			got := interpretError(tc.err)
			if errors.Is(got, store.ErrConflict) != tc.conflict {
				t.Fatalf("interpretError(%v) = %v; conflict %v, want %v", tc.err, got, !tc.conflict, tc.conflict)
			}
			if !errors.Is(got, tc.err) {
				t.Fatalf("interpretError dropped the driver's error from the chain: %v", got)
			}
		})
	}
	if interpretError(nil) != nil {
		t.Fatal("interpretError(nil) is not nil")
	}
}

func TestCommitRefuses(t *testing.T) {
	k := run.Key{PipelineID: "p", ScheduleID: "s", Period: "2026-03-14"}
	tests := []struct {
		name   string
		change store.Change
		want   string
	}{
		{"TimeAfter2262", store.Change{Runs: []store.RunWrite{{Run: run.Run{Key: k, State: run.Evaluating,
			ExpiresAt: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}}}}, "outside the storable range"},
		{"TimeBefore1678", store.Change{Events: []event.Event{{ID: "x", Time: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)}}}, "outside the storable range"},
		{"TimerWithoutDueTime", store.Change{Timers: []store.TimerWrite{{Timer: store.Timer{Key: "t"}}}}, "no due time"},
		{"NegativeVersion", store.Change{Pipelines: []store.PipelineWrite{{Pipeline: store.Pipeline{ID: "p"}, ExpectVersion: -1}}}, "negative expected version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openFile(t)
			// Each refused Change also carries a valid write, which must not land.
			tc.change.Pipelines = append(tc.change.Pipelines, store.PipelineWrite{Pipeline: store.Pipeline{ID: "other"}})
			err := s.Commit(t.Context(), tc.change)
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, store.ErrConflict) {
				t.Fatalf("got %v, want a non-conflict error containing %q", err, tc.want)
			}
			if ps, _ := s.PipelineList(t.Context()); len(ps) != 0 {
				t.Fatalf("a refused Change wrote %d pipelines", len(ps))
			}
		})
	}
}

func TestCommitHonoursCancelledContext(t *testing.T) {
	s := openFile(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.Commit(ctx, store.Change{Pipelines: []store.PipelineWrite{{Pipeline: store.Pipeline{ID: "p"}}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if _, err := s.PipelineGet(t.Context(), "p"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a cancelled Commit wrote: %v", err)
	}
}

func TestCloseTwice(t *testing.T) {
	s := openFile(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestSecondProcessSeesCommits(t *testing.T) {
	// Two Stores on one file stand in for two processes (a CLI reading
	// while `serve` writes): each sees the other's commits, and the
	// trigger lock holds across them.
	path := filepath.Join(t.TempDir(), "interlock.db")
	a, b := openPath(t, path), openPath(t, path)
	k := run.Key{PipelineID: "p", ScheduleID: "s", Period: "2026-03-14"}
	create := store.Change{Runs: []store.RunWrite{{Run: run.Run{Key: k, State: run.Evaluating}}}}
	if err := a.Commit(t.Context(), create); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(t.Context(), create); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second store created the same run: %v", err)
	}
	if _, err := b.RunGet(t.Context(), k); err != nil {
		t.Fatalf("second store does not see the run: %v", err)
	}
}

// A Change's timer deletes with no condition (a closed period's SLA
// timers, set or not) are one statement; a conditional one keeps its own.
func TestUnconditionalTimerDeletesAreOneStatement(t *testing.T) {
	due := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	c := store.Change{TimerDeletes: []store.TimerDelete{{Key: "a"}, {Key: "b", ExpectDueAt: &due}, {Key: "c"}, {Key: "d"}}}
	ops, err := plan(c)
	if err != nil {
		t.Fatal(err)
	}
	var deletes []string
	for _, o := range ops {
		if strings.HasPrefix(o.query, "DELETE FROM timers") {
			deletes = append(deletes, o.query)
		}
	}
	if len(deletes) != 2 || deletes[0] != `DELETE FROM timers WHERE key IN (?,?,?)` || deletes[1] != sqlTimerClaim {
		t.Fatalf("timer delete statements: %q", deletes)
	}

	ctx := t.Context()
	s := openPath(t, filepath.Join(t.TempDir(), "t.db"))
	k := run.Key{PipelineID: "p", ScheduleID: "daily", Period: "2026-03-01"}
	var put store.Change
	for _, key := range []string{"a", "b", "c", "keep"} {
		put.Timers = append(put.Timers, store.TimerWrite{Timer: store.Timer{Key: key, Kind: "k", Run: k, DueAt: due}})
	}
	if err := s.Commit(ctx, put); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, c); err != nil { // "d" was never set: no error
		t.Fatal(err)
	}
	left, err := s.TimerList(ctx, store.TimerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].Key != "keep" {
		t.Fatalf("timers left: %+v", left)
	}
}
