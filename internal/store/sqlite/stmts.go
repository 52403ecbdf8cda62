package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// pool is a database/sql pool with the statements prepared on it, by SQL
// text (reads; a Commit's are wtx.go's). SQLite compiles a statement in about the time it takes to run a
// point lookup, and the store runs a small set of statements over and
// over: compiling each on every call was a sixth of `interlock simulate`'s
// CPU. A prepared statement stays compiled on each connection that ran
// it; database/sql prepares it on a connection the first time it runs
// there, including inside a transaction (Tx.StmtContext).
type pool struct {
	*sql.DB

	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	closed bool

	// detached: reads run without watching their context once it was
	// checked (readContext).
	detached bool
	// wstmts, on the one-connection pool of an in-memory or scratch
	// store, are the statements prepared on its driver connection, which
	// list and Facts read through (rawread.go); nil otherwise.
	wstmts *writerStmts
}

// maxStmts bounds the cache: the list filters make a few shapes of each
// query, and IN lists one per length; past the bound a statement is
// compiled for the call, as every statement used to be.
const maxStmts = 256

func newPool(db *sql.DB) *pool { return &pool{DB: db, stmts: map[string]*sql.Stmt{}} }

// prepared returns the statement for query, preparing it on first use,
// or nil when it is not cached (the cache is full, the pool closed, or
// the statement does not compile — running it unprepared reports that).
//
// Preparing takes a connection from the pool: never call it while
// holding one (inside a transaction on the one-connection writer pool it
// would wait forever); a transaction uses lookup, after the statements it
// runs were prepared (Facts). A Commit's statements are not here: they
// are prepared on the writer's driver connection (wtx.go).
func (p *pool) prepared(query string) *sql.Stmt {
	if st, ok := p.lookupOK(query); ok || st == nil && p.full() {
		return st
	}
	// Prepared outside the lock: a reader waiting for the in-memory
	// store's one connection must not block the writer's lookups.
	st, err := p.DB.PrepareContext(context.Background(), query)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.stmts[query]; ok || p.closed || len(p.stmts) >= maxStmts {
		st.Close()
		return prev
	}
	p.stmts[query] = st
	return st
}

// lookup returns query's statement if it was prepared, or nil.
func (p *pool) lookup(query string) *sql.Stmt {
	st, _ := p.lookupOK(query)
	return st
}

func (p *pool) lookupOK(query string) (*sql.Stmt, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.stmts[query]
	return st, ok
}

// full reports whether no statement can be added.
func (p *pool) full() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed || len(p.stmts) >= maxStmts
}

// readContext is the context a query runs under. A query under a context
// that can end has the driver start a goroutine to interrupt it and
// database/sql another to close its rows: two goroutines, and wake-ups of
// the other core, for a list that takes microseconds (point reads run
// detached already: get). A detached pool (the one connection of an
// in-memory or scratch database, whose reads are all short) checks the
// context before the query and then runs it to its end; a context that
// has ended still fails the query.
func (p *pool) readContext(ctx context.Context) context.Context {
	if !p.detached || ctx.Err() != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// queryRow runs a single-row query.
func (p *pool) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.prepared(query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.DB.QueryRowContext(ctx, query, args...)
}

// query runs a query.
func (p *pool) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = p.readContext(ctx)
	if st := p.prepared(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.DB.QueryContext(ctx, query, args...)
}

// inTx returns query's statement for use in tx if it was prepared, or
// nil: run it unprepared. It never prepares (see prepared).
func (p *pool) inTx(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	if st := p.lookup(query); st != nil {
		return tx.StmtContext(ctx, st)
	}
	return nil
}

// close closes the statements, then the pool.
func (p *pool) close() error {
	p.mu.Lock()
	var errs []error
	for _, st := range p.stmts {
		errs = append(errs, st.Close())
	}
	p.stmts, p.closed = nil, true
	p.mu.Unlock()
	return errors.Join(append(errs, p.DB.Close())...)
}
