package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// testExpire checks retention: Expire deletes exactly the history older
// than its cutoffs, never what store.ExpireParams says must stay, is
// idempotent, and is bounded by its limit.
func testExpire(t *testing.T, o Options) {
	if o.TTL != nil {
		testExpireTTL(t, o)
		return
	}
	const cutoff = "2026-01-10"
	before := time.Date(2026, time.January, 10, 0, 0, 0, 0, time.UTC)
	expired := []string{"2026-01-08", "2026-01-09", "2026-01-09T23"}
	kept := []string{"2026-01-10", "2026-01-10T00", "2026-01-11"}

	t.Run("DeletesExactlyWhatIsOlder", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, createPipeline(minimalPipeline("pl")))
		commit(t, s, store.Change{Calendars: []store.CalendarWrite{{Calendar: minimalCalendar("holidays")}}})
		for _, pl := range []string{"pl", "other"} {
			for _, p := range append(append([]string{}, expired...), kept...) {
				seedPeriod(t, s, key(pl, "cron", p), run.Completed)
			}
		}
		// Pipeline-level records and plain keys never expire, whatever
		// their age or their look.
		commit(t, s, store.Change{
			Markers: []store.MarkerWrite{{Marker: fullMarker(key("pl", "cron", ""), "first-loaded")},
				{Marker: fullMarker(key("#alert", "slack", ""), "cursor")}},
			Sensors: []store.SensorWrite{{Sensor: minimalSensor("pl", "k", 1)}, {Sensor: minimalSensor("pl", "k#eu", 1)},
				{Sensor: minimalSensor("pl", "k#2026-13-01", 1)}, {Sensor: minimalSensor("pl", "#2026-01-01", 1)}},
			Timers: []store.TimerWrite{{Timer: store.Timer{Key: "due-long-ago", Kind: "evaluate", Run: key("pl", "cron", "2026-01-11"), DueAt: before.Add(-90 * 24 * time.Hour)}}},
			Events: []event.Event{newEvent("old-1", event.JobTriggered, key("pl", "cron", "2026-01-11"), before.Add(-time.Nanosecond)),
				newEvent("new-1", event.JobTriggered, key("pl", "cron", "2026-01-08"), before),
				newEvent("old-2", event.JobTriggered, key("other", "cron", "2026-01-11"), before.Add(-48*time.Hour).In(elsewhere))},
		})

		res := expireAll(t, s, store.ExpireParams{PeriodBefore: cutoff, Before: before, Limit: 1000})
		want := map[string]int{"runs": 6, "ledger": 6, "baselines": 6, "markers": 6, "sensors": 12, "events": 2}
		mustMatch(t, "Expire deleted", res, want)
		for _, pl := range []string{"pl", "other"} {
			for _, p := range expired {
				requirePeriod(t, s, key(pl, "cron", p), false)
			}
			for _, p := range kept {
				requirePeriod(t, s, key(pl, "cron", p), true)
			}
		}
		for _, k := range []string{"k", "k#eu", "k#2026-13-01", "#2026-01-01"} {
			if _, err := s.SensorGet(t.Context(), "pl", k); err != nil {
				t.Errorf("plain sensor %s: %v", k, err)
			}
		}
		for _, k := range []run.Key{key("pl", "cron", ""), key("#alert", "slack", "")} {
			if _, err := s.MarkerGet(t.Context(), k, map[bool]string{true: "cursor", false: "first-loaded"}[k.PipelineID == "#alert"]); err != nil {
				t.Errorf("pipeline-level marker of %v: %v", k, err)
			}
		}
		if _, err := s.PipelineGet(t.Context(), "pl"); err != nil {
			t.Errorf("pipeline: %v", err)
		}
		if _, err := s.CalendarGet(t.Context(), "holidays"); err != nil {
			t.Errorf("calendar: %v", err)
		}
		if _, err := s.TimerGet(t.Context(), "due-long-ago"); err != nil {
			t.Errorf("timer: %v", err)
		}
		var ids []string
		for _, e := range allEvents(t, s) {
			ids = append(ids, e.ID)
		}
		mustMatch(t, "events left", ids, []string{"new-1"})

		// Idempotent: nothing more to delete.
		again := must(s.Expire(t.Context(), store.ExpireParams{PeriodBefore: cutoff, Before: before, Limit: 1000})).get(t)
		if again.Total() != 0 || again.More {
			t.Errorf("second Expire: %+v, want nothing deleted and no more", again)
		}
	})

	t.Run("AnActiveRunOrAnArmedTimerKeepsItsPeriod", func(t *testing.T) {
		s := o.New(t)
		seedPeriod(t, s, key("pl", "cron", "2026-01-05"), run.Running)
		seedPeriod(t, s, key("pl", "cron", "2026-01-06"), run.Completed)
		commit(t, s, putTimer(store.Timer{Key: "sla-breach/pl/2026-01-06", Kind: "sla-breach", Run: key("pl", "cron", "2026-01-06"), DueAt: before}))
		// An hour's sensor feeds the active run of its day.
		hourly := minimalSensor("pl", "k#2026-01-05T03", 1)
		hourly.ChangedAt, hourly.WrittenAt = before.Add(-5*24*time.Hour), before.Add(-5*24*time.Hour)
		commit(t, s, putSensor(hourly, 0))
		// The same periods of another pipeline, with nothing at work.
		seedPeriod(t, s, key("other", "cron", "2026-01-05"), run.Completed)
		seedPeriod(t, s, key("other", "cron", "2026-01-06"), run.Completed)
		// Another schedule's active run protects the pipeline's period too.
		seedPeriod(t, s, key("pl", "stream", "2026-01-07"), run.Completed)
		commit(t, s, putRun(withState(newRun(key("pl", "cron", "2026-01-07")), run.Evaluating), 0))

		res := expireAll(t, s, store.ExpireParams{PeriodBefore: cutoff, Before: before, Limit: 1000})
		mustMatch(t, "Expire deleted", res, map[string]int{"runs": 2, "ledger": 2, "baselines": 2, "markers": 2, "sensors": 4})
		requirePeriod(t, s, key("pl", "cron", "2026-01-05"), true)
		requirePeriod(t, s, key("pl", "cron", "2026-01-06"), true)
		requirePeriod(t, s, key("pl", "stream", "2026-01-07"), true)
		requirePeriod(t, s, key("other", "cron", "2026-01-05"), false)
		requirePeriod(t, s, key("other", "cron", "2026-01-06"), false)
		if _, err := s.SensorGet(t.Context(), "pl", "k#2026-01-05T03"); err != nil {
			t.Errorf("hourly sensor of an active day: %v", err)
		}
		// Once the run ends and the timer is gone, the periods go.
		r := must(s.RunGet(t.Context(), key("pl", "cron", "2026-01-05"))).get(t)
		commit(t, s, putRun(withState(r, run.Completed), r.Version))
		commit(t, s, store.Change{TimerDeletes: []store.TimerDelete{{Key: "sla-breach/pl/2026-01-06"}}})
		res = expireAll(t, s, store.ExpireParams{PeriodBefore: cutoff, Before: before, Limit: 1000})
		mustMatch(t, "Expire deleted after the work ended", res, map[string]int{"runs": 2, "ledger": 2, "baselines": 2, "markers": 2, "sensors": 5})
		requirePeriod(t, s, key("pl", "cron", "2026-01-05"), false)
		requirePeriod(t, s, key("pl", "cron", "2026-01-06"), false)
		requirePeriod(t, s, key("pl", "stream", "2026-01-07"), true)
	})

	t.Run("AWriteWithinRetentionKeepsItsDate", func(t *testing.T) {
		s := o.New(t)
		day := 24 * time.Hour
		// A sensor replayed for a period long expired by its date, at the
		// very cutoff: acknowledged, so kept with the run that locks the
		// period, and so is the rest of the date.
		seedPeriod(t, s, key("pl", "cron", "2026-01-05"), run.Completed)
		late := minimalSensor("pl", "late#2026-01-05", 2)
		late.ChangedAt, late.WrittenAt = before, before
		commit(t, s, putSensor(late, 0))
		// A rerun or a backfill of an old period: its run changed a
		// nanosecond before the cutoff in one pipeline, at it in another;
		// an hour's run changed within retention keeps its day's records.
		seedPeriod(t, s, key("pl", "cron", "2026-01-03"), run.Completed)
		seedPeriod(t, s, key("rerun", "cron", "2026-01-03"), run.Completed)
		seedPeriod(t, s, key("hourrun", "cron", "2026-01-06"), run.Completed)
		seedPeriod(t, s, key("hourrun", "cron", "2026-01-06T09"), run.Completed)
		for k, at := range map[run.Key]time.Time{key("pl", "cron", "2026-01-03"): before.Add(-time.Nanosecond),
			key("rerun", "cron", "2026-01-03"): before, key("hourrun", "cron", "2026-01-06T09"): before.Add(time.Hour)} {
			r := must(s.RunGet(t.Context(), k)).get(t)
			r.UpdatedAt = at
			commit(t, s, putRun(r, r.Version))
		}
		// An hour's sensor written within retention keeps its day's run
		// in a pipeline of days (and every record of its date).
		seedPeriod(t, s, key("hourly", "cron", "2026-01-04"), run.Completed)
		seedPeriod(t, s, key("hourly", "cron", "2026-01-04T07"), run.Completed)
		hour := minimalSensor("hourly", "h#2026-01-04T05", 1)
		hour.ChangedAt, hour.WrittenAt = before.Add(40*day), before.Add(40*day)
		commit(t, s, putSensor(hour, 0))
		// The same dates of another pipeline saw nothing since: they go.
		for _, p := range []string{"2026-01-03", "2026-01-04", "2026-01-05"} {
			seedPeriod(t, s, key("other", "cron", p), run.Completed)
		}

		res := expireAll(t, s, store.ExpireParams{PeriodBefore: cutoff, Before: before, Limit: 1000})
		mustMatch(t, "Expire deleted", res, map[string]int{"runs": 4, "ledger": 4, "baselines": 4, "markers": 4, "sensors": 8})
		kept := []run.Key{key("pl", "cron", "2026-01-05"), key("rerun", "cron", "2026-01-03"),
			key("hourly", "cron", "2026-01-04"), key("hourly", "cron", "2026-01-04T07"),
			key("hourrun", "cron", "2026-01-06"), key("hourrun", "cron", "2026-01-06T09")}
		for _, k := range kept {
			requirePeriod(t, s, k, true)
		}
		for _, k := range []run.Key{key("pl", "cron", "2026-01-03"), key("other", "cron", "2026-01-03"),
			key("other", "cron", "2026-01-04"), key("other", "cron", "2026-01-05")} {
			requirePeriod(t, s, k, false)
		}
		for _, sk := range [][2]string{{"pl", "late#2026-01-05"}, {"hourly", "h#2026-01-04T05"}} {
			if _, err := s.SensorGet(t.Context(), sk[0], sk[1]); err != nil {
				t.Errorf("sensor %s/%s written within retention: %v", sk[0], sk[1], err)
			}
		}

		// Once the latest write is older than retention too, the date goes.
		res = expireAll(t, s, store.ExpireParams{PeriodBefore: cutoff, Before: before.Add(40*day + time.Nanosecond), Limit: 1000})
		mustMatch(t, "Expire deleted once the writes aged", res, map[string]int{"runs": 6, "ledger": 6, "baselines": 6, "markers": 6, "sensors": 14})
		for _, k := range kept {
			requirePeriod(t, s, k, false)
		}
	})

	t.Run("BoundedByLimit", func(t *testing.T) {
		s := o.New(t)
		for _, p := range []string{"2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"} {
			seedPeriod(t, s, key("pl", "cron", p), run.Completed) // 6 records each
		}
		var totals []int
		for range 10 {
			res := must(s.Expire(t.Context(), store.ExpireParams{PeriodBefore: cutoff, Before: before, Limit: 10})).get(t)
			totals = append(totals, res.Total())
			if res.Total() > 10 {
				t.Fatalf("Expire with limit 10 deleted %d", res.Total())
			}
			if !res.More {
				break
			}
		}
		sum := 0
		for _, n := range totals {
			sum += n
		}
		if sum != 24 || len(totals) < 3 {
			t.Fatalf("batches deleted %v: want 24 records in batches of at most 10", totals)
		}
		for _, p := range []string{"2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"} {
			requirePeriod(t, s, key("pl", "cron", p), false)
		}
	})

	t.Run("ZeroCutoffsExpireNothing", func(t *testing.T) {
		s := o.New(t)
		seedPeriod(t, s, key("pl", "cron", "2026-01-01"), run.Completed)
		commit(t, s, addEvents(newEvent("e", event.JobTriggered, key("pl", "cron", "2026-01-01"), before.Add(-time.Hour))))
		res := must(s.Expire(t.Context(), store.ExpireParams{Limit: 100})).get(t)
		if res.Total() != 0 || res.More {
			t.Errorf("Expire with no cutoff: %+v", res)
		}
		// A period's records need both cutoffs: its date and its activity.
		res = must(s.Expire(t.Context(), store.ExpireParams{PeriodBefore: cutoff, Limit: 100})).get(t)
		if res.Total() != 0 || res.More {
			t.Errorf("Expire with no activity cutoff: %+v", res)
		}
		requirePeriod(t, s, key("pl", "cron", "2026-01-01"), true)
		if _, err := s.Expire(t.Context(), store.ExpireParams{PeriodBefore: cutoff}); err == nil {
			t.Error("Expire with no limit: want an error")
		}
	})
}

