package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/interlockhq/interlock/internal/store"
)

// Group commit. A durable commit costs one fsync of the WAL, and the disk
// does one at a time: while one is in progress, Commits from other
// goroutines queue behind it (serve's HTTP handlers, its timer workers).
// Instead of committing them one by one after the fsync — each waiting for
// all the fsyncs ahead of it — the next Commit to run takes every queued
// one into the same transaction and makes it durable with one fsync.
//
// Each Change keeps its own conditions and its all-or-nothing rule: it is
// applied inside a SAVEPOINT, and a Change whose condition fails is rolled
// back to that savepoint and fails alone, with the same ErrConflict it
// would have had on its own; the others commit. The Changes of a group are
// applied in the order their Commits queued, so each sees the ones before
// it exactly as if they had committed first. A Commit returns only after
// the group's COMMIT — the shared fsync — has returned: an acknowledged
// write is as durable as it was when it had a transaction of its own.
//
// There is no committer goroutine: the Commit that finds no group running
// leads one (it runs the transaction for everyone it took), then hands the
// lead to the first Commit still queued, so no caller serves others for
// longer than one transaction.

// maxGroup bounds how many Changes one transaction takes (each touches at
// most store.MaxChangeRecords records), so a group's transaction — and the
// write lock it holds against other processes — stays short.
const maxGroup = 64

// groupHook, when set (by tests), is told the size of every group.
var groupHook func(size int)

// States of a queued Commit: a leader takes it into a group, or its caller
// gives up waiting (its context ended) before that.
const (
	pendingQueued int32 = iota
	pendingTaken
	pendingAbandoned
)

// pending is one Commit waiting for a group.
type pending struct {
	ops   []op
	hooks cacheHooks
	state atomic.Int32
	// done receives exactly one outcome: the Commit's result, or the lead.
	done chan outcome
}

type outcome struct {
	err  error
	lead bool // the receiver leads the next group (its own Change first)
}

// committer queues Commits for the leader.
type committer struct {
	mu      sync.Mutex
	queue   []*pending
	leading bool
	// writing is held by the leader for the duration of a transaction;
	// the checkpointer takes it to hold commits back (checkpoint.go).
	writing sync.Mutex
}

// commitOps commits one planned Change, alone or in a group.
func (s *Store) commitOps(ctx context.Context, ops []op, h cacheHooks) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := &pending{ops: ops, hooks: h, done: make(chan outcome, 1)}
	g := &s.group
	g.mu.Lock()
	if !g.leading {
		g.leading = true
		p.state.Store(pendingTaken)
		g.mu.Unlock()
		return s.lead(ctx, p)
	}
	g.queue = append(g.queue, p)
	g.mu.Unlock()
	var o outcome
	select {
	case o = <-p.done:
	case <-ctx.Done():
		if p.state.CompareAndSwap(pendingQueued, pendingAbandoned) {
			// Not taken into any group: nothing of it was written.
			return ctx.Err()
		}
		// Already in a group's transaction: its outcome is the group's,
		// decided within one transaction; wait for it.
		o = <-p.done
	}
	if o.lead {
		return s.lead(ctx, p)
	}
	return o.err
}

// lead runs one group whose first Change is first's, hands the lead on,
// and returns first's result.
func (s *Store) lead(ctx context.Context, first *pending) error {
	g := &s.group
	// The batch is taken once the transaction can start: Commits that
	// queued while a checkpoint held the writer back join it.
	g.writing.Lock()
	g.mu.Lock()
	batch := g.take([]*pending{first})
	g.mu.Unlock()
	for _, p := range batch {
		for _, f := range p.hooks.before {
			f()
		}
	}
	errs := s.runGroup(ctx, batch)
	for i, p := range batch {
		for _, f := range p.hooks.after {
			f(errs[i])
		}
	}
	g.writing.Unlock()
	if groupHook != nil {
		groupHook(len(batch))
	}

	// Hand the lead to the first Commit still waiting before answering
	// the others, so the next transaction starts at once.
	g.mu.Lock()
	var next *pending
	for len(g.queue) > 0 && next == nil {
		q := g.queue[0]
		g.queue[0] = nil
		g.queue = g.queue[1:]
		if q.state.CompareAndSwap(pendingQueued, pendingTaken) {
			next = q
		}
	}
	if next == nil {
		g.leading = false
	}
	g.mu.Unlock()
	if next != nil {
		next.done <- outcome{lead: true}
	}
	for i, p := range batch[1:] {
		p.done <- outcome{err: errs[i+1]}
	}
	return errs[0]
}

