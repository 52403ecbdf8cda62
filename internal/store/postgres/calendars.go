package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// Calendars, and the conditions a decision puts on the pipeline row and
// the calendars it read (Change.PipelineChecks, Change.CalendarChecks).

const calendarCols = `name, version, days, dates, file, updated_at, removed_at`

func scanCalendar(r scanner) (store.Calendar, error) {
	var (
		c     store.Calendar
		days  []int
		dates []string
	)
	err := r.Scan(&c.Name, &c.Version, jsonCol{&days}, jsonCol{&dates}, &c.File, timeCol{&c.UpdatedAt}, timeCol{&c.RemovedAt})
	if err != nil {
		return c, err
	}
	for _, d := range days {
		if d < int(time.Sunday) || d > int(time.Saturday) {
			return c, fmt.Errorf("calendar %s: weekday %d out of range", c.Name, d)
		}
		c.Days = append(c.Days, time.Weekday(d))
	}
	for _, s := range dates {
		d, err := schedule.ParseDate(s)
		if err != nil {
			return c, fmt.Errorf("calendar %s: %w", c.Name, err)
		}
		c.Dates = append(c.Dates, d)
	}
	return c, nil
}

// encodeCalendar returns the values of calendarCols after name and version.
func encodeCalendar(e *encoder, c store.Calendar) []any {
	days := make([]int, len(c.Days))
	for i, d := range c.Days {
		days[i] = int(d)
	}
	dates := make([]string, len(c.Dates))
	for i, d := range c.Dates {
		dates[i] = d.String()
	}
	return []any{e.json("calendar days", days, len(days)), e.json("calendar dates", dates, len(dates)), c.File,
		e.time("calendar updated at", c.UpdatedAt), e.time("calendar removed at", c.RemovedAt)}
}

// CalendarGet returns the calendar with the given name.
func (s *Store) CalendarGet(ctx context.Context, name string) (store.Calendar, error) {
	return get(ctx, s, scanCalendar, "calendar "+name,
		`SELECT `+calendarCols+` FROM calendars WHERE name = $1`, name)
}

// CalendarList returns every calendar, removed ones too, sorted by name.
func (s *Store) CalendarList(ctx context.Context) ([]store.Calendar, error) {
	return list(ctx, s, scanCalendar, "calendars",
		`SELECT `+calendarCols+` FROM calendars ORDER BY name`)
}