// seedPeriod stores a period's history, written on the period itself (its
// day's midnight UTC, or its hour's start): its run in state, a ledger
// entry, a baseline, a marker, and a sensor in each spelling of the
// period.
func seedPeriod(t *testing.T, s store.Store, k run.Key, state run.State) {
	t.Helper()
	per, err := schedule.ParsePeriod(k.Period)
	if err != nil {
		t.Fatal(err)
	}
	seedPeriodAt(t, s, k, state, per.Date.Midnight(time.UTC).Add(time.Duration(per.Hour)*time.Hour))
}

// seedPeriodAt is seedPeriod with every record written at written.
func seedPeriodAt(t *testing.T, s store.Store, k run.Key, state run.State, written time.Time) {
	t.Helper()
	per, err := schedule.ParsePeriod(k.Period)
	if err != nil {
		t.Fatal(err)
	}
	r := withState(newRun(k), state)
	r.CreatedAt, r.UpdatedAt, r.StateSince = written, written, written
	l := ledgerEntry(k, 1)
	l.At = written
	b := fullBaseline(k)
	b.CapturedAt = written
	m := fullMarker(k, "first-arrival")
	m.At = written
	sensorAt := func(key string) store.Sensor {
		x := minimalSensor(k.PipelineID, key, 1)
		x.ChangedAt, x.WrittenAt = written, written
		return x
	}
	commit(t, s, store.Change{
		Runs:      []store.RunWrite{{Run: r}},
		Ledger:    []store.LedgerEntry{l},
		Baselines: []store.Baseline{b},
		Markers:   []store.MarkerWrite{{Marker: m}},
		Sensors: []store.SensorWrite{{Sensor: sensorAt(k.ScheduleID + "#" + per.String())},
			{Sensor: sensorAt(k.ScheduleID + "#" + per.Compact())}},
	})
}