// take moves queued Commits into batch, up to maxGroup. Called with mu held.
func (g *committer) take(batch []*pending) []*pending {
	n := 0
	for n < len(g.queue) && len(batch) < maxGroup {
		q := g.queue[n]
		g.queue[n] = nil
		n++
		if q.state.CompareAndSwap(pendingQueued, pendingTaken) {
			batch = append(batch, q)
		}
	}
	g.queue = g.queue[n:]
	if len(g.queue) == 0 {
		g.queue = nil // let the backing array go
	}
	return batch
}

// runGroup commits batch and returns each Change's result.
func (s *Store) runGroup(ctx context.Context, batch []*pending) []error {
	errs := make([]error, len(batch))
	// A Change taken into a transaction is committed or refused whatever
	// becomes of its caller's context (checked before it queued): a
	// group's transaction belongs to no one caller, and one caller's
	// cancellation must not roll back the others' Changes. Alone, the
	// same rule keeps the answer simple — an error from a context means
	// nothing was written — and spares the driver's watch of the context
	// on every statement.
	ctx = context.WithoutCancel(ctx)
	if len(batch) == 1 {
		errs[0] = s.commitAlone(ctx, batch[0].ops)
		return errs
	}
	ok, err := s.commitGroup(ctx, batch, errs)
	if !ok {
		// The transaction could not keep the Changes apart (a statement
		// failed in a way a savepoint does not undo, or the savepoints
		// themselves failed): nothing was written; commit each alone, so
		// a failing Change fails alone.
		for i, p := range batch {
			errs[i] = s.commitAlone(ctx, p.ops)
		}
		return errs
	}
	if err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}

// commitAlone applies one Change in a transaction of its own.
func (s *Store) commitAlone(ctx context.Context, ops []op) error {
	return s.inWriteTx(ctx, func(t *wtx) error {
		for _, o := range ops {
			if err := o.apply(t); err != nil {
				return err
			}
		}
		return nil
	})
}

// The savepoint around each Change of a group.
const (
	sqlSavepoint  = "SAVEPOINT change"
	sqlRelease    = "RELEASE change"
	sqlRollbackTo = "ROLLBACK TO change"
)

// errUnkept ends a group's transaction that could not keep its Changes
// apart (commitGroup).
var errUnkept = errors.New("sqlite: a group's Changes could not be kept apart")

// commitGroup applies every Change of batch in one transaction, each in a
// savepoint, recording in errs the Changes whose conditions failed. ok is
// false when the transaction was rolled back without a verdict for each
// Change (the caller then commits them one by one); otherwise err is the
// COMMIT's failure, shared by every Change that had not failed.
func (s *Store) commitGroup(ctx context.Context, batch []*pending, errs []error) (ok bool, err error) {
	err = s.inWriteTx(ctx, func(t *wtx) error {
		exec := func(q string) bool {
			_, err := t.exec(q)
			return err == nil
		}
		for i, p := range batch {
			if !exec(sqlSavepoint) {
				return errUnkept
			}
			var failed error
			for _, o := range p.ops {
				if failed = o.apply(t); failed != nil {
					break
				}
			}
			kept := true
			switch {
			case failed == nil:
				kept = exec(sqlRelease)
			case errors.Is(failed, store.ErrConflict):
				// A failed condition is a statement that wrote nothing
				// (a WHERE that matched no row, a key that exists): the
				// transaction is intact; undo this Change's earlier
				// statements and carry on with the next Change.
				kept = exec(sqlRollbackTo) && exec(sqlRelease)
			default:
				kept = false
			}
			if !kept {
				return errUnkept
			}
			if err := verdict(t, errs, i, failed); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errUnkept) {
		clear(errs)
		return false, nil
	}
	return true, err
}

// verdict records a group's Change i's failed condition in errs. Applied
// again (a scratch store's replay, scratchtx.go), the Change was already
// answered from errs by the leader that first applied it, which may still
// be reading them: errs is not written, and the same state must give the
// same verdict.
func verdict(t *wtx, errs []error, i int, failed error) error {
	if !t.replay {
		errs[i] = failed
		return nil
	}
	if (failed == nil) != (errs[i] == nil) {
		return fmt.Errorf("sqlite: a Change of a group was answered %v, and %v when applied again", errs[i], failed)
	}
	return nil
}
