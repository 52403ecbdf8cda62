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
		commit(t, s, putSensor(minimalSensor("pl", "k#2026-01-05T03", 1), 0))
		// The same periods of another pipeline, with nothing at work.
		seedPeriod(t, s, key("other", "cron", "2026-01-05"), run.Completed)
		seedPeriod(t, s, key("other", "cron", "2026-01-06"), run.Completed)
		// Another schedule's active run protects the pipeline's period too.
		seedPeriod(t, s, key("pl", "stream", "2026-01-07"), run.Completed)
		commit(t, s, putRun(withState(newRun(key("pl", "cron", "2026-01-07")), run.Evaluating), 0))

		res := expireAll(t, s, store.ExpireParams{PeriodBefore: cutoff, Limit: 1000})
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
		res = expireAll(t, s, store.ExpireParams{PeriodBefore: cutoff, Limit: 1000})
		mustMatch(t, "Expire deleted after the work ended", res, map[string]int{"runs": 2, "ledger": 2, "baselines": 2, "markers": 2, "sensors": 5})
		requirePeriod(t, s, key("pl", "cron", "2026-01-05"), false)
		requirePeriod(t, s, key("pl", "cron", "2026-01-06"), false)
		requirePeriod(t, s, key("pl", "stream", "2026-01-07"), true)
	})

	t.Run("BoundedByLimit", func(t *testing.T) {
		s := o.New(t)
		for _, p := range []string{"2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"} {
			seedPeriod(t, s, key("pl", "cron", p), run.Completed) // 6 records each
		}
		var totals []int
		for range 10 {
			res := must(s.Expire(t.Context(), store.ExpireParams{PeriodBefore: cutoff, Limit: 10})).get(t)
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
		requirePeriod(t, s, key("pl", "cron", "2026-01-01"), true)
		if _, err := s.Expire(t.Context(), store.ExpireParams{PeriodBefore: cutoff}); err == nil {
			t.Error("Expire with no limit: want an error")
		}
	})
}

// seedPeriod stores a period's history: its run in state, a ledger entry,
// a baseline, a marker, and a sensor in each spelling of the period.
func seedPeriod(t *testing.T, s store.Store, k run.Key, state run.State) {
	t.Helper()
	per, err := schedule.ParsePeriod(k.Period)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, s, store.Change{
		Runs:      []store.RunWrite{{Run: withState(newRun(k), state)}},
		Ledger:    []store.LedgerEntry{ledgerEntry(k, 1)},
		Baselines: []store.Baseline{fullBaseline(k)},
		Markers:   []store.MarkerWrite{{Marker: fullMarker(k, "first-arrival")}},
		Sensors: []store.SensorWrite{{Sensor: minimalSensor(k.PipelineID, k.ScheduleID+"#"+per.String(), 1)},
			{Sensor: minimalSensor(k.PipelineID, k.ScheduleID+"#"+per.Compact(), 1)}},
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
