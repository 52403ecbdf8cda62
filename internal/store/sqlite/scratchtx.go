package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// A scratch store's Commits share one transaction (OpenScratch). Nothing
// else reads or writes its database — it is in memory, on the store's
// one connection — and nothing of it is promised to outlive the process
// before Close: a transaction of its own per Change paid for its BEGIN,
// for its COMMIT writing every page it touched back to the database and
// walking the page cache, and for copying each of those pages to the
// journal first, for nothing the store promises. So a Change's statements
// run in a transaction that stays open, where every later read on the
// connection sees them, which is all a commit's success means here. The
// transaction is committed every scratchBatch Changes (it bounds the
// journal, which holds a copy of every page the transaction changed),
// before Expire starts a transaction of its own, and at Close before the
// database is written to its file.
//
// A Change that fails (a condition, a full database) has to write
// nothing, and a savepoint around each Change would copy every page it
// touches to a second journal: instead the transaction is rolled back and
// the Changes that succeeded in it are applied again, in their order, on
// the state they were applied to first (their conditions checked in SQL,
// not from the pipeline cache, which may have moved on), in a
// transaction committed at once. In a simulation conflicts are rare.
// Should that fail, the store refuses every later Commit, and Close, with
// the reason, and leaves its file as the last Close wrote it.

// scratchBatch is how many Changes a scratch store's transaction takes
// before it is committed.
const scratchBatch = 64

// inScratchTx applies f in the scratch store's open transaction, opening
// it if needed.
func (s *Store) inScratchTx(t *wtx, f func(*wtx) error) error {
	w := t.w
	if w.lost != nil {
		return w.lost
	}
	if w.changes == 0 {
		if _, err := t.exec(sqlBegin); err != nil {
			return fmt.Errorf("sqlite: begin: %w", interpretError(err))
		}
	}
	w.changes++
	err := f(t)
	if err != nil {
		// Undo what f wrote: the whole transaction, then the Changes
		// before it again.
		t.rollback()
		if rerr := s.replayScratch(t); rerr != nil {
			return s.lose(t, errors.Join(err, rerr))
		}
		return s.full(err)
	}
	w.applied = append(w.applied, f)
	if w.changes >= scratchBatch {
		return s.commitScratchTx(t)
	}
	return nil
}

// replayScratch applies again, in a transaction that it commits, the
// Changes of the scratch store's transaction that was rolled back.
func (s *Store) replayScratch(t *wtx) error {
	w := t.w
	fs := w.applied
	w.changes, w.applied = 0, nil
	if len(fs) == 0 {
		return nil
	}
	if _, err := t.exec(sqlBegin); err != nil {
		return fmt.Errorf("sqlite: begin: %w", interpretError(err))
	}
	t.replay = true
	defer func() { t.replay = false }()
	for _, f := range fs {
		if err := f(t); err != nil {
			t.rollback()
			return fmt.Errorf("a Change applied before failed when applied again: %w", err)
		}
	}
	if _, err := t.exec(sqlCommit); err != nil {
		t.rollback()
		return fmt.Errorf("sqlite: commit: %w", interpretError(err))
	}
	return nil
}

// commitScratchTx commits the scratch store's open transaction, if there
// is one.
func (s *Store) commitScratchTx(t *wtx) error {
	w := t.w
	if w.lost != nil {
		return w.lost
	}
	if w.changes == 0 {
		return nil
	}
	if _, err := t.exec(sqlCommit); err != nil {
		return s.lose(t, interpretError(err))
	}
	w.changes, w.applied = 0, nil
	return nil
}

// lose ends a scratch store's transaction that failed as a whole and
// makes the store refuse every later write with the reason.
func (s *Store) lose(t *wtx, err error) error {
	t.rollback()
	// The Changes rolled back may have left rows in the caches.
	s.forgetCached()
	t.w.changes, t.w.applied = 0, nil
	t.w.lost = fmt.Errorf("sqlite: the scratch database of %s takes no more changes, and the last ones acknowledged "+
		"(up to %d) may be lost: %w", s.path, scratchBatch, s.full(err))
	return t.w.lost
}

// settleScratch commits a scratch store's open transaction on conn, the
// writer connection, before something else uses the connection for a
// transaction of its own or for the whole database (Expire, Close). It
// does nothing on any other store.
func (s *Store) settleScratch(ctx context.Context, conn *sql.Conn) error {
	if s.maxPages == 0 {
		return nil
	}
	return conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("sqlite: the driver's connection (%T) is not a driver.Conn", dc)
		}
		return s.commitScratchTx(&wtx{ctx: context.WithoutCancel(ctx), conn: c, w: &s.wstmts})
	})
}
