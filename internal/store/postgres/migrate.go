package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/store/sqlmigrate"
)

// The schema is a numbered series of SQL files, embedded so a binary
// always carries the schema it was built for. A migration is never edited
// once released: a change is a new file.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

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
	ms, err := sqlmigrate.Load(migrationFS, "migrations")
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
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		return nil
	})
}