// requirePeriod checks that every record seedPeriod wrote is there, or
// that none is.
func requirePeriod(t *testing.T, s store.Store, k run.Key, present bool) {
	t.Helper()
	per, _ := schedule.ParsePeriod(k.Period)
	errs := map[string]error{}
	_, errs["run"] = s.RunGet(t.Context(), k)
	_, errs["baseline"] = s.BaselineGet(t.Context(), k)
	_, errs["marker"] = s.MarkerGet(t.Context(), k, "first-arrival")
	_, errs["sensor"] = s.SensorGet(t.Context(), k.PipelineID, k.ScheduleID+"#"+per.String())
	_, errs["compact sensor"] = s.SensorGet(t.Context(), k.PipelineID, k.ScheduleID+"#"+per.Compact())
	if n := len(must(s.LedgerList(t.Context(), k)).get(t)); n != map[bool]int{true: 1, false: 0}[present] {
		t.Errorf("%v: %d ledger entries, present=%v", k, n, present)
	}
	for what, err := range errs {
		switch {
		case present && err != nil:
			t.Errorf("%v: %s: %v, want it kept", k, what, err)
		case !present && !errors.Is(err, store.ErrNotFound):
			t.Errorf("%v: %s: %v, want it expired", k, what, err)
		}
	}
}

// expireAll calls Expire until nothing more remains and sums what it
// deleted by kind.
func expireAll(t *testing.T, s store.Store, p store.ExpireParams) map[string]int {
	t.Helper()
	sum := map[string]int{}
	for range 1000 {
		res := must(s.Expire(t.Context(), p)).get(t)
		for k, v := range res.Deleted {
			sum[k] += v
		}
		if !res.More {
			return sum
		}
	}
	t.Fatal("Expire still had more after 1000 calls")
	return nil
}
