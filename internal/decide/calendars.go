package decide

import (
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// CalendarWrite decides a calendar file's write of calendar name: the
// record to store as its file defines it (defined nil: no file defines
// it any more, and it is marked removed, keeping its dates for the
// pipelines already stored that name it), on the stored one's version
// (stored nil: none stored). ok is false when the store says so already
// (run.CalendarWrites): a reload does not move the versions every
// decision of the pipelines naming the calendar is conditioned on.
func CalendarWrite(stored *store.Calendar, name string, defined *schedule.Calendar, now time.Time) (w store.CalendarWrite, ok bool) {
	var cur store.Calendar
	var read *run.StoredCalendar
	if stored != nil {
		cur, read = *stored, StoredCalendar(*stored)
	}
	if !run.CalendarWrites(read, defined) {
		return store.CalendarWrite{}, false
	}
	next := cur
	next.RemovedAt = now
	if defined != nil {
		next = store.Calendar{Name: name, Days: defined.Days, Dates: defined.Dates, File: cur.File, UpdatedAt: now}
	}
	return store.CalendarWrite{Calendar: next, ExpectVersion: cur.Version}, true
}

// StoredCalendar is c as run.CalendarWrites reads it.
func StoredCalendar(c store.Calendar) *run.StoredCalendar {
	return &run.StoredCalendar{Calendar: c.Schedule(), Removed: !c.RemovedAt.IsZero()}
}
