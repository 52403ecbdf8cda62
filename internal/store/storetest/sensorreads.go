package storetest

import (
	"testing"

	"github.com/interlockhq/interlock/internal/store"
)

// testSensorReads checks the scoped sensor reads decisions and operator
// actions use instead of a pipeline's whole sensor list.
func testSensorReads(t *testing.T, o Options) {
	seed := func(t *testing.T, s store.Store) {
		var c store.Change
		for _, k := range []string{"orders", "orders#2026-03-10", "orders#20260310", "orders#2026-03-09",
			"orders-v2#2026-03-10", "order", "ordersz", "orders\xff", "p\xff\xff", "p\xff\xffq", "zz"} {
			c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: minimalSensor("pl", k, 1)})
		}
		c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: minimalSensor("other", "orders", 2)})
		c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: minimalSensor("pl-2", "orders", 3)})
		commit(t, s, c)
	}

	t.Run("GetManyReadsTheKeysNamedOfOnePipeline", func(t *testing.T) {
		s := o.New(t)
		seed(t, s)
		got := must(s.SensorGetMany(t.Context(), store.SensorGetManyParams{PipelineID: "pl",
			Keys: []string{"orders#2026-03-10", "orders", "missing", "orders#20260310", "orders"}})).get(t)
		mustMatch(t, "SensorGetMany keys", idsOf(got, sensorID), []string{"pl/orders", "pl/orders#2026-03-10", "pl/orders#20260310"})
		want := minimalSensor("pl", "orders", 1)
		want.Version = 1
		mustMatch(t, "SensorGetMany first sensor", got[0], want)
	})

	t.Run("GetManyOfNothing", func(t *testing.T) {
		s := o.New(t)
		seed(t, s)
		if got := must(s.SensorGetMany(t.Context(), store.SensorGetManyParams{PipelineID: "pl"})).get(t); got == nil || len(got) != 0 {
			t.Errorf("SensorGetMany with no keys: got %v, want an empty list", got)
		}
		if got := must(s.SensorGetMany(t.Context(), store.SensorGetManyParams{PipelineID: "none", Keys: []string{"orders"}})).get(t); len(got) != 0 {
			t.Errorf("SensorGetMany of an unknown pipeline: got %v, want none", idsOf(got, sensorID))
		}
	})

	t.Run("ListPrefixIsARangeOfOnePipeline", func(t *testing.T) {
		s := o.New(t)
		seed(t, s)
		cases := []struct {
			prefix string
			want   []string
		}{
			{"orders", []string{"pl/orders", "pl/orders#2026-03-09", "pl/orders#2026-03-10", "pl/orders#20260310",
				"pl/orders-v2#2026-03-10", "pl/ordersz", "pl/orders\xff"}},
			{"orders#", []string{"pl/orders#2026-03-09", "pl/orders#2026-03-10", "pl/orders#20260310"}},
			{"orders#2026-03-10", []string{"pl/orders#2026-03-10"}},
			// The last byte cannot be incremented: the range ends after it.
			{"p\xff\xff", []string{"pl/p\xff\xff", "pl/p\xff\xffq"}},
			{"nothing", []string{}},
			{"", []string{"pl/order", "pl/orders", "pl/orders#2026-03-09", "pl/orders#2026-03-10", "pl/orders#20260310",
				"pl/orders-v2#2026-03-10", "pl/ordersz", "pl/orders\xff", "pl/p\xff\xff", "pl/p\xff\xffq", "pl/zz"}},
		}
		for _, c := range cases {
			got := must(s.SensorListPrefix(t.Context(), store.SensorListPrefixParams{PipelineID: "pl", Prefix: c.prefix})).get(t)
			mustMatch(t, "SensorListPrefix("+c.prefix+") keys", idsOf(got, sensorID), c.want)
		}
	})
}
