package postgres

import (
	"context"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Calendars, and the conditions a decision puts on the pipeline row and
// the calendars it read (Change.PipelineChecks, Change.CalendarChecks).

// CalendarGet returns the calendar with the given name.
func (s *Store) CalendarGet(ctx context.Context, name string) (store.Calendar, error) {
	return get(ctx, s, sqlstore.ScanCalendar, "calendar "+name,
		`SELECT `+sqlstore.CalendarCols+` FROM calendars WHERE name = $1`, name)
}

// CalendarList returns every calendar, removed ones too, sorted by name.
func (s *Store) CalendarList(ctx context.Context) ([]store.Calendar, error) {
	return list(ctx, s, sqlstore.ScanCalendar, "calendars",
		`SELECT `+sqlstore.CalendarCols+` FROM calendars ORDER BY name`)
}
