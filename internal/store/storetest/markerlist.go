package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// testMarkerList checks MarkerList's PeriodFrom, over markers of
// every scope: global (empty key), pipeline-level (empty schedule and
// period) and per period, daily and hourly. An hourly period that sorts
// before a daily one shows the order is schedule before period.
func testMarkerList(t *testing.T, o Options) {
	seed := []struct {
		key   run.Key
		kinds []string
	}{
		{key("orders", "daily", "2026-03-14"), []string{"sla-warning", "first-trigger"}},
		{key("", "", ""), []string{"watchdog:pass"}},
		{key("billing", "daily", "2026-03-13"), []string{"sla-breach"}},
		{key("orders", "hourly", "2026-03-14T05"), []string{"first-trigger"}},
		{key("orders", "", ""), []string{"paused"}},
		{key("orders", "daily", "2026-03-12"), []string{"first-trigger"}},
		{key("billing", "daily", "2026-03-14"), []string{"first-trigger"}},
		{key("orders", "daily", "2026-03-13"), []string{"sla-breach", "first-trigger"}},
		{key("orders", "hourly", "2026-03-13T23"), []string{"first-trigger"}},
	}
	load := func(t *testing.T) store.Store {
		s := o.New(t)
		var c store.Change
		for _, m := range seed {
			for _, kind := range m.kinds {
				c.Markers = append(c.Markers, store.MarkerWrite{Marker: fullMarker(m.key, kind), IfAbsent: true})
			}
		}
		commit(t, s, c)
		return s
	}
	ids := func(ms []store.Marker) []string {
		out := []string{}
		for _, m := range ms {
			out = append(out, keyString(m.Key)+" "+m.Kind)
		}
		return out
	}

	tests := []struct {
		name   string
		params store.MarkerListParams
		want   []string
	}{
		{"NoFilterListsEveryScope", store.MarkerListParams{}, []string{
			"// watchdog:pass",
			"billing/daily/2026-03-13 sla-breach",
			"billing/daily/2026-03-14 first-trigger",
			"orders// paused",
			"orders/daily/2026-03-12 first-trigger",
			"orders/daily/2026-03-13 first-trigger",
			"orders/daily/2026-03-13 sla-breach",
			"orders/daily/2026-03-14 first-trigger",
			"orders/daily/2026-03-14 sla-warning",
			"orders/hourly/2026-03-13T23 first-trigger",
			"orders/hourly/2026-03-14T05 first-trigger",
		}},

		// PeriodFrom: period >= PeriodFrom as plain strings.
		{"PeriodFromIncludesTheBoundary", store.MarkerListParams{PeriodFrom: "2026-03-13"}, []string{
			"billing/daily/2026-03-13 sla-breach",
			"billing/daily/2026-03-14 first-trigger",
			"orders/daily/2026-03-13 first-trigger",
			"orders/daily/2026-03-13 sla-breach",
			"orders/daily/2026-03-14 first-trigger",
			"orders/daily/2026-03-14 sla-warning",
			"orders/hourly/2026-03-13T23 first-trigger",
			"orders/hourly/2026-03-14T05 first-trigger",
		}},
		{"PeriodFromADayIncludesItsHours", store.MarkerListParams{PeriodFrom: "2026-03-14"}, []string{
			"billing/daily/2026-03-14 first-trigger",
			"orders/daily/2026-03-14 first-trigger",
			"orders/daily/2026-03-14 sla-warning",
			"orders/hourly/2026-03-14T05 first-trigger",
		}},
		{"PeriodFromAnHourExcludesItsDay", store.MarkerListParams{PeriodFrom: "2026-03-14T05"}, []string{
			"orders/hourly/2026-03-14T05 first-trigger",
		}},
		{"PeriodFromAfterTheLastIsEmpty", store.MarkerListParams{PeriodFrom: "2026-03-14T06"}, []string{}},
		{"PeriodFromBeforeEveryDateExcludesEmptyPeriods", store.MarkerListParams{PeriodFrom: "0000-01-01"}, []string{
			// The global and pipeline-level markers have period "", which
			// is less than any date.
			"billing/daily/2026-03-13 sla-breach",
			"billing/daily/2026-03-14 first-trigger",
			"orders/daily/2026-03-12 first-trigger",
			"orders/daily/2026-03-13 first-trigger",
			"orders/daily/2026-03-13 sla-breach",
			"orders/daily/2026-03-14 first-trigger",
			"orders/daily/2026-03-14 sla-warning",
			"orders/hourly/2026-03-13T23 first-trigger",
			"orders/hourly/2026-03-14T05 first-trigger",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := load(t)
			mustMatch(t, "MarkerList", ids(must(s.MarkerList(t.Context(), tc.params)).get(t)), tc.want)
		})
	}

	t.Run("PeriodFromReadsThePeriodNotAt", func(t *testing.T) {
		// At says when a marker was written, not which period it is about.
		s := o.New(t)
		old := fullMarker(key("orders", "daily", "2026-03-01"), "sla-breach")
		old.At = at(48 * time.Hour)
		recent := fullMarker(key("orders", "daily", "2026-03-14"), "sla-breach")
		recent.At = at(-30 * 24 * time.Hour)
		commit(t, s, store.Change{Markers: []store.MarkerWrite{{Marker: old}, {Marker: recent}}})
		mustMatch(t, "MarkerList", ids(must(s.MarkerList(t.Context(), store.MarkerListParams{PeriodFrom: "2026-03-10"})).get(t)),
			[]string{"orders/daily/2026-03-14 sla-breach"})
	})

	t.Run("ReturnsWholeRecords", func(t *testing.T) {
		s := o.New(t)
		want := fullMarker(key("orders", "daily", "2026-03-14"), "sla-breach")
		commit(t, s, putMarker(want, true))
		got := must(s.MarkerList(t.Context(), store.MarkerListParams{PeriodFrom: "2026-03-14"})).get(t)
		mustMatch(t, "MarkerList", got, []store.Marker{want})
	})

	t.Run("IsDrivenOnlyByTheParameters", func(t *testing.T) {
		// One store asked different questions, in any order, answers each
		// on its own: no call narrows or widens the next.
		s := load(t)
		for _, tc := range []struct {
			params store.MarkerListParams
			want   int
		}{
			{store.MarkerListParams{PeriodFrom: "2026-03-14T06"}, 0},
			{store.MarkerListParams{}, 11},
			{store.MarkerListParams{PeriodFrom: "2026-03-14"}, 4},
			{store.MarkerListParams{PeriodFrom: "2026-03-13"}, 8},
			{store.MarkerListParams{}, 11},
		} {
			if got := len(must(s.MarkerList(t.Context(), tc.params)).get(t)); got != tc.want {
				t.Errorf("MarkerList(%+v): %d markers, want %d", tc.params, got, tc.want)
			}
		}
	})
}
