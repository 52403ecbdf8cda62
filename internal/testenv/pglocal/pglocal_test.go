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
