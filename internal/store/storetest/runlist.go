package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

func testRunList(t *testing.T, o Options) {
	// Seeded out of order, in two commits, with terminal and active runs.
	seed := []run.Run{
		withState(newRun(key("orders", "daily", "2026-03-12")), run.Completed),
		withState(newRun(key("orders", "hourly", "2026-03-14T05")), run.Evaluating),
		withState(newRun(key("orders", "daily", "2026-03-14")), run.Running),
		withState(newRun(key("billing", "daily", "2026-03-13")), run.Evaluating),
		withState(newRun(key("orders", "daily", "2026-03-13")), run.FailedFinal),
		withState(newRun(key("orders", "hourly", "2026-03-14T06")), run.Triggering),
		withState(newRun(key("billing", "daily", "2026-03-14")), run.Completed),
	}
	load := func(t *testing.T) store.Store {
		s := o.New(t)
		var a, b store.Change
		for i, r := range seed {
			c := &a
			if i%2 == 1 {
				c = &b
			}
			c.Runs = append(c.Runs, store.RunWrite{Run: r})
		}
		commit(t, s, a)
		commit(t, s, b)
		return s
	}
	// Every run, newest period first, then by pipeline, then schedule.
	newestFirst := []string{
		"orders/hourly/2026-03-14T06",
		"orders/hourly/2026-03-14T05",
		"billing/daily/2026-03-14",
		"orders/daily/2026-03-14",
		"billing/daily/2026-03-13",
		"orders/daily/2026-03-13",
		"orders/daily/2026-03-12",
	}

	checkLists(t, load, "RunList", store.Store.RunList, runID, []listCase[store.RunListParams]{
		{"AllNewestPeriodFirstThenPipelineThenSchedule", store.RunListParams{}, newestFirst},
		{"ByPipeline", store.RunListParams{PipelineID: "billing"}, []string{
			"billing/daily/2026-03-14",
			"billing/daily/2026-03-13",
		}},
		{"ByPipelineAndSchedule", store.RunListParams{PipelineID: "orders", ScheduleID: "daily"}, []string{
			"orders/daily/2026-03-14",
			"orders/daily/2026-03-13",
			"orders/daily/2026-03-12",
		}},
		{"ByScheduleAndPeriod", store.RunListParams{PipelineID: "orders", ScheduleID: "daily", Period: "2026-03-13"}, []string{
			"orders/daily/2026-03-13",
		}},
		{"ByPeriodIsExact", store.RunListParams{PipelineID: "orders", Period: "2026-03-14"}, []string{
			// "2026-03-14T05" is a different period, not a match by prefix.
			"orders/daily/2026-03-14",
		}},
		// A period range: the hours of a day, not the day itself nor the
		// next day (an upstream rule with hours: all reads this).
		{"PeriodRangeOfScheduleHoldsTheHoursOfADay", store.RunListParams{PipelineID: "orders", ScheduleID: "hourly", PeriodFrom: "2026-03-14T00", PeriodTo: "2026-03-14T05"}, []string{
			"orders/hourly/2026-03-14T05",
		}},
		{"PeriodRangeOfPipeline", store.RunListParams{PipelineID: "orders", PeriodFrom: "2026-03-13", PeriodTo: "2026-03-14"}, []string{
			"orders/daily/2026-03-14",
			"orders/daily/2026-03-13",
		}},
		{"PeriodToAlone", store.RunListParams{PipelineID: "orders", PeriodTo: "2026-03-13"}, []string{
			"orders/daily/2026-03-13",
			"orders/daily/2026-03-12",
		}},
		{"ActiveOnly", store.RunListParams{ActiveOnly: true}, []string{
			"orders/hourly/2026-03-14T06",
			"orders/hourly/2026-03-14T05",
			"orders/daily/2026-03-14",
			"billing/daily/2026-03-13",
		}},
		{"ActiveOnlyOfPipeline", store.RunListParams{PipelineID: "billing", ActiveOnly: true}, []string{
			"billing/daily/2026-03-13",
		}},
		{"Limit", store.RunListParams{PipelineID: "orders", Limit: 2}, []string{
			"orders/hourly/2026-03-14T06",
			"orders/hourly/2026-03-14T05",
		}},
		{"LimitAfterFilter", store.RunListParams{PipelineID: "orders", ActiveOnly: true, ScheduleID: "daily", Limit: 1}, []string{
			"orders/daily/2026-03-14",
		}},
		{"NoMatchIsEmpty", store.RunListParams{PipelineID: "unknown"}, []string{}},

		// PeriodFrom: Period >= PeriodFrom as plain strings.
		{"PeriodFromIncludesTheBoundary", store.RunListParams{PeriodFrom: "2026-03-13"}, newestFirst[:6]},
		{"PeriodFromADayIncludesItsHours", store.RunListParams{PeriodFrom: "2026-03-14"}, newestFirst[:4]},
		{"PeriodFromAnHourExcludesItsDay", store.RunListParams{PeriodFrom: "2026-03-14T05"}, []string{
			// "2026-03-14" < "2026-03-14T05" as text.
			"orders/hourly/2026-03-14T06",
			"orders/hourly/2026-03-14T05",
		}},
		{"PeriodFromAfterTheLastIsEmpty", store.RunListParams{PeriodFrom: "2026-03-14T07"}, []string{}},
		{"PeriodFromBeforeTheFirstKeepsAll", store.RunListParams{PeriodFrom: "2026-01-01"}, newestFirst},
		{"PeriodFromOfPipeline", store.RunListParams{PipelineID: "billing", PeriodFrom: "2026-03-14"}, []string{
			"billing/daily/2026-03-14",
		}},
		{"PeriodFromOfSchedule", store.RunListParams{PipelineID: "orders", ScheduleID: "daily", PeriodFrom: "2026-03-13"}, []string{
			"orders/daily/2026-03-14",
			"orders/daily/2026-03-13",
		}},
		{"PeriodFromActiveOnlyOfPipeline", store.RunListParams{PipelineID: "orders", ActiveOnly: true, PeriodFrom: "2026-03-14"}, []string{
			"orders/hourly/2026-03-14T06",
			"orders/hourly/2026-03-14T05",
			"orders/daily/2026-03-14",
		}},
		{"PeriodFromLimitKeepsTheNewest", store.RunListParams{PeriodFrom: "2026-03-13", Limit: 3}, newestFirst[:3]},
	})

	t.Run("ReturnsWholeRecords", func(t *testing.T) {
		s := o.New(t)
		want := fullRun(key("orders", "daily", "2026-03-14"))
		commit(t, s, putRun(want, 0))
		want.Version = 1
		mustMatch(t, "RunList", must(s.RunList(t.Context(), store.RunListParams{})).get(t), []run.Run{want})
	})

	t.Run("PeriodFromReadsThePeriodNotTheTimes", func(t *testing.T) {
		// A run's times say when it was written, not which period it is
		// for: an old period touched today stays out, a recent period
		// written long ago stays in.
		s := o.New(t)
		old := newRun(key("orders", "daily", "2026-03-01"))
		old.CreatedAt, old.UpdatedAt, old.StateSince = at(48*time.Hour), at(48*time.Hour), at(48*time.Hour)
		recent := newRun(key("orders", "daily", "2026-03-14"))
		recent.CreatedAt, recent.UpdatedAt, recent.StateSince = at(-30*24*time.Hour), at(-30*24*time.Hour), at(-30*24*time.Hour)
		commit(t, s, store.Change{Runs: []store.RunWrite{{Run: old}, {Run: recent}}})
		mustMatch(t, "RunList", idsOf(must(s.RunList(t.Context(), store.RunListParams{PeriodFrom: "2026-03-10"})).get(t), runID),
			[]string{"orders/daily/2026-03-14"})
	})

	t.Run("PeriodFromIsDrivenOnlyByTheParameter", func(t *testing.T) {
		// One store asked about different bounds, in any order, answers
		// for each bound: no call narrows or widens the next.
		s := load(t)
		for _, tc := range []struct {
			from string
			want int
		}{{"2026-03-14T07", 0}, {"", 7}, {"2026-03-14", 4}, {"2026-03-14T06", 1}, {"2026-03-12", 7}, {"2026-03-13", 6}, {"2026-03-14", 4}} {
			if got := len(must(s.RunList(t.Context(), store.RunListParams{PeriodFrom: tc.from})).get(t)); got != tc.want {
				t.Errorf("RunList(PeriodFrom %q): %d runs, want %d", tc.from, got, tc.want)
			}
		}
	})

	t.Run("ActiveOnlyFollowsUpdates", func(t *testing.T) {
		// The active set is derived from the state on every write: a run
		// that ends leaves it, a rerun brings it back.
		s := o.New(t)
		r := newRun(key("orders", "daily", "2026-03-14"))
		commit(t, s, putRun(r, 0))
		active := func() int {
			return len(must(s.RunList(t.Context(), store.RunListParams{ActiveOnly: true})).get(t))
		}
		if n := active(); n != 1 {
			t.Fatalf("new run: %d active, want 1", n)
		}
		commit(t, s, putRun(withState(r, run.Completed), 1))
		if n := active(); n != 0 {
			t.Fatalf("completed run: %d active, want 0", n)
		}
		commit(t, s, putRun(withState(r, run.Evaluating), 2))
		if n := active(); n != 1 {
			t.Fatalf("rerun: %d active, want 1", n)
		}
	})
}
