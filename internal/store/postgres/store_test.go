package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/storetest"
	"github.com/interlockhq/interlock/internal/testenv/pglocal"
)

func TestMain(m *testing.M) { pglocal.Main(m) }

// open opens a store on u for t, closed when t ends.
func open(t testing.TB, u string) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pool keeps the schemas tests are done with, emptied, for the next test:
// emptying a test's few rows takes a millisecond or two, while creating
// the tables and indexes of a new schema takes some 85 ms — and storetest
// makes about 270 stores.
var pool struct {
	sync.Mutex
	free []string
}

// schemaURL gives t the URL of an empty, migrated schema, from the pool
// or new, and empties it back into the pool when t ends (after the
// stores t opened on it are closed: cleanups run last-registered first).
func schemaURL(t testing.TB) string {
	t.Helper()
	pool.Lock()
	var u string
	if n := len(pool.free); n > 0 {
		u, pool.free = pool.free[n-1], pool.free[:n-1]
	}
	pool.Unlock()
	if u == "" {
		u = pglocal.KeptURL(t)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := empty(ctx, u); err != nil {
			t.Errorf("empty the schema for the next test: %v", err)
			return // not reused
		}
		pool.Lock()
		pool.free = append(pool.free, u)
		pool.Unlock()
	})
	return u
}

// empty deletes every row of the schema's tables (those that exist: a
// test may not have migrated it) but the migrations', and sets the event
// shard counters back to 0, as a new schema has them.
func empty(ctx context.Context, u string) error {
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename NOT IN ('schema_migrations', 'event_shards')`)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var b pgx.Batch
	for _, name := range tables {
		b.Queue(`DELETE FROM ` + pgx.Identifier{name}.Sanitize())
	}
	b.Queue(`UPDATE event_shards SET seq = 0`)
	return conn.SendBatch(ctx, &b).Close()
}

// urls remembers the schema URL of each store storetest made, for Reopen.
var urls sync.Map // *Store → string

// TestStore runs the conformance suite against a real PostgreSQL, an
// empty schema per subtest.
func TestStore(t *testing.T) {
	storetest.RunWithOptions(t, storetest.Options{
		New: func(t *testing.T) store.Store {
			u := schemaURL(t)
			s := open(t, u)
			urls.Store(s, u)
			return s
		},
		Reopen: func(t *testing.T, s store.Store) store.Store {
			u, _ := urls.Load(s.(*Store))
			s.Close()
			r := open(t, u.(string))
			urls.Store(r, u)
			return r
		},
	})
}
