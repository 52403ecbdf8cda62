package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/store"
)

// testSensorListChanged checks SensorListChanged: the sensors whose
// ChangedAt is at or after Since, earliest first, ties by pipeline, then
// key; across pipelines the watched ones only, of one pipeline all.
func testSensorListChanged(t *testing.T, o Options) {
	sensorAt := func(pipeline, k string, changed, written time.Time) store.Sensor {
		s := minimalSensor(pipeline, k, 1)
		s.ChangedAt, s.WrittenAt, s.Watched = changed, written, true
		return s
	}
	unwatched := func(pipeline, k string, changed time.Time) store.Sensor {
		s := minimalSensor(pipeline, k, 1)
		s.ChangedAt, s.WrittenAt = changed, changed
		return s
	}
	// Written in an order unlike the expected one. Three sensors changed
	// at the same instant (one written in another zone), in an order where
	// pipeline-then-key and key-then-pipeline differ; one a nanosecond
	// later; "stale" was re-written identically an hour after t0, which
	// moved only its WrittenAt; "unchanged" has a zero ChangedAt. The
	// "unwatched" ones are listed by pipeline, never across pipelines.
	seed := []store.Sensor{
		unwatched("billing", "unwatched", at(0)),
		unwatched("orders", "unwatched", at(-48*time.Hour)),
		sensorAt("orders", "orders-ready", at(time.Minute), at(time.Minute)),
		sensorAt("orders", "orders-count", at(0), at(0)),
		sensorAt("orders", "stale", at(-24*time.Hour), at(time.Hour)),
		sensorAt("billing", "orders-count", at(0), at(0)),
		sensorAt("orders", "late-by-a-nanosecond", at(time.Nanosecond), at(time.Nanosecond)),
		sensorAt("billing", "unchanged", time.Time{}, at(0)),
		sensorAt("orders", "a-first", at(0).In(elsewhere), at(0)),
	}
	var all store.Change
	for _, x := range seed {
		all.Sensors = append(all.Sensors, store.SensorWrite{Sensor: x})
	}
	load := func(t *testing.T) store.Store { return seeded(t, o, all) }
	ids := func(ss []store.Sensor) []string { return idsOf(ss, sensorID) }
	fromT0 := []string{
		"billing/orders-count", "orders/a-first", "orders/orders-count",
		"orders/late-by-a-nanosecond", "orders/orders-ready",
	}

	checkLists(t, load, "SensorListChanged", store.Store.SensorListChanged, sensorID, []listCase[store.SensorListChangedParams]{
		{"ZeroSinceListsAllEarliestFirst", store.SensorListChangedParams{Watched: true}, []string{
			// The zero time is the earliest of all.
			"billing/unchanged", "orders/stale",
			"billing/orders-count", "orders/a-first", "orders/orders-count",
			"orders/late-by-a-nanosecond", "orders/orders-ready",
		}},
		{"SinceIsInclusive", store.SensorListChangedParams{Since: at(0), Watched: true}, fromT0},
		{"SinceInAnotherZoneIsTheSameInstant", store.SensorListChangedParams{Since: at(0).In(elsewhere), Watched: true}, fromT0},
		{"SinceOneNanosecondEarlier", store.SensorListChangedParams{Since: at(-time.Nanosecond), Watched: true}, fromT0},
		{"SinceOneNanosecondLater", store.SensorListChangedParams{Since: at(time.Nanosecond), Watched: true}, []string{
			"orders/late-by-a-nanosecond", "orders/orders-ready",
		}},
		{"SinceAfterEveryChangeIsEmpty", store.SensorListChangedParams{Since: at(time.Minute + time.Nanosecond), Watched: true}, []string{}},
		{"WrittenAtDoesNotCount", store.SensorListChangedParams{Since: at(30 * time.Second), Watched: true}, []string{
			// "stale" was written at t0+1h, but changed a day before.
			"orders/orders-ready",
		}},
		{"NonZeroSinceExcludesAZeroChangedAt", store.SensorListChangedParams{Since: at(-48 * time.Hour), Watched: true}, []string{
			"orders/stale",
			"billing/orders-count", "orders/a-first", "orders/orders-count",
			"orders/late-by-a-nanosecond", "orders/orders-ready",
		}},
		{"ByPipeline", store.SensorListChangedParams{PipelineID: "billing"}, []string{
			"billing/unchanged", "billing/orders-count", "billing/unwatched",
		}},
		{"ByPipelineListsUnwatched", store.SensorListChangedParams{PipelineID: "orders", Since: at(-48 * time.Hour)}, []string{
			"orders/unwatched", "orders/stale", "orders/a-first", "orders/orders-count", "orders/late-by-a-nanosecond", "orders/orders-ready",
		}},
		{"ByPipelineSince", store.SensorListChangedParams{PipelineID: "orders", Since: at(0)}, []string{
			"orders/a-first", "orders/orders-count", "orders/late-by-a-nanosecond", "orders/orders-ready",
		}},
		{"UnknownPipelineIsEmpty", store.SensorListChangedParams{PipelineID: "unknown"}, []string{}},
		{"LimitKeepsTheEarliest", store.SensorListChangedParams{Since: at(0), Limit: 2, Watched: true}, []string{
			"billing/orders-count", "orders/a-first",
		}},
		{"LimitAfterFilter", store.SensorListChangedParams{PipelineID: "orders", Since: at(0), Limit: 1}, []string{
			"orders/a-first",
		}},
		{"LimitLargerThanMatches", store.SensorListChangedParams{Since: at(time.Nanosecond), Limit: 10, Watched: true}, []string{
			"orders/late-by-a-nanosecond", "orders/orders-ready",
		}},
	})

	t.Run("RefusesWhatNoIndexServes", func(t *testing.T) {
		// Across pipelines the index holds watched sensors only; a
		// pipeline's holds them all, so it takes no Watched.
		s := load(t)
		for _, p := range []store.SensorListChangedParams{{}, {Since: at(0)}, {PipelineID: "orders", Watched: true}} {
			if got, err := s.SensorListChanged(t.Context(), p); !errors.Is(err, store.ErrUnservedRead) {
				t.Errorf("SensorListChanged(%+v) = %d sensors, %v; want ErrUnservedRead", p, len(got), err)
			}
		}
	})

	t.Run("FollowsWatchedThroughRewrites", func(t *testing.T) {
		// Watched is decided at each write: a sensor joins and leaves the
		// read across pipelines as it is re-written, and is listed by its
		// pipeline either way.
		s := o.New(t)
		across := func() []string {
			return ids(must(s.SensorListChanged(t.Context(), store.SensorListChangedParams{Watched: true})).get(t))
		}
		x := unwatched("orders", "orders-ready", at(0))
		commit(t, s, putSensor(x, 0))
		mustMatch(t, "unwatched", across(), []string{})
		x.Watched = true
		commit(t, s, putSensor(x, 1))
		mustMatch(t, "watched", across(), []string{"orders/orders-ready"})
		x.Watched = false
		commit(t, s, putSensor(x, 2))
		mustMatch(t, "unwatched again", across(), []string{})
		got := must(s.SensorGet(t.Context(), "orders", "orders-ready")).get(t)
		if got.Watched {
			t.Fatalf("SensorGet after an unwatched write: Watched %v", got.Watched)
		}
		mustMatch(t, "by pipeline", ids(must(s.SensorListChanged(t.Context(), store.SensorListChangedParams{PipelineID: "orders"})).get(t)), []string{"orders/orders-ready"})
	})

	t.Run("EmptyStoreIsEmpty", func(t *testing.T) {
		s := o.New(t)
		if got := must(s.SensorListChanged(t.Context(), store.SensorListChangedParams{Watched: true})).get(t); len(got) != 0 {
			t.Fatalf("SensorListChanged on an empty store: %d sensors, want none", len(got))
		}
	})

	t.Run("ReturnsWholeRecords", func(t *testing.T) {
		s := o.New(t)
		want := fullSensor("orders", "orders-count")
		commit(t, s, putSensor(want, 0))
		want.Version = 1
		got := must(s.SensorListChanged(t.Context(), store.SensorListChangedParams{Since: want.ChangedAt, Watched: true})).get(t)
		mustMatch(t, "SensorListChanged", got, []store.Sensor{want})
	})

	t.Run("FollowsChangesNotRewrites", func(t *testing.T) {
		// The caller decides what a change is and says so in ChangedAt;
		// the list follows ChangedAt alone, through every kind of write.
		s := o.New(t)
		since := at(time.Minute)
		changed := func() []string {
			return ids(must(s.SensorListChanged(t.Context(), store.SensorListChangedParams{Since: since, Watched: true})).get(t))
		}
		x := sensorAt("orders", "orders-count", at(0), at(0))
		commit(t, s, putSensor(x, 0))
		mustMatch(t, "before any change", changed(), []string{})
		x.WrittenAt = at(2 * time.Minute) // identical content: only WrittenAt moves
		commit(t, s, putSensor(x, 1))
		mustMatch(t, "after an identical re-write", changed(), []string{})
		x = sensorAt("orders", "orders-count", at(3*time.Minute), at(3*time.Minute))
		commit(t, s, putSensor(x, 2))
		mustMatch(t, "after a change", changed(), []string{"orders/orders-count"})
		commit(t, s, store.Change{SensorDeletes: []store.SensorDelete{{PipelineID: "orders", Key: "orders-count"}}})
		mustMatch(t, "after a delete", changed(), []string{})
	})

	t.Run("IsDrivenOnlyByTheParameters", func(t *testing.T) {
		// One store asked about different instants, in any order, answers
		// for each: no call moves a cursor for the next.
		s := load(t)
		for _, tc := range []struct {
			params store.SensorListChangedParams
			want   int
		}{
			{store.SensorListChangedParams{Since: farFuture, Watched: true}, 0},
			{store.SensorListChangedParams{Watched: true}, 7},
			{store.SensorListChangedParams{Since: at(time.Nanosecond), Watched: true}, 2},
			{store.SensorListChangedParams{Since: at(0), Watched: true}, 5},
			{store.SensorListChangedParams{Since: at(0), PipelineID: "billing"}, 2},
			{store.SensorListChangedParams{Since: at(-time.Hour), Watched: true}, 5},
			{store.SensorListChangedParams{Watched: true}, 7},
		} {
			if got := len(must(s.SensorListChanged(t.Context(), tc.params)).get(t)); got != tc.want {
				t.Errorf("SensorListChanged(Since %s, PipelineID %q): %d sensors, want %d",
					tc.params.Since.Format(time.RFC3339Nano), tc.params.PipelineID, got, tc.want)
			}
		}
	})
}
