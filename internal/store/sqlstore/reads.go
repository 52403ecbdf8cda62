package sqlstore

import (
	"errors"
	"fmt"

	"github.com/interlockhq/interlock/internal/store"
)

// Rows is a query's result: *sql.Rows or pgx.Rows. The caller closes it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Get scans the one row of a single-row query; no row is
// store.ErrNotFound. what names the record in errors.
func Get[T any](d *Dialect, row Scanner, scan func(Scanner) (T, error), what string) (T, error) {
	v, err := scan(row)
	if errors.Is(err, d.NoRows) {
		var zero T
		return zero, fmt.Errorf("%w: %s", store.ErrNotFound, what)
	}
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s: read %s: %w", d.Name, what, err)
	}
	return v, nil
}

// List scans every row of rows, the result of a query that failed with
// err or not. An empty result is an empty, non-nil slice, so callers can
// range over it and encode it as [].
func List[T any](d *Dialect, rows Rows, err error, scan func(Scanner) (T, error), what string) ([]T, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: list %s: %w", d.Name, what, err)
	}
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: list %s: %w", d.Name, what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: list %s: %w", d.Name, what, err)
	}
	return out, nil
}

// PrefixEnd is the least byte string greater than every string that
// starts with prefix, compared byte-wise (SQLite's BINARY collation,
// PostgreSQL's bytea): the prefix with its last byte below 0xff
// incremented and what follows dropped. ok is false when there is none (an
// empty prefix, or one of 0xff bytes only): the range is then unbounded
// above.
func PrefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
