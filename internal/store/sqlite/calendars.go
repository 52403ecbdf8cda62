package sqlite

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

var calendarsTable = newVersioned("calendars", []string{"name"},
	[]string{"days", "dates", "file", "updated_at", "removed_at"})

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
	return get(ctx, s.read, scanCalendar, "calendar "+name,
		`SELECT `+calendarCols+` FROM calendars WHERE name = ?`, name)
}

// CalendarList returns every calendar, removed ones too, sorted by name.
func (s *Store) CalendarList(ctx context.Context) ([]store.Calendar, error) {
	return list(ctx, s.read, scanCalendar, "calendars",
		`SELECT `+calendarCols+` FROM calendars ORDER BY name`)
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
		add(versionCheck("pipeline "+k.ID, "pipelines", "id", k.ID, k.Version))
	}
	for _, k := range c.CalendarChecks {
		add(versionCheck("calendar "+k.Name, "calendars", "name", k.Name, k.Version))
	}
}

// calendarOps are the statements writing a Change's calendars.
func calendarOps(e *encoder, c store.Change, add func(op, error)) {
	for _, w := range c.Calendars {
		x := w.Calendar
		add(calendarsTable.put("calendar "+x.Name, []any{x.Name}, w.ExpectVersion, encodeCalendar(e, x)))
	}
}
