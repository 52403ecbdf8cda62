package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"
)

// A Commit's transaction runs on the writer connection's driver directly
// (database/sql's Conn.Raw), with the driver's statements prepared once on
// it. Through database/sql each transaction started a goroutine to watch
// its context (which woke the other core), BEGIN and COMMIT were compiled
// again on every call, and every statement was wrapped for the
// transaction, its arguments converted and its result copied: together a
// tenth of a simulation's commit time, for nothing a commit needs. The
// SQL, its order, BEGIN IMMEDIATE and the COMMIT that makes it durable
// are the same.

// The transaction's own statements.
const (
	sqlBegin    = "BEGIN IMMEDIATE"
	sqlCommit   = "COMMIT"
	sqlRollback = "ROLLBACK"
)

// writerStmts are the statements prepared on the writer's driver
// connection, by SQL text. Only code running on that connection (wtx,
// under Conn.Raw) touches them; the writer pool has one connection, so
// those calls never overlap.
type writerStmts struct {
	conn  driver.Conn // the connection they were prepared on
	stmts map[string]driver.Stmt
	args  []driver.NamedValue // reused by every statement

	// The scratch store's open transaction (scratchtx.go): how many
	// Changes were applied in it, the ones that succeeded (to apply again
	// when it is rolled back), and, once it failed for good, why.
	changes int
	applied []func(*wtx) error
	lost    error
}

// stmt returns query's statement on conn, preparing it on first use.
// cached is false when it was prepared for this call only (the cache is
// full): the caller closes it.
func (w *writerStmts) stmt(ctx context.Context, conn driver.Conn, query string) (st driver.Stmt, cached bool, err error) {
	if w.conn != conn {
		// A new connection (database/sql replaced a broken one): the old
		// statements went with the old connection.
		w.conn, w.stmts = conn, map[string]driver.Stmt{}
	}
	if st, ok := w.stmts[query]; ok {
		return st, true, nil
	}
	if p, ok := conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = conn.Prepare(query)
	}
	if err != nil {
		return nil, false, err
	}
	if len(w.stmts) >= maxStmts {
		return st, false, nil
	}
	w.stmts[query] = st
	return st, true, nil
}

// close closes the statements, on their connection.
func (w *writerStmts) close() error {
	var errs []error
	for _, st := range w.stmts {
		errs = append(errs, st.Close())
	}
	w.stmts = nil
	return errors.Join(errs...)
}

// namedValues converts args as database/sql would (its default
// converter: the driver has no converter of its own), into w.args.
func (w *writerStmts) namedValues(args []any) ([]driver.NamedValue, error) {
	nv := w.args[:0]
	for i, a := range args {
		var v driver.Value
		switch x := a.(type) {
		case nil, int64, string, []byte, bool, float64, time.Time:
			v = x
		case int:
			v = int64(x)
		default:
			var err error
			if v, err = driver.DefaultParameterConverter.ConvertValue(a); err != nil {
				return nil, fmt.Errorf("argument %d: %w", i+1, err)
			}
		}
		nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	w.args = nv
	return nv, nil
}

// wtx is one write transaction on the writer's driver connection.
type wtx struct {
	ctx  context.Context
	conn driver.Conn
	w    *writerStmts
	// replay: the Changes are applied again (scratchtx.go); their
	// conditions are checked in SQL, on the state being rebuilt.
	replay bool
}

// bound returns query's statement and args converted for it; done
// closes a statement prepared for this call only.
func (t *wtx) bound(query string, args []any) (st driver.Stmt, nv []driver.NamedValue, done func(), err error) {
	st, cached, err := t.w.stmt(t.ctx, t.conn, query)
	if err != nil {
		return nil, nil, nil, err
	}
	done = func() {}
	if !cached {
		once := st // a closure over the result would put it on the heap on every call
		done = func() { once.Close() }
	}
	if nv, err = t.w.namedValues(args); err != nil {
		done()
		return nil, nil, nil, err
	}
	return st, nv, done, nil
}

// exec runs a statement that returns no rows and says how many rows it
// changed.
func (t *wtx) exec(query string, args ...any) (int64, error) {
	st, nv, done, err := t.bound(query, args)
	if err != nil {
		return 0, err
	}
	defer done()
	e, ok := st.(driver.StmtExecContext)
	if !ok {
		return 0, fmt.Errorf("the driver's statement (%T) has no ExecContext", st)
	}
	res, err := e.ExecContext(t.ctx, nv)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// count runs a SELECT count(*) and returns the count.
func (t *wtx) count(query string, args ...any) (int64, error) {
	rows, done, err := t.query(query, args)
	if err != nil {
		return 0, err
	}
	defer done()
	dest := []driver.Value{nil}
	err = rows.Next(dest)
	err = errors.Join(err, rows.Close())
	if errors.Is(err, io.EOF) {
		return 0, errors.New("no row")
	}
	if err != nil {
		return 0, err
	}
	n, ok := dest[0].(int64)
	if !ok {
		return 0, fmt.Errorf("count is %T", dest[0])
	}
	return n, nil
}

// inWriteTx runs f in a BEGIN IMMEDIATE transaction on the writer
// connection and commits it when f returns nil; on an error from f, or a
// COMMIT that failed, it rolls back. ctx must not end (runGroup detaches
// it): the transaction belongs to the group, not to one caller.
func (s *Store) inWriteTx(ctx context.Context, f func(*wtx) error) error {
	return s.onWriter(ctx, func(conn *sql.Conn) error {
		return conn.Raw(func(dc any) error {
			c, ok := dc.(driver.Conn)
			if !ok {
				return fmt.Errorf("sqlite: the driver's connection (%T) is not a driver.Conn", dc)
			}
			t := &wtx{ctx: ctx, conn: c, w: &s.wstmts}
			if s.maxPages != 0 {
				return s.inScratchTx(t, f)
			}
			if _, err := t.exec(sqlBegin); err != nil {
				return fmt.Errorf("sqlite: begin: %w", interpretError(err))
			}
			if err := f(t); err != nil {
				t.rollback()
				return s.full(err)
			}
			if _, err := t.exec(sqlCommit); err != nil {
				// A COMMIT that failed may leave the transaction open
				// (SQLITE_BUSY); the connection must leave it closed.
				t.rollback()
				return fmt.Errorf("sqlite: commit: %w", s.full(interpretError(err)))
			}
			return nil
		})
	})
}

// rollback ends the transaction, writing nothing. Its error is dropped,
// as database/sql's deferred Rollback's was: after a COMMIT that ended the
// transaction before failing there is none to roll back.
func (t *wtx) rollback() { t.exec(sqlRollback) }

// closeWriterStmts closes the statements prepared on the writer
// connection, on it.
func (s *Store) closeWriterStmts() error {
	if s.write == nil || s.wstmts.stmts == nil {
		return nil
	}
	conn, err := s.write.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		if dc != any(s.wstmts.conn) {
			return nil // prepared on a connection that is gone
		}
		return s.wstmts.close()
	})
}
