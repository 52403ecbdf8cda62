package storetest

import (
	"slices"
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
	var all store.Change
	for _, m := range seed {
		for _, kind := range m.kinds {
			all.Markers = append(all.Markers, store.MarkerWrite{Marker: fullMarker(m.key, kind), IfAbsent: true})
		}
	}
	load := func(t *testing.T) store.Store { return seeded(t, o, all) }
	// Every marker of a dated period, in the listed order.
	dated := []string{
		"billing/daily/2026-03-13 sla-breach",
		"billing/daily/2026-03-14 first-trigger",
		"orders/daily/2026-03-12 first-trigger",
		"orders/daily/2026-03-13 first-trigger",
		"orders/daily/2026-03-13 sla-breach",
		"orders/daily/2026-03-14 first-trigger",
		"orders/daily/2026-03-14 sla-warning",
		"orders/hourly/2026-03-13T23 first-trigger",
		"orders/hourly/2026-03-14T05 first-trigger",
	}

	checkLists(t, load, "MarkerList", store.Store.MarkerList, markerID, []listCase[store.MarkerListParams]{
		// The global marker sorts first (pipeline ""), the pipeline-level one
		// first of its pipeline (schedule "").
		{"NoFilterListsEveryScope", store.MarkerListParams{}, slices.Concat([]string{"// watchdog:pass"}, dated[:2], []string{"orders// paused"}, dated[2:])},

		// PeriodFrom: period >= PeriodFrom as plain strings.
		{"PeriodFromIncludesTheBoundary", store.MarkerListParams{PeriodFrom: "2026-03-13"}, without(dated, "orders/daily/2026-03-12 first-trigger")},
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
		// The global and pipeline-level markers have period "", which is
		// less than any date.
		{"PeriodFromBeforeEveryDateExcludesEmptyPeriods", store.MarkerListParams{PeriodFrom: "0000-01-01"}, dated},
	})

	t.Run("PeriodFromReadsThePeriodNotAt", func(t *testing.T) {
		// At says when a marker was written, not which period it is about.
		s := o.New(t)
		old := fullMarker(key("orders", "daily", "2026-03-01"), "sla-breach")
		old.At = at(48 * time.Hour)
		recent := fullMarker(key("orders", "daily", "2026-03-14"), "sla-breach")
		recent.At = at(-30 * 24 * time.Hour)
		commit(t, s, store.Change{Markers: []store.MarkerWrite{{Marker: old}, {Marker: recent}}})
		mustMatch(t, "MarkerList", idsOf(must(s.MarkerList(t.Context(), store.MarkerListParams{PeriodFrom: "2026-03-10"})).get(t), markerID),
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
