package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"

	"github.com/interlockhq/interlock/internal/store/sqlmigrate"

	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// The schema is a numbered series of SQL files, embedded so a binary
// always carries the schema it was built for. A migration is never edited
// once released: a change is a new file.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded migrations in order. Numbers must run
// 1, 2, 3 … with no gap or duplicate: a gap usually means a file was lost
// in a merge, and applying around it would give a schema no test has seen.
func migrations() ([]sqlmigrate.Migration, error) {
	return sqlmigrate.Load(migrationFS, "migrations")
}

// migrate applies the pending migrations in one transaction: a database is
// either at the old schema or the new one, never half-way, even if the
// process dies during Open. The write lock (BEGIN IMMEDIATE) also makes two
// processes opening the same new file at once apply each migration once.
//
// schema_migrations records no time: the store never reads the clock.
func migrate(ctx context.Context, db *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return migrateTo(ctx, db, ms)
}

// migrateTo applies ms, the first len(ms) migrations in order. Tests pass
// a prefix to build a database as an older binary left it.
func migrateTo(ctx context.Context, db *sql.DB, ms []sqlmigrate.Migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER NOT NULL PRIMARY KEY,
		name    TEXT    NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if current > len(ms) {
		// A newer binary migrated this file. Running old code on a newer
		// schema could write rows the newer code misreads.
		return fmt.Errorf("migrate: database schema is at version %d, newer than this binary's %d: use a newer interlock", current, len(ms))
	}
	if current == len(ms) {
		// Already migrated: commit nothing, so opening is a pure read.
		return nil
	}
	for _, m := range ms[current:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
		if step := migrationSteps[m.Version]; step != nil {
			if err := step(ctx, tx); err != nil {
				return fmt.Errorf("migrate: apply %s: %w", m.Name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, m.Version, m.Name); err != nil {
			return fmt.Errorf("migrate: record %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// migrationSteps are Go steps run after a migration's SQL, in the same
// transaction, for what SQL cannot compute the way the code does.
var migrationSteps = map[int]func(context.Context, *sql.Tx) error{
	6: fillSensorPeriods,
	7: shardEvents,
	8: moveAlertMarkers,
	9: keepPauseWindows,
}

// fillSensorPeriods sets the period column (0006) of the sensors stored
// before it existed. A key with no '#' names no period; the others are
// parsed as a write would be.
func fillSensorPeriods(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT pipeline_id, key FROM sensors WHERE instr(key, '#') > 0`)
	if err != nil {
		return err
	}
	type row struct{ pipeline, key, period string }
	var fill []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.pipeline, &r.key); err != nil {
			rows.Close()
			return err
		}
		if p, ok := sqlstore.SensorPeriod(r.key).(string); ok {
			r.period = p
			fill = append(fill, r)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, r := range fill {
		if _, err := tx.ExecContext(ctx, `UPDATE sensors SET period = ? WHERE pipeline_id = ? AND key = ?`, r.period, r.pipeline, r.key); err != nil {
			return err
		}
	}
	return nil
}
