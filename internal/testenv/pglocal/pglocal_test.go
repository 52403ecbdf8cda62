package pglocal_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/testenv/pglocal"
)

func TestMain(m *testing.M) { pglocal.Main(m) }

// TestSchemaPerTest: a URL's connections create their tables in the test's
// own schema, which another test's URL does not see.
func TestSchemaPerTest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := pglocal.URL(t), pglocal.URL(t)
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(context.Background())
	if _, err := ca.Exec(ctx, `CREATE TABLE probe (x int)`); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(context.Background())
	var n int
	if err := cb.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'probe' AND schemaname = current_schema()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the second schema sees the first's table")
	}
	if err := ca.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'probe' AND schemaname = current_schema()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("the first schema does not see its own table")
	}
}

func TestWithSearchPath(t *testing.T) {
	got, err := pglocal.WithSearchPath("postgres://u@h:5/db?sslmode=disable", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "postgres://u@h:5/db?search_path=s1&sslmode=disable"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestOwnCrashAndStart: a test's own PostgreSQL refuses connections after
// Crash, and after Start answers on the same URL with every commit
// acknowledged before the crash.
func TestOwnCrashAndStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	own := pglocal.StartOwn(t)
	c, err := pgx.Connect(ctx, own.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `CREATE TABLE acked (x int)`); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := c.Exec(ctx, `INSERT INTO acked VALUES ($1)`, i); err != nil {
			t.Fatal(err)
		}
	}
	own.Crash(t)
	if err := c.Ping(ctx); err == nil {
		t.Fatal("a connection still answers after Crash")
	}
	c.Close(context.Background())
	cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
	if c, err := pgx.Connect(cctx, own.URL()); err == nil {
		c.Close(context.Background())
		t.Fatal("a new connection succeeds after Crash")
	}
	ccancel()
	own.Start(t)
	c, err = pgx.Connect(ctx, own.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM acked`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 100 {
		t.Fatalf("%d of 100 acknowledged rows after the crash", n)
	}
}
