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
// absent), sent in one round trip (a pgx batch) and retried whole on a
// deadlock or serialization failure (commit.go). Reads are single
// statements on the pool, each seeing one committed state. Like every
// store it never reads the clock and decides nothing.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/interlockhq/interlock/internal/store"
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
		return nil, fmt.Errorf("postgres: %s: %w", Redact(rawURL), err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %w", Redact(rawURL), err)
	}
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %s: %w", Redact(rawURL), err)
	}
	return s, nil
}

// Close closes the pool. It waits for connections in use to be returned.
func (s *Store) Close() error {
	s.closeOnce.Do(s.pool.Close)
	return nil
}

// ErrBadURL: a store URL is not one Open can use.
var ErrBadURL = errors.New("postgres: bad URL")

// CheckURL reports whether raw is a PostgreSQL URL Open can use, without
// connecting: the scheme postgres:// or postgresql://, a host, a database
// name, and parameters pgx understands. `interlock validate` calls it; the
// error never repeats a password.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadURL, redactErr(err, raw))
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("%w: %s: the scheme must be postgres:// or postgresql://", ErrBadURL, Redact(raw))
	}
	if u.Opaque != "" {
		return fmt.Errorf("%w: %s: want postgres://host/database", ErrBadURL, Redact(raw))
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return fmt.Errorf("%w: %s: no host (want postgres://user@host:port/database)", ErrBadURL, Redact(raw))
	}
	if db := strings.TrimPrefix(u.Path, "/"); db == "" && u.Query().Get("dbname") == "" {
		return fmt.Errorf("%w: %s: no database name (want postgres://user@host:port/database)", ErrBadURL, Redact(raw))
	} else if strings.Contains(db, "/") {
		return fmt.Errorf("%w: %s: the database name %q has a slash", ErrBadURL, Redact(raw), db)
	}
	if _, err := pgxpool.ParseConfig(raw); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadURL, Redact(raw), redactErr(err, raw))
	}
	return nil
}

// Redact returns raw with its password replaced, for messages and logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// redactErr is err's text with any password of raw taken out: url.Parse
// and pgx quote the URL they failed on.
func redactErr(err error, raw string) string {
	msg := err.Error()
	if u, perr := url.Parse(raw); perr == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" {
				msg = strings.ReplaceAll(msg, pw, "xxxxx")
			}
		}
	}
	return msg
}
