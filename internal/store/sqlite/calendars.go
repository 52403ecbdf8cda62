package sqlite

import (
	"context"
	"fmt"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Calendars, and the conditions a decision puts on the pipeline row and
// the calendars it read (Change.PipelineChecks, Change.CalendarChecks).

var calendarsTable = newVersioned("calendars", []string{"name"},
	[]string{"days", "dates", "file", "updated_at", "removed_at"})

// CalendarGet returns the calendar with the given name.
func (s *Store) CalendarGet(ctx context.Context, name string) (store.Calendar, error) {
	return get(ctx, s.read, sqlstore.ScanCalendar, "calendar "+name,
		`SELECT `+sqlstore.CalendarCols+` FROM calendars WHERE name = ?`, name)
}

// CalendarList returns every calendar, removed ones too, sorted by name.
func (s *Store) CalendarList(ctx context.Context) ([]store.Calendar, error) {
	return list(ctx, s.read, sqlstore.ScanCalendar, "calendars",
		`SELECT `+sqlstore.CalendarCols+` FROM calendars ORDER BY name`)
}

// versionCheck is a condition that writes nothing: inside the commit's
// transaction (which holds the write lock) the record must be at version,
// or absent when version is 0.
func versionCheck(what, table, keyCol, key string, version int64) (op, error) {
	if version < 0 {
		return op{}, fmt.Errorf("sqlite: check %s: negative version %d", what, version)
	}
	if version == 0 {
		return op{what: what + " absent", query: `SELECT count(*) FROM ` + table + ` WHERE ` + keyCol + ` = ?`,
			args: []any{key}, check: true, want: 0}, nil
	}
	return op{what: fmt.Sprintf("%s at version %d", what, version), query: `SELECT count(*) FROM ` + table + ` WHERE ` + keyCol + ` = ? AND version = ?`,
		args: []any{key, version}, check: true, want: 1}, nil
}

// checkOps are the statements of a Change's pipeline and calendar checks.
func checkOps(c store.Change, add func(op, error)) {
	for _, k := range c.PipelineChecks {
		o, err := versionCheck("pipeline "+k.ID, "pipelines", "id", k.ID, k.Version)
		if k.Version > 0 {
			o.pipeline = k.ID
		}
		add(o, err)
	}
	for _, k := range c.CalendarChecks {
		add(versionCheck("calendar "+k.Name, "calendars", "name", k.Name, k.Version))
	}
}

// calendarOps are the statements writing a Change's calendars.
func calendarOps(e *sqlstore.Encoder, c store.Change, add func(op, error)) {
	for _, w := range c.Calendars {
		x := w.Calendar
		add(calendarsTable.put("calendar "+x.Name, []any{x.Name}, w.ExpectVersion, sqlstore.EncodeCalendar(e, x)))
	}
}
