package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// On a store with one connection (an in-memory or scratch database) the
// list reads and Facts run on that connection's driver, with the
// statements prepared there once (writerStmts, shared with the Commit
// path: only code holding the connection touches them), as a Commit's
// statements do (wtx.go). Through database/sql each read took the
// statement for the connection, converted every argument and, per column
// of every row, converted the driver's value by reflection into its
// destination and locked the rows around it: in a simulation about a
// fifth of what the reads cost. The SQL is the same, and so is what a row
// scans to (values.Scan converts as database/sql does:
// TestRawRowsScanAsDatabaseSQL).

// onDriver runs f on p's one connection, at the driver. ctx must not end
// (the callers detach it once checked): the reads are short, and watching
// it cost the driver a goroutine per statement.
func (p *pool) onDriver(ctx context.Context, f func(*wtx) error) error {
	conn, err := p.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("the driver's connection (%T) is not a driver.Conn", dc)
		}
		return f(&wtx{ctx: ctx, conn: c, w: p.wstmts})
	})
}

// rawRows is a query's result as the driver returns it (sqlstore.Rows):
// each row's values, scanned by values.Scan.
type rawRows struct {
	rows driver.Rows
	dest values
	done func()
	err  error
	// objects are the flat JSON objects (details, sensor data) this
	// query's rows decoded so far, by their text: a row holding the same
	// text gets the same value, not decoded again (objectOnce).
	objects map[string]sensor.Object
}

// rows runs a query that returns rows; the caller closes them.
func (t *wtx) rows(query string, args []any) (*rawRows, error) {
	rows, done, err := t.query(query, args)
	if err != nil {
		return nil, err
	}
	return &rawRows{rows: rows, dest: make(values, len(rows.Columns())), done: done}, nil
}

// query runs a statement that returns rows: the driver's rows, and done,
// which closes a statement prepared for this call only (bound), called
// once the rows are closed.
func (t *wtx) query(query string, args []any) (driver.Rows, func(), error) {
	st, nv, done, err := t.bound(query, args)
	if err != nil {
		return nil, nil, err
	}
	q, ok := st.(driver.StmtQueryContext)
	if !ok {
		done()
		return nil, nil, fmt.Errorf("the driver's statement (%T) has no QueryContext", st)
	}
	rows, err := q.QueryContext(t.ctx, nv)
	if err != nil {
		done()
		return nil, nil, err
	}
	return rows, done, nil
}

func (r *rawRows) Next() bool {
	if r.err != nil {
		return false
	}
	if err := r.rows.Next(r.dest); err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = err
		}
		return false
	}
	return true
}

func (r *rawRows) Scan(dest ...any) error { return r.dest.scanWith(r, dest) }

// objectOnce scans v into c, decoding a text this query's rows already
// held once: the watchdog's full reads list thousands of markers whose
// details are a few hundred texts, and the SLA timers' list a few. Only a
// flat object is kept (no '[' or '{' after its first byte): its values are
// scalars, which no caller can change, so rows may share it; any other is
// decoded for its row alone.
func (r *rawRows) objectOnce(c sqlstore.ObjectCol, v driver.Value) error {
	text, ok := v.(string)
	if !ok {
		return c.Scan(v)
	}
	if o, ok := r.objects[text]; ok {
		*c.O = o
		return nil
	}
	if err := c.Scan(v); err != nil {
		return err
	}
	if len(text) > 0 && !strings.ContainsAny(text[1:], "[{") {
		if r.objects == nil {
			r.objects = map[string]sensor.Object{}
		}
		r.objects[text] = *c.O
	}
	return nil
}

func (r *rawRows) Err() error { return r.err }

// Close ends the query (the statement is reset for its next use).
func (r *rawRows) Close() error {
	err := r.rows.Close()
	r.done()
	return err
}

// values is one row's column values as the driver returns them (TEXT a
// string, INTEGER an int64, BLOB a []byte, NULL nil), scanned as
// database/sql's Rows.Scan would into the destinations the scan functions
// use: text into a string or a pointer to one (NULL: nil), an integer
// into an int, an int64 or a bool (0 or 1), text or a blob into a []byte
// of its own, any value into an sql.Scanner, text into a named string
// type, an integer into a named integer type. Any other destination is an
// error (the scan functions use none).
type values []driver.Value

func (v values) Scan(dest ...any) error { return v.scanWith(nil, dest) }

// scanWith is Scan; with rows set, a JSON object column's text is decoded
// once per query (rawRows.objectOnce).
func (v values) scanWith(rows *rawRows, dest []any) error {
	if len(dest) != len(v) {
		return fmt.Errorf("sqlite: %d values scanned into %d destinations", len(v), len(dest))
	}
	for i, d := range dest {
		var err error
		if c, ok := d.(sqlstore.ObjectCol); ok && rows != nil {
			err = rows.objectOnce(c, v[i])
		} else {
			err = scanValue(v[i], d)
		}
		if err != nil {
			return fmt.Errorf("sqlite: column %d: %w", i, err)
		}
	}
	return nil
}

func scanValue(v driver.Value, d any) error {
	switch d := d.(type) {
	case sql.Scanner:
		return d.Scan(v)
	case *string:
		s, err := text(v)
		*d = s
		return err
	case **string:
		if v == nil {
			*d = nil
			return nil
		}
		s, err := text(v)
		*d = &s
		return err
	case *int64:
		n, err := integer(v, 64)
		*d = n
		return err
	case *int:
		n, err := integer(v, strconv.IntSize)
		*d = int(n)
		return err
	case *bool:
		b, err := boolean(v)
		*d = b
		return err
	case *[]byte:
		switch x := v.(type) {
		case nil:
			*d = nil
		case string:
			*d = []byte(x)
		case []byte:
			*d = bytes.Clone(x)
		case int64:
			*d = strconv.AppendInt(nil, x, 10)
		default:
			return fmt.Errorf("cannot scan %T into %T", v, d)
		}
		return nil
	}
	// A named type of one of those kinds (run.State, event.Type, …).
	p := reflect.ValueOf(d)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return fmt.Errorf("cannot scan into %T", d)
	}
	e := p.Elem()
	switch e.Kind() {
	case reflect.String:
		switch x := v.(type) { // not an integer's digits, unlike a string
		case string:
			e.SetString(x)
			return nil
		case []byte:
			e.SetString(string(x))
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := integer(v, e.Type().Bits())
		e.SetInt(n)
		return err
	}
	return fmt.Errorf("cannot scan %T into %T", v, d)
}

// text is a text column's value (database/sql also takes a blob's bytes
// and an integer's decimal digits).
func text(v driver.Value) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	return "", fmt.Errorf("converting %T to a string is unsupported", v)
}

// integer is an integer column's value that fits in bits (database/sql
// also parses text).
func integer(v driver.Value, bits int) (int64, error) {
	switch x := v.(type) {
	case int64:
		if bits < 64 && (x < -1<<(bits-1) || x >= 1<<(bits-1)) {
			return 0, fmt.Errorf("%d does not fit in %d bits", x, bits)
		}
		return x, nil
	case string, []byte:
		s, _ := text(x)
		return strconv.ParseInt(s, 10, bits)
	}
	return 0, fmt.Errorf("converting %T to an integer is unsupported", v)
}

// boolean is a boolean column's value: 0 or 1 (driver.Bool's rule).
func boolean(v driver.Value) (bool, error) {
	b, err := driver.Bool.ConvertValue(v)
	if err != nil {
		return false, err
	}
	return b.(bool), nil
}
