package sqlite

import (
	"database/sql"

	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// The row model (codec, column lists, scans and encodings) is sqlstore's,
// shared with the PostgreSQL store; dialect is what SQLite's rows do
// differently: STRICT tables have no boolean type, so a bool is 0 or 1.
var dialect = sqlstore.Dialect{
	Name:   "sqlite",
	Bool:   func(b bool) any { return boolInt(b) },
	Key:    func(s *string) any { return s },
	KeyArg: func(k string) any { return k },
	NoRows: sql.ErrNoRows,
	IsTrue: func(col string) string { return col + " = 1" },
	Hinted: true,
}

// boolInt is how a bool is stored.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
