package storetest

import (
	"errors"
	"testing"

	"github.com/interlockhq/interlock/internal/run"
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

// testSensorFacts checks store.SensorFactsReader, on a store that offers
// it: one request answers what PipelineGet, SensorGet and RunGet answer.
func testSensorFacts(t *testing.T, o Options) {
	s := o.New(t)
	fr, ok := s.(store.SensorFactsReader)
	if !ok {
		t.Log("this store does not offer SensorFactsReader: the engine reads one by one")
		return
	}
	ctx := t.Context()
	k1, k2 := key("pl", "cron", "2026-03-10"), key("pl", "cron", "2026-03-09")
	other := key("other", "cron", "2026-03-10")
	var c store.Change
	c.Pipelines = append(c.Pipelines, store.PipelineWrite{Pipeline: fullPipeline("pl")})
	c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: fullSensor("pl", "orders")}, store.SensorWrite{Sensor: fullSensor("pl", "other")})
	c.Runs = append(c.Runs, store.RunWrite{Run: fullRun(k1)}, store.RunWrite{Run: withState(newRun(k2), run.Completed)}, store.RunWrite{Run: fullRun(other)})
	commit(t, s, c)

	f := must(fr.SensorFacts(ctx, store.SensorFactsParams{PipelineID: "pl", Key: "orders",
		Runs: []run.Key{k1, k2, k1, key("pl", "cron", "2026-03-11"), other}})).get(t)
	if !f.PipelineFound || !f.SensorFound {
		t.Fatalf("SensorFacts found pipeline %v, sensor %v; want both", f.PipelineFound, f.SensorFound)
	}
	mustMatch(t, "SensorFacts pipeline", f.Pipeline, must(s.PipelineGet(ctx, "pl")).get(t))
	mustMatch(t, "SensorFacts sensor", f.Sensor, must(s.SensorGet(ctx, "pl", "orders")).get(t))
	want := map[run.Key]run.Run{}
	for _, k := range []run.Key{k1, k2, other} {
		want[k] = must(s.RunGet(ctx, k)).get(t)
	}
	mustMatch(t, "SensorFacts runs (the absent one left out)", f.Runs, want)
	if !errors.Is(f.InboxErr, store.ErrNotFound) {
		t.Errorf("SensorFacts without Inbox: InboxErr %v, want ErrNotFound", f.InboxErr)
	}

	none := must(fr.SensorFacts(ctx, store.SensorFactsParams{PipelineID: "none", Key: "orders", Runs: []run.Key{key("none", "cron", "2026-03-10")}, Inbox: true})).get(t)
	if none.PipelineFound || none.SensorFound || len(none.Runs) != 0 || !errors.Is(none.InboxErr, store.ErrNotFound) {
		t.Errorf("SensorFacts of an unknown pipeline: %+v, want nothing found", none)
	}
}
