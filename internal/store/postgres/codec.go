package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// The row model is sqlstore's, shared with the SQLite store; dialect is
// what PostgreSQL's rows do differently: real booleans, sensor keys as
// bytea. The names below are those this package's statements write it by.
var dialect = sqlstore.Dialect{
	Name:     "postgres",
	Bool:     func(b bool) any { return b },
	Key:      func(s *string) any { return sqlstore.BytesCol{S: s} },
	KeyArg:   func(k string) any { return []byte(k) },
	NoRows:   pgx.ErrNoRows,
	Numbered: true,
	IsTrue:   func(col string) string { return col },
}

type scanner = sqlstore.Scanner

// timeCol scans a nullable nanosecond column (sqlstore.TimeCol).
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(v any) error { return sqlstore.TimeCol{T: c.t}.Scan(v) }

func queryNanos(t time.Time) int64 { return sqlstore.QueryNanos(t) }

// encoder encodes a commit's rows with sqlstore's codec, keeping the first
// error (err) for the commit to check once.
type encoder struct{ err error }

// codec is the shared encoder carrying e's first error; done keeps its
// error back in e.
func (e *encoder) codec() sqlstore.Encoder  { return sqlstore.Encoder{D: &dialect, Err: e.err} }
func (e *encoder) done(c *sqlstore.Encoder) { e.err = c.Err }

func (e *encoder) time(field string, t time.Time) any {
	c := e.codec()
	defer e.done(&c)
	return c.Time(field, t)
}

func (e *encoder) object(field string, o sensor.Object) any {
	c := e.codec()
	defer e.done(&c)
	return c.Object(field, o)
}

func (e *encoder) json(field string, v any, n int) any {
	c := e.codec()
	defer e.done(&c)
	return c.JSON(field, v, n)
}

// encodeRow encodes one record with sqlstore's encode function for it.
func encodeRow[T any](e *encoder, encode func(*sqlstore.Encoder, T) []any, x T) []any {
	c := e.codec()
	defer e.done(&c)
	return encode(&c, x)
}
