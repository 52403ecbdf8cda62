package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// TTLOptions is set for a backend that expires records by a time-to-live
// it writes on each of them (DynamoDB's `ttl` attribute) instead of
// deleting them in Expire, which the port allows (store.Store.Expire: the
// expired goes eventually, not when). Expire must then delete nothing and
// report no more, and the Expire checks become checks of each record's
// expiry, through ExpiresAt: every record a deleting store would expire
// carries the instant at which Expire, called then, would delete it —
// exactly, to the second (run.RetentionCutoff of that instant expires it,
// of the second before does not) — and every record the port protects
// carries none.
//
// The one protection a time-to-live cannot give as Expire does is the
// period still at work: a period's records other than its active run
// carry their expiry while the run is active or a timer is armed. The
// backend keeps that promise by time (the retention is longer than a run
// lives and than every pipeline's history window, which the settings
// enforce), and the suite checks what it can: the active run and the
// armed timer carry no expiry, and a run that ends gets one.
type TTLOptions struct {
	// Retention is the retention the stores of Options.New were opened
	// with.
	Retention time.Duration
	// ExpiresAt returns the instant from which the backend may delete r
	// by itself, and false when r carries no expiry. It reads the record
	// as stored, beside the port.
	ExpiresAt func(t *testing.T, s store.Store, r Record) (time.Time, bool)
}

// Record names one stored record for TTLOptions.ExpiresAt. Kind says which
// of the other fields name it:
//
//	"pipeline" Key.PipelineID · "calendar" Name · "sensor" Key.PipelineID, Name (its key)
//	"run", "baseline" Key · "ledger" Key, Seq · "marker" Key, Name (its kind) · "timer" Name (its key)
//	"event" Shard, Seq · "delivery cursor" Sink · "dead letter" Sink, Name (the event id)
//	"alert thread", "alert alerted" Sink, Key · "alert sent" Sink, Key, Type, Name (the hash)
//	"silence" Name (its id)
type Record struct {
	Kind  string
	Key   run.Key
	Name  string
	Seq   int64
	Shard int
	Sink  string
	Type  event.Type
}

// ttlCheck checks records' expiries against Expire's rule.
type ttlCheck struct{ *TTLOptions }

func (c ttlCheck) expiry(t *testing.T, s store.Store, r Record) (time.Time, bool) {
	t.Helper()
	at, ok := c.ExpiresAt(t, s, r)
	if ok && (at.Nanosecond() != 0 || at.Location() != time.UTC) {
		t.Errorf("%+v: expiry %s is not a whole second in UTC", r, at.Format(time.RFC3339Nano))
	}
	return at, ok
}

// expiresLike checks that r expires exactly when Expire would delete it:
// expired says whether Expire with the cutoffs of an instant
// (run.RetentionCutoff) deletes it.
func (c ttlCheck) expiresLike(t *testing.T, s store.Store, r Record, expired func(periodBefore string, before time.Time) bool) {
	t.Helper()
	at, ok := c.expiry(t, s, r)
	if !ok {
		t.Errorf("%+v carries no expiry; Expire would delete it in time", r)
		return
	}
	if pb, b := run.RetentionCutoff(at, c.Retention); !expired(pb, b) {
		t.Errorf("%+v expires at %s, when Expire would still keep it (cutoffs %s, %s)", r, at.Format(time.RFC3339), pb, b.Format(time.RFC3339Nano))
	}
	if pb, b := run.RetentionCutoff(at.Add(-time.Second), c.Retention); expired(pb, b) {
		t.Errorf("%+v expires at %s, a second or more after Expire would delete it (cutoffs %s, %s)", r, at.Format(time.RFC3339), pb, b.Format(time.RFC3339Nano))
	}
}

// protected checks that r carries no expiry.
func (c ttlCheck) protected(t *testing.T, s store.Store, r Record) {
	t.Helper()
	if at, ok := c.expiry(t, s, r); ok {
		t.Errorf("%+v expires at %s; the port says it never does", r, at.Format(time.RFC3339))
	}
}

// ofPeriod is Expire's rule for a record of period written on the period
// itself (seedPeriod): its date decides.
func ofPeriod(period string) func(string, time.Time) bool {
	per, _ := schedule.ParsePeriod(period)
	return ofPeriodAt(period, per.Date.Midnight(time.UTC).Add(time.Duration(per.Hour)*time.Hour))
}

// ofPeriodAt is Expire's rule for a record of period whose date's last
// activity is written (run.PeriodExpired).
func ofPeriodAt(period string, written time.Time) func(string, time.Time) bool {
	return func(periodBefore string, before time.Time) bool {
		return run.PeriodExpired(period, written, periodBefore, before)
	}
}

