package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The schema is a numbered series of SQL files, embedded so a binary
// always carries the schema it was built for. A migration is never edited
// once released: a change is a new file.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int    // from the file name: 0001_init.sql is 1
	name    string // the file name, recorded for people reading the table
	sql     string
}

// loadMigrations reads the migrations of dir in order. Numbers must run 1,
// 2, 3 … with no gap or duplicate: a gap usually means a file was lost in a
// merge, and applying around it would give a schema no test has seen.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", name)
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected number %d (no gaps, no duplicates)", m.name, i+1)
		}
	}
	return ms, nil
}

// migrateLock is the advisory lock key of migrations, mixed with the
// schema's name so stores in other schemas of one database do not wait
// for each other.
const migrateLock = "interlock schema migrations"

// migrate applies the migrations the database lacks, all in one
// transaction that first takes a transaction-scoped advisory lock: of
// several processes starting at once, one migrates and the others wait,
// then find nothing left to do. A failed migration leaves the schema as it
// was. A database migrated by a newer interlock (a version this binary
// does not know) is refused rather than used.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations(migrationFS, "migrations")
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1 || current_schema(), 0))`, migrateLock); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer NOT NULL PRIMARY KEY,
			name       text    NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("schema_migrations: %w", err)
		}
		if current > len(ms) {
			return fmt.Errorf("the database is at schema version %d, newer than this interlock knows (%d): upgrade interlock", current, len(ms))
		}
		for _, m := range ms[current:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
		}
		return nil
	})
}
