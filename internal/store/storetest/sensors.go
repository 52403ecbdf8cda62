package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

func testSensors(t *testing.T, o Options) {
	testVersionRule(t, o, versionedKind{
		write: func(payload, expect int64) store.Change {
			return putSensor(minimalSensor("orders", "orders-count", payload), expect)
		},
		read: func(t *testing.T, s store.Store) (int64, int64, error) {
			x, err := s.SensorGet(t.Context(), "orders", "orders-count")
			v, _ := x.Data.Get("count")
			n, _ := v.Int()
			return x.Version, n, err
		},
	})

	t.Run("RoundTripsEveryField", func(t *testing.T) {
		s := o.New(t)
		want := fullSensor("orders", "orders-count")
		requireAllSet(t, "fullSensor", want)
		commit(t, s, putSensor(want, 0))
		want.Version = 1
		mustMatch(t, "SensorGet", must(s.SensorGet(t.Context(), "orders", "orders-count")).get(t), want)
		// The typed accessors rules use must see the same values.
		got := must(s.SensorGet(t.Context(), "orders", "orders-count")).get(t)
		checks := []struct {
			field string
			ok    func(sensor.Value) bool
		}{
			{"rows", func(v sensor.Value) bool { f, ok := v.Float(); return ok && f == 1e6 }},
			{"exact", func(v sensor.Value) bool { i, ok := v.Int(); return ok && i == 9007199254740993 }},
			{"text", func(v sensor.Value) bool { s, ok := v.Str(); return ok && s == "5" }},
			{"nothing", func(v sensor.Value) bool { return v.IsNull() }},
		}
		for _, c := range checks {
			v, present := got.Data.Get(c.field)
			if !present || !c.ok(v) {
				t.Errorf("field %s: got %v (present %v)", c.field, v, present)
			}
		}
	})

	t.Run("EmptyDataRoundTrips", func(t *testing.T) {
		s := o.New(t)
		want := store.Sensor{PipelineID: "orders", Key: "ping", ChangedAt: at(0), WrittenAt: at(0)}
		commit(t, s, putSensor(want, 0))
		want.Version = 1
		mustMatch(t, "SensorGet", must(s.SensorGet(t.Context(), "orders", "ping")).get(t), want)
	})

	t.Run("ListIsSortedByKeyAndPerPipeline", func(t *testing.T) {
		s := o.New(t)
		var c store.Change
		for _, k := range []string{"orders-ready", "orders-count", "zz-last", "a-first"} {
			c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: minimalSensor("orders", k, 1)})
		}
		c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: minimalSensor("billing", "orders-count", 2)})
		commit(t, s, c)
		var keys []string
		for _, x := range must(s.SensorList(t.Context(), "orders")).get(t) {
			if x.PipelineID != "orders" {
				t.Errorf("SensorList(orders) returned a sensor of %s", x.PipelineID)
			}
			keys = append(keys, x.Key)
		}
		mustMatch(t, "SensorList(orders) keys", keys, []string{"a-first", "orders-count", "orders-ready", "zz-last"})
		if got := must(s.SensorList(t.Context(), "none")).get(t); len(got) != 0 {
			t.Errorf("SensorList of an unknown pipeline: got %d sensors, want none", len(got))
		}
	})

	t.Run("DeleteRemovesAndRecreateStartsOver", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, putSensor(minimalSensor("orders", "orders-count", 1), 0))
		commit(t, s, putSensor(minimalSensor("orders", "orders-count", 2), 1))
		commit(t, s, store.Change{SensorDeletes: []store.SensorDelete{{PipelineID: "orders", Key: "orders-count"}}})
		_, err := s.SensorGet(t.Context(), "orders", "orders-count")
		notFound(t, "SensorGet after delete", err)
		// Gone means gone: a writer expecting the old version loses, and a
		// create starts again at version 1.
		conflict(t, s, putSensor(minimalSensor("orders", "orders-count", 3), 2))
		commit(t, s, putSensor(minimalSensor("orders", "orders-count", 4), 0))
		if v := must(s.SensorGet(t.Context(), "orders", "orders-count")).get(t).Version; v != 1 {
			t.Fatalf("recreated sensor has version %d, want 1", v)
		}
	})

	t.Run("DeleteOfMissingIsFine", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{SensorDeletes: []store.SensorDelete{{PipelineID: "orders", Key: "never"}}})
	})

	t.Run("DeleteIsPerPipeline", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Sensors: []store.SensorWrite{
			{Sensor: minimalSensor("orders", "shared-key", 1)},
			{Sensor: minimalSensor("billing", "shared-key", 2)},
		}})
		commit(t, s, store.Change{SensorDeletes: []store.SensorDelete{{PipelineID: "orders", Key: "shared-key"}}})
		if _, err := s.SensorGet(t.Context(), "billing", "shared-key"); err != nil {
			t.Fatalf("deleting orders/shared-key removed billing/shared-key: %v", err)
		}
	})

	t.Run("IdenticalRewriteMovesOnlyWrittenAt", func(t *testing.T) {
		// The store keeps what it is given: ChangedAt is the caller's to
		// keep when content is unchanged. Pinned so no backend "helps".
		s := o.New(t)
		first := minimalSensor("orders", "orders-count", 5)
		commit(t, s, putSensor(first, 0))
		again := first
		again.WrittenAt = at(time.Hour)
		commit(t, s, putSensor(again, 1))
		got := must(s.SensorGet(t.Context(), "orders", "orders-count")).get(t)
		if !got.ChangedAt.Equal(first.ChangedAt) || !got.WrittenAt.Equal(again.WrittenAt) {
			t.Fatalf("got ChangedAt %v WrittenAt %v, want %v and %v", got.ChangedAt, got.WrittenAt, first.ChangedAt, again.WrittenAt)
		}
	})
}
