// Package postgres is the store.Store backend on PostgreSQL, through pgx
// v5 and a pgxpool connection pool: the store several `serve` processes
// can share.
//
// It owns the schema and its migrations (migrate.go: embedded, versioned,
// applied once under an advisory lock however many processes start at
// once), the mapping of PostgreSQL's errors onto the port's sentinels, and
// the transaction discipline: a Commit is one READ COMMITTED transaction
// whose statements carry the port's conditions (a version in the WHERE
// clause, INSERT … ON CONFLICT DO NOTHING for a record that must be
// absent, the count of rows touched checked by the server), sent in one
// round trip (a pgx batch, the server committing at its end: no lock is
// held while the client reads results) and retried whole on a deadlock or
// serialization failure (commit.go). Reads are single
// statements on the pool, each seeing one committed state. Like every
// store it never reads the clock and decides nothing.
package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/pgurl"
)

var _ store.Store = (*Store)(nil)

// Store is the PostgreSQL backend. It is safe for concurrent use, and
// several processes may share one database.
type Store struct {
	pool      *pgxpool.Pool
	closeOnce sync.Once
}

// Open connects to the database at rawURL (postgres:// or postgresql://,
// libpq's parameters), applies the migrations it lacks, and returns the
// store. Tables live in the connection's current schema (the first of
// search_path), so one database can hold several stores.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	if err := CheckURL(rawURL); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", pgurl.Redact(rawURL), err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %w", pgurl.Redact(rawURL), err)
	}
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %s: %w", pgurl.Redact(rawURL), err)
	}
	return s, nil
}

// Close closes the pool. It waits for connections in use to be returned.
func (s *Store) Close() error {
	s.closeOnce.Do(s.pool.Close)
	return nil
}
