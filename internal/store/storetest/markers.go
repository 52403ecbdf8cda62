package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

func testMarkers(t *testing.T, o Options) {
	testRoundTrip(t, o, "fullMarker", fullMarker(ordersDay, "first-trigger"), func(m store.Marker) store.Change { return putMarker(m, true) },
		func(t *testing.T, s store.Store) (store.Marker, error) {
			return s.MarkerGet(t.Context(), ordersDay, "first-trigger")
		}, nil)

	t.Run("ListOfAPeriodIsThatPeriodsMarkersByKind", func(t *testing.T) {
		s := o.New(t)
		a, b := fullMarker(ordersDay, "sla-warning-sent"), fullMarker(ordersDay, "first-trigger")
		commit(t, s, store.Change{Markers: []store.MarkerWrite{
			{Marker: a}, {Marker: b},
			// The neighbours of the period's key range: another period, an
			// hour of the same day, another schedule, another pipeline.
			{Marker: fullMarker(key("orders", "daily", "2026-03-15"), "first-trigger")},
			{Marker: fullMarker(key("orders", "daily", "2026-03-14T05"), "first-trigger")},
			{Marker: fullMarker(key("orders", "dailyx", "2026-03-14"), "first-trigger")},
			{Marker: fullMarker(key("orders-v2", "daily", "2026-03-14"), "first-trigger")},
		}})
		mustMatch(t, "MarkerListOf", must(s.MarkerListOf(t.Context(), ordersDay)).get(t), []store.Marker{b, a})
		mustMatch(t, "MarkerListOf an empty period", must(s.MarkerListOf(t.Context(), key("orders", "daily", "2026-03-13"))).get(t), []store.Marker{})
	})

	t.Run("GetMissingIsNotFound", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, putMarker(fullMarker(ordersDay, "first-trigger"), false))
		_, err := s.MarkerGet(t.Context(), ordersDay, "alert:SLA_BREACH")
		notFound(t, "MarkerGet of another kind", err)
		_, err = s.MarkerGet(t.Context(), key("orders", "daily", "2026-03-15"), "first-trigger")
		notFound(t, "MarkerGet of another period", err)
	})

	t.Run("IfAbsentConflictsAndKeepsFirst", func(t *testing.T) {
		s := o.New(t)
		first := fullMarker(ordersDay, "first-trigger")
		commit(t, s, putMarker(first, true))
		second := first
		second.At, second.Detail = at(time.Hour), detail("second", "x")
		conflict(t, s, putMarker(second, true))
		mustMatch(t, "MarkerGet", must(s.MarkerGet(t.Context(), ordersDay, "first-trigger")).get(t), first)
	})

	t.Run("WithoutIfAbsentReplaces", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, putMarker(fullMarker(ordersDay, "first-trigger"), false))
		second := fullMarker(ordersDay, "first-trigger")
		second.At, second.Detail = at(time.Hour), detail("second", "x")
		commit(t, s, putMarker(second, false))
		mustMatch(t, "MarkerGet", must(s.MarkerGet(t.Context(), ordersDay, "first-trigger")).get(t), second)
	})

	t.Run("DeleteRemovesOnlyThatKind", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Markers: []store.MarkerWrite{
			{Marker: fullMarker(ordersDay, "first-trigger")}, {Marker: fullMarker(ordersDay, "alert:SLA_BREACH")},
		}})
		commit(t, s, store.Change{MarkerDeletes: []store.MarkerDelete{{Key: ordersDay, Kind: "first-trigger"}}})
		_, err := s.MarkerGet(t.Context(), ordersDay, "first-trigger")
		notFound(t, "deleted marker", err)
		if _, err := s.MarkerGet(t.Context(), ordersDay, "alert:SLA_BREACH"); err != nil {
			t.Fatalf("other marker of the period: %v", err)
		}
		// Deleted means absent: IfAbsent succeeds again.
		commit(t, s, putMarker(fullMarker(ordersDay, "first-trigger"), true))
	})

	t.Run("DeleteOfMissingIsFine", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{MarkerDeletes: []store.MarkerDelete{{Key: ordersDay, Kind: "never"}}})
	})

	t.Run("EmptyDetailRoundTrips", func(t *testing.T) {
		s := o.New(t)
		want := store.Marker{Key: ordersDay, Kind: "dry-run:would-trigger", At: at(0)}
		commit(t, s, putMarker(want, true))
		mustMatch(t, "MarkerGet", must(s.MarkerGet(t.Context(), ordersDay, want.Kind)).get(t), want)
	})

	// List: seeded in one commit, out of order.
	seed := []run.Key{
		key("orders", "daily", "2026-03-14"),
		key("billing", "daily", "2026-03-14"),
		key("orders", "daily", "2026-03-13"),
		key("orders", "hourly", "2026-03-14T05"),
	}
	kinds := map[run.Key][]string{
		seed[0]: {"first-trigger", "alert:SLA_BREACH"},
		seed[1]: {"first-trigger"},
		seed[2]: {"alert:SLA_BREACH"},
		seed[3]: {"first-trigger"},
	}
	load := func(t *testing.T) store.Store {
		var c store.Change
		for _, k := range seed {
			for _, kind := range kinds[k] {
				c.Markers = append(c.Markers, store.MarkerWrite{Marker: fullMarker(k, kind), IfAbsent: true})
			}
		}
		return seeded(t, o, c)
	}
	checkLists(t, load, "MarkerList", store.Store.MarkerList, markerID, []listCase[store.MarkerListParams]{
		{"ListAllSortedByPipelineSchedulePeriodKind", store.MarkerListParams{}, []string{
			"billing/daily/2026-03-14 first-trigger",
			"orders/daily/2026-03-13 alert:SLA_BREACH",
			"orders/daily/2026-03-14 alert:SLA_BREACH",
			"orders/daily/2026-03-14 first-trigger",
			"orders/hourly/2026-03-14T05 first-trigger",
		}},
		{"ListSinceAfterEveryMarkerIsEmpty", store.MarkerListParams{Since: farFuture}, []string{}},
	})
}
