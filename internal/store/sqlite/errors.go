package sqlite

import (
	"errors"
	"fmt"

	"github.com/interlockhq/interlock/internal/store"

	sqlite "modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"
)

// interpretError maps SQLite's errors onto the port's sentinels.
//
// Only key collisions become store.ErrConflict: a PRIMARY KEY or UNIQUE
// violation is how a create-if-absent (a run's trigger lock, a marker with
// IfAbsent, a ledger entry) loses to a record that is already there, which
// the engine handles by re-reading. Other constraint failures (NOT NULL,
// CHECK, a STRICT type mismatch) are bugs in this package; reporting them
// as conflicts would send the caller into a retry loop that can never win.
//
// The driver's error stays in the chain so logs keep SQLite's message.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlitelib.SQLITE_CONSTRAINT_PRIMARYKEY, sqlitelib.SQLITE_CONSTRAINT_UNIQUE:
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		}
	}
	return err
}
