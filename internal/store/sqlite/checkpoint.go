package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"

	sqlite "modernc.org/sqlite"
)

// Checkpoints off the commit path. In WAL mode every commit appends pages
// to the -wal file, and a checkpoint copies them back into the database
// file, syncs it, and lets the log start over. By default SQLite runs it
// inside the commit that takes the log past 1,000 pages: that one commit
// writes up to 1,000 pages into the database file and waits for two more
// fsyncs — about every 50th sensor decision, and the p99 of sensor →
// decision was those commits and the ones queued behind them. Here the
// writer never checkpoints (wal_autocheckpoint=0): a goroutine with its
// own connection does, in PASSIVE mode, which runs beside the writer
// without taking its lock. A commit is acknowledged when its WAL frames
// are synced, as before; the checkpoint only moves durable pages.

// checkpointPages is how many pages the writer appends to the WAL before
// the checkpointer runs (SQLite's own autocheckpoint threshold).
const checkpointPages = 1000

// walRestartPages: the log starts over from its beginning only when a
// write begins while every frame in it has been copied. A PASSIVE
// checkpoint copies the frames that were in the log when it began, and a
// writer that keeps appending meanwhile (every few milliseconds at 500
// writes/s) can keep that from ever being true, so the file would grow
// without bound. Once the log holds this many pages, the checkpointer
// copies what was appended during its pass with commits held back (a few
// pages: the pass before copied the bulk), and the next write starts the
// log over.
const walRestartPages = 4 * checkpointPages

// walMaxPages bounds the log for sure. A pass that is slow (its fsync of
// the database file waits on a busy disk) lets the writer append all the
// while; past this many pages the writer itself, before acknowledging its
// commit, checkpoints what the log holds — as SQLite's autocheckpoint
// would — so the file never grows past it by more than one transaction.
// With durable commits the checkpointer keeps the log well below it.
const walMaxPages = 2 * walRestartPages

// checkpointer runs PASSIVE checkpoints when the writer has appended
// checkpointPages since the last one.
type checkpointer struct {
	db      *sql.DB // one connection, used only here
	writing *sync.Mutex
	kick    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	pages   int // appended since the last kick; only the writer touches it
	// written counts the pages the writer appended in all; base is what
	// written was when the log last held no frame, as the checkpointer
	// last saw it (at most that: written-base overestimates the log).
	written, base atomic.Int64
}

func newCheckpointer(db *sql.DB, writing *sync.Mutex) *checkpointer {
	c := &checkpointer{db: db, writing: writing, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), stopped: make(chan struct{})}
	go c.loop()
	return c
}

func (c *checkpointer) loop() {
	defer close(c.stopped)
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		if err := c.pass(); err != nil {
			// Nothing is lost: the pages stay in the WAL, readable and
			// durable, and the next pass copies them. Close checkpoints
			// whatever is left.
			continue
		}
	}
}

// pass checkpoints what the log holds and, when it has grown past
// walRestartPages, the rest with commits held back so that it can start
// over.
func (c *checkpointer) pass() error {
	before := c.written.Load()
	log, _, err := c.checkpoint()
	if err != nil {
		return err
	}
	// The log held log frames when the pass began, and the writer had
	// appended before by then (or more: the estimate errs high).
	c.base.Store(before - int64(log))
	if log < walRestartPages {
		return nil
	}
	c.writing.Lock()
	defer c.writing.Unlock()
	return c.catchUp()
}

// catchUp checkpoints the whole log while the writer is held back (the
// caller holds writing), so the next commit starts the log over.
func (c *checkpointer) catchUp() error {
	written := c.written.Load()
	if _, _, err := c.checkpoint(); err != nil {
		return err
	}
	c.base.Store(written)
	return nil
}

// checkpoint runs one PASSIVE checkpoint and returns the frames in the
// log and how many of them are now in the database file.
func (c *checkpointer) checkpoint() (log, done int, err error) {
	var busy int
	if err := c.db.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done); err != nil {
		return 0, 0, fmt.Errorf("sqlite: checkpoint: %w", err)
	}
	return log, done, nil
}

// wrote counts the pages the writer connection appended to the WAL since
// it last counted, and wakes the checkpointer every checkpointPages.
// Called by the writer, on the writer connection, after a transaction,
// holding writing.
func (c *checkpointer) wrote(conn *sql.Conn) {
	_ = conn.Raw(func(dc any) error {
		if st, ok := dc.(sqlite.DBStatus); ok {
			if n, _, err := st.Status(sqlite.DBStatusCacheWrite, true); err == nil {
				c.pages += n
				c.written.Add(int64(n))
			}
		}
		return nil
	})
	if c.written.Load()-c.base.Load() > walMaxPages {
		// The checkpointer fell behind: catch up here, on the commit
		// path (the writer holds writing). An error leaves the pages in
		// the WAL, durable; the next commit tries again.
		_ = c.catchUp()
	}
	if c.pages < checkpointPages {
		return
	}
	c.pages = 0
	select {
	case c.kick <- struct{}{}:
	default: // a pass is already due
	}
}

// close stops the checkpointer and closes its connection.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.stopped
	return c.db.Close()
}

// onWriter runs f on the writer connection, then counts what it appended
// to the WAL.
func (s *Store) onWriter(ctx context.Context, f func(*sql.Conn) error) error {
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	defer conn.Close()
	err = f(conn)
	if s.ckpt != nil {
		s.ckpt.wrote(conn)
	}
	return err
}
