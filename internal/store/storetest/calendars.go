package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/store"
)

func testCalendars(t *testing.T, o Options) {
	testVersionRule(t, o, versionedKind{
		write: func(payload, expect int64) store.Change {
			c := minimalCalendar("holidays")
			c.Days = []time.Weekday{time.Weekday(payload % 7)}
			c.File = "calendars/" + string(rune('a'+payload%26)) + ".yaml"
			return store.Change{Calendars: []store.CalendarWrite{{Calendar: c, ExpectVersion: expect}}}
		},
		read: func(t *testing.T, s store.Store) (int64, int64, error) {
			c, err := s.CalendarGet(t.Context(), "holidays")
			if err != nil || len(c.Days) != 1 {
				return c.Version, -1, err
			}
			// The payload is recovered from the file name, which
			// keeps all of it (Days keeps it modulo 7).
			return c.Version, int64(c.File[len("calendars/")] - 'a'), nil
		},
	})

	testRoundTrip(t, o, "fullCalendar", fullCalendar("holidays"), func(c store.Calendar) store.Change {
		return store.Change{Calendars: []store.CalendarWrite{{Calendar: c}}}
	},
		func(t *testing.T, s store.Store) (store.Calendar, error) {
			return s.CalendarGet(t.Context(), "holidays")
		}, func(c *store.Calendar) { c.Version = 1 })

	t.Run("EmptyCalendarRoundTrips", func(t *testing.T) {
		s := o.New(t)
		want := minimalCalendar("empty")
		commit(t, s, store.Change{Calendars: []store.CalendarWrite{{Calendar: want}}})
		want.Version = 1
		mustMatch(t, "CalendarGet", must(s.CalendarGet(t.Context(), "empty")).get(t), want)
	})

	t.Run("ListIsSortedByNameAndKeepsRemoved", func(t *testing.T) {
		s := o.New(t)
		if got := must(s.CalendarList(t.Context())).get(t); len(got) != 0 {
			t.Fatalf("empty store lists %d calendars", len(got))
		}
		removed := minimalCalendar("bridges")
		removed.RemovedAt = at(0)
		commit(t, s, store.Change{Calendars: []store.CalendarWrite{
			{Calendar: minimalCalendar("weekends")}, {Calendar: removed}, {Calendar: minimalCalendar("holidays")},
		}})
		var names []string
		for _, c := range must(s.CalendarList(t.Context())).get(t) {
			names = append(names, c.Name)
		}
		mustMatch(t, "CalendarList names", names, []string{"bridges", "holidays", "weekends"})
	})
}

// testChecks: the conditions a decision puts on the records it read and
// does not write — the pipeline row (pause state, config version) and the
// calendars its config names.
func testChecks(t *testing.T, o Options) {
	t.Run("APauseBetweenReadAndCommitConflicts", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, createPipeline(minimalPipeline("orders")))
		read := must(s.PipelineGet(t.Context(), "orders")).get(t) // the decision reads: not paused
		paused := read
		paused.Paused = true
		commit(t, s, store.Change{Pipelines: []store.PipelineWrite{{Pipeline: paused, ExpectVersion: read.Version}}})
		decision := store.Change{
			PipelineChecks: []store.PipelineCheck{{ID: "orders", Version: read.Version}},
			Runs:           []store.RunWrite{{Run: newRun(k14)}},
		}
		conflict(t, s, decision)
		_, err := s.RunGet(t.Context(), k14)
		notFound(t, "the run of a decision made before the pause", err)
		// Decided again on the fresh row, the commit goes through.
		fresh := must(s.PipelineGet(t.Context(), "orders")).get(t)
		decision.PipelineChecks[0].Version = fresh.Version
		commit(t, s, decision)
	})

	t.Run("ACalendarChangeBetweenReadAndCommitConflicts", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Calendars: []store.CalendarWrite{{Calendar: minimalCalendar("holidays")}}})
		read := must(s.CalendarGet(t.Context(), "holidays")).get(t)
		changed := read
		changed.Days = []time.Weekday{time.Monday}
		commit(t, s, store.Change{Calendars: []store.CalendarWrite{{Calendar: changed, ExpectVersion: read.Version}}})
		conflict(t, s, store.Change{
			CalendarChecks: []store.CalendarCheck{{Name: "holidays", Version: read.Version}},
			Runs:           []store.RunWrite{{Run: newRun(k14)}},
		})
		_, err := s.RunGet(t.Context(), k14)
		notFound(t, "the run of a decision made on the old calendar", err)
	})

	t.Run("ACheckAloneWritesNothing", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, createPipeline(minimalPipeline("orders")))
		before := takeSnapshot(t, s, []string{"orders"}, nil)
		commit(t, s, store.Change{PipelineChecks: []store.PipelineCheck{{ID: "orders", Version: 1}}})
		mustMatch(t, "store after a commit of checks only", takeSnapshot(t, s, []string{"orders"}, nil), before)
	})
}
