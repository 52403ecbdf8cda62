package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"
)

// A scratch store's database is in memory (OpenScratch); its file holds it
// from a Close to the next open. Both copies go through SQLite's online
// backup, page by page, so the file is an ordinary database file that Open
// (or the sqlite3 shell) reads as any other.

// backupConn is the driver connection's backup API (modernc.org/sqlite).
type backupConn interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
	NewRestore(srcURI string) (*sqlite.Backup, error)
}

// load copies the file at s.path, when there is one, into the in-memory
// database, before the migrations run.
func (s *Store) load(ctx context.Context) error {
	st, err := os.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a directory", s.path)
	}
	if err := s.backup(ctx, func(c backupConn) (*sqlite.Backup, error) { return c.NewRestore(fileURI(s.path)) }); err != nil {
		return fmt.Errorf("read the scratch database: %w", s.full(err))
	}
	return nil
}

// save writes the in-memory database to s.path, replacing the file's
// content.
func (s *Store) save() error {
	if err := s.backup(context.Background(), func(c backupConn) (*sqlite.Backup, error) { return c.NewBackup(fileURI(s.path)) }); err != nil {
		return fmt.Errorf("sqlite: write the scratch database to %s: %w", s.path, err)
	}
	return nil
}

// backup runs the whole of the backup start begins, on the one connection.
func (s *Store) backup(ctx context.Context, start func(backupConn) (*sqlite.Backup, error)) error {
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// A copy of the database takes what its transaction holds
	// (scratchtx.go); a transaction that failed writes nothing.
	if err := s.settleScratch(ctx, conn); err != nil {
		return err
	}
	return conn.Raw(func(dc any) error {
		c, ok := dc.(backupConn)
		if !ok {
			return fmt.Errorf("the driver's connection (%T) has no backup API", dc)
		}
		b, err := start(c)
		if err != nil {
			return err
		}
		_, err = b.Step(-1)
		return errors.Join(err, b.Finish())
	})
}

// full names the scratch store's size limit in an error that reached it
// (SQLITE_FULL): the memdb database holds at most maxPages pages
// (scratchParams). Other errors, and any error of a store on a file, are
// returned as they are.
func (s *Store) full(err error) error {
	var se *sqlite.Error
	if s.maxPages == 0 || !errors.As(err, &se) || se.Code()&0xff != sqlitelib.SQLITE_FULL {
		return err
	}
	return fmt.Errorf("the scratch database of %s is full: it is held in memory, where it may grow to %d MiB; "+
		"simulate fewer pipelines or a shorter span: %w", s.path, s.maxPages*4096>>20, err)
}
