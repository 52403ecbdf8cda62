package decide

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// TestCalendarWrite: a calendar file's write is made only when it
// changes the stored calendar, on its version; a calendar no file
// defines any more is marked removed, keeping its dates; one defined
// again is restored.
func TestCalendarWrite(t *testing.T) {
	now := runtest.T0
	xmas, eve := schedule.Date{Year: 2026, Month: time.December, Day: 25}, schedule.Date{Year: 2026, Month: time.December, Day: 24}
	defined := schedule.Calendar{Name: "holidays", Dates: []schedule.Date{xmas}}
	live := store.Calendar{Name: "holidays", Dates: []schedule.Date{xmas}, File: "calendars/holidays.yaml", Version: 4}
	changed := live
	changed.Dates = []schedule.Date{eve}
	removed := live
	removed.RemovedAt = now.Add(-24 * time.Hour)
	for _, c := range []struct {
		name    string
		stored  *store.Calendar
		defined *schedule.Calendar
		want    bool
		removed bool // the record written is marked removed
	}{
		{name: "new", defined: &defined, want: true},
		{name: "unchanged", stored: &live, defined: &defined},
		{name: "changed", stored: &changed, defined: &defined, want: true},
		{name: "defined again", stored: &removed, defined: &defined, want: true},
		{name: "no file defines it", stored: &live, want: true, removed: true},
		{name: "removed already", stored: &removed},
		{name: "never stored, no file", defined: nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, ok := CalendarWrite(c.stored, "holidays", c.defined, now)
			if ok != c.want {
				t.Fatalf("write %v, want %v", ok, c.want)
			}
			if !ok {
				return
			}
			var version int64
			if c.stored != nil {
				version = c.stored.Version
			}
			if w.ExpectVersion != version || w.Calendar.Name != "holidays" {
				t.Fatalf("write %+v, want holidays on version %d", w, version)
			}
			if got := !w.Calendar.RemovedAt.IsZero(); got != c.removed || c.removed && !w.Calendar.RemovedAt.Equal(now) {
				t.Fatalf("removed at %v, want removed %v (now)", w.Calendar.RemovedAt, c.removed)
			}
			if len(w.Calendar.Dates) != 1 || w.Calendar.Dates[0] != xmas {
				t.Fatalf("dates %v, want the file's (kept when removed)", w.Calendar.Dates)
			}
			if c.stored != nil && w.Calendar.File != c.stored.File {
				t.Fatalf("file %q, want the stored one's", w.Calendar.File)
			}
		})
	}
}