// ofTime is Expire's rule for a record (an event, alert bookkeeping) of
// time when.
func ofTime(when time.Time) func(string, time.Time) bool {
	return func(_ string, b time.Time) bool { return when.Before(b) }
}

// testExpireTTL is testExpire for a backend with TTLOptions.
func testExpireTTL(t *testing.T, o Options) {
	before := time.Date(2026, time.January, 10, 0, 0, 0, 0, time.UTC)
	periods := []string{"2026-01-08", "2026-01-09", "2026-01-09T23", "2026-01-10", "2026-01-10T00", "2026-01-11"}
	tc := ttlCheck{o.TTL}
	expiresLike, protected := tc.expiresLike, tc.protected
	periodRecords := func(k run.Key) []Record {
		per, err := schedule.ParsePeriod(k.Period)
		if err != nil {
			t.Fatal(err)
		}
		return []Record{{Kind: "run", Key: k}, {Kind: "ledger", Key: k, Seq: 1}, {Kind: "baseline", Key: k},
			{Kind: "marker", Key: k, Name: "first-arrival"},
			{Kind: "sensor", Key: key(k.PipelineID, "", ""), Name: k.ScheduleID + "#" + per.String()},
			{Kind: "sensor", Key: key(k.PipelineID, "", ""), Name: k.ScheduleID + "#" + per.Compact()}}
	}

	t.Run("ExpireDeletesNothing", func(t *testing.T) {
		s := o.New(t)
		for _, p := range periods {
			seedPeriod(t, s, key("pl", "cron", p), run.Completed)
		}
		commit(t, s, addEvents(newEvent("old", event.JobTriggered, key("pl", "cron", "2026-01-08"), before.Add(-48*time.Hour))))
		res := must(s.Expire(t.Context(), store.ExpireParams{PeriodBefore: "2026-01-10", Before: before, Limit: 1000})).get(t)
		if res.Total() != 0 || res.More {
			t.Errorf("Expire on a TTL store: %+v, want nothing deleted and no more", res)
		}
		for _, p := range periods {
			requirePeriod(t, s, key("pl", "cron", p), true)
		}
		mustMatch(t, "events", eventIDs(allEvents(t, s)), []string{"old"})
		if _, err := s.Expire(t.Context(), store.ExpireParams{PeriodBefore: "2026-01-10"}); err == nil {
			t.Error("Expire with no limit: want an error")
		}
	})

	t.Run("EveryRecordExpiresWhenExpireWouldDeleteIt", func(t *testing.T) {
		s := o.New(t)
		for _, pl := range []string{"pl", "other"} {
			for _, p := range periods {
				k := key(pl, "cron", p)
				seedPeriod(t, s, k, run.Completed)
				for _, r := range periodRecords(k) {
					expiresLike(t, s, r, ofPeriod(p))
				}
			}
		}
		evs := []event.Event{
			newEvent("e-old", event.JobTriggered, key("pl", "cron", "2026-01-11"), before.Add(-time.Nanosecond)),
			newEvent("e-new", event.JobTriggered, key("pl", "cron", "2026-01-08"), before),
			newEvent("e-zone", event.JobTriggered, key("other", "cron", "2026-01-11"), before.Add(-48*time.Hour+time.Millisecond).In(elsewhere)),
			newEvent("e-global", event.WatchdogDegraded, key("", "", ""), before.Add(time.Second)),
		}
		commit(t, s, addEvents(evs...))
		for _, e := range allEvents(t, s) {
			expiresLike(t, s, Record{Kind: "event", Shard: e.Shard, Seq: e.Seq}, ofTime(e.Time))
		}
		k := key("pl", "cron", "2026-01-09")
		at := before.Add(-time.Hour - 300*time.Millisecond).In(elsewhere)
		commit(t, s, store.Change{
			DeadLetters:   []store.DeadLetter{{Sink: "slack", EventID: "e-old", Type: event.JobTriggered, Key: k, EventTime: at, Attempts: 3, Error: "x", At: at}},
			AlertThreads:  []store.AlertThread{{Sink: "slack", Key: k, TS: "1.2", Channel: "C", At: at}},
			AlertsSent:    []store.AlertSent{{Sink: "slack", Key: k, Type: event.SLABreach, Hash: "h", EventID: "e", At: at}},
			AlertsAlerted: []store.AlertAlerted{{Sink: "slack", Key: k, EventID: "e", Type: event.SLABreach, At: at}},
		})
		for _, r := range []Record{{Kind: "dead letter", Sink: "slack", Name: "e-old"}, {Kind: "alert thread", Sink: "slack", Key: k},
			{Kind: "alert sent", Sink: "slack", Key: k, Type: event.SLABreach, Name: "h"}, {Kind: "alert alerted", Sink: "slack", Key: k}} {
			expiresLike(t, s, r, ofTime(at))
		}
	})

	t.Run("WhatThePortProtectsCarriesNoExpiry", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, createPipeline(minimalPipeline("pl")))
		commit(t, s, store.Change{Calendars: []store.CalendarWrite{{Calendar: minimalCalendar("holidays")}}})
		commit(t, s, store.Change{
			Markers: []store.MarkerWrite{{Marker: fullMarker(key("pl", "cron", ""), "first-loaded")},
				{Marker: fullMarker(key("", "", ""), "watchdog:pass")}},
			Sensors: []store.SensorWrite{{Sensor: minimalSensor("pl", "k", 1)}, {Sensor: minimalSensor("pl", "k#eu", 1)},
				{Sensor: minimalSensor("pl", "k#2026-13-01", 1)}, {Sensor: minimalSensor("pl", "#2026-01-01", 1)}},
			Timers: []store.TimerWrite{{Timer: store.Timer{Key: "due-long-ago", Kind: "evaluate", Run: key("pl", "cron", "2026-01-08"),
				DueAt: before.Add(-90 * 24 * time.Hour)}}},
			DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: store.DeliveryCursor{Sink: "slack", Cursor: store.Cursor{1}, At: before.Add(-400 * 24 * time.Hour)}}},
		})
		for _, r := range []Record{
			{Kind: "pipeline", Key: key("pl", "", "")}, {Kind: "calendar", Name: "holidays"},
			{Kind: "marker", Key: key("pl", "cron", ""), Name: "first-loaded"}, {Kind: "marker", Key: key("", "", ""), Name: "watchdog:pass"},
			{Kind: "sensor", Key: key("pl", "", ""), Name: "k"}, {Kind: "sensor", Key: key("pl", "", ""), Name: "k#eu"},
			{Kind: "sensor", Key: key("pl", "", ""), Name: "k#2026-13-01"}, {Kind: "sensor", Key: key("pl", "", ""), Name: "#2026-01-01"},
			{Kind: "timer", Name: "due-long-ago"}, {Kind: "delivery cursor", Sink: "slack"},
		} {
			protected(t, s, r)
		}
	})

	t.Run("AWriteCarriesItsExpiry", func(t *testing.T) {
		// Records written for a period long expired by its date (a
		// replay, a rerun, a backfill) expire retention after their
		// write, as Expire keeps them; a later write moves its own
		// record's expiry.
		s := o.New(t)
		written := time.Date(2026, time.June, 1, 8, 30, 0, 250_000_000, time.UTC)
		k := key("pl", "cron", "2026-01-05")
		seedPeriodAt(t, s, k, run.Completed, written)
		for _, r := range periodRecords(k) {
			expiresLike(t, s, r, ofPeriodAt(k.Period, written))
		}
		later := written.Add(30 * 24 * time.Hour).In(elsewhere)
		x := minimalSensor("pl", "cron#2026-01-05", 2)
		x.ChangedAt, x.WrittenAt = later, later
		commit(t, s, putSensor(x, 1))
		expiresLike(t, s, Record{Kind: "sensor", Key: key("pl", "", ""), Name: "cron#2026-01-05"}, ofPeriodAt(k.Period, later))
		// A write within the period's date range: the date decides.
		k = key("pl", "cron", "2026-05-31T23")
		seedPeriodAt(t, s, k, run.Completed, written)
		for _, r := range periodRecords(k) {
			expiresLike(t, s, r, ofPeriodAt(k.Period, written))
		}
	})

	t.Run("ARunExpiresOnlyOnceItEnds", func(t *testing.T) {
		s := o.New(t)
		k := key("pl", "cron", "2026-01-05")
		seedPeriod(t, s, k, run.Running)
		commit(t, s, putTimer(store.Timer{Key: "sla-breach/pl/2026-01-05", Kind: "sla-breach", Run: k, DueAt: before}))
		rec := Record{Kind: "run", Key: k}
		protected(t, s, rec)
		protected(t, s, Record{Kind: "timer", Name: "sla-breach/pl/2026-01-05"})
		r := must(s.RunGet(t.Context(), k)).get(t)
		commit(t, s, putRun(withState(r, run.FailedFinal), r.Version))
		expiresLike(t, s, rec, ofPeriod(k.Period))
		r = must(s.RunGet(t.Context(), k)).get(t)
		commit(t, s, putRun(withState(r, run.Evaluating), r.Version)) // a rerun reopens it
		protected(t, s, rec)
		// The period's other records carry their expiry all along: the
		// retention outlives the work (TTLOptions).
		for _, r := range periodRecords(k)[1:] {
			expiresLike(t, s, r, ofPeriod(k.Period))
		}
	})
}
