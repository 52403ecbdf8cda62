package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

func testBaselines(t *testing.T, o Options) {
	testRoundTrip(t, o, "fullBaseline", fullBaseline(ordersDay), func(b store.Baseline) store.Change { return store.Change{Baselines: []store.Baseline{b}} },
		func(t *testing.T, s store.Store) (store.Baseline, error) {
			return s.BaselineGet(t.Context(), ordersDay)
		}, nil)

	t.Run("GetMissingIsNotFound", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Baselines: []store.Baseline{fullBaseline(ordersDay)}})
		_, err := s.BaselineGet(t.Context(), key("orders", "daily", "2026-03-13"))
		notFound(t, "BaselineGet of another period", err)
	})

	t.Run("PutReplacesWhole", func(t *testing.T) {
		// A rerun's success captures a new baseline; sensors of the old one
		// that are not in the new one must not linger.
		s := o.New(t)
		commit(t, s, store.Change{Baselines: []store.Baseline{fullBaseline(ordersDay)}})
		second := store.Baseline{Key: ordersDay, CapturedAt: at(2 * time.Hour), Sensors: map[string]sensor.Object{
			"orders-count": detail("rows", "2"),
		}}
		commit(t, s, store.Change{Baselines: []store.Baseline{second}})
		mustMatch(t, "BaselineGet", must(s.BaselineGet(t.Context(), ordersDay)).get(t), second)
	})

	t.Run("DeleteThenDeleteMissing", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Baselines: []store.Baseline{fullBaseline(ordersDay)}})
		commit(t, s, store.Change{BaselineDelete: []run.Key{ordersDay}})
		_, err := s.BaselineGet(t.Context(), ordersDay)
		notFound(t, "deleted baseline", err)
		commit(t, s, store.Change{BaselineDelete: []run.Key{ordersDay}})
	})

	t.Run("NoSensorsRoundTrips", func(t *testing.T) {
		s := o.New(t)
		want := store.Baseline{Key: ordersDay, CapturedAt: at(0)}
		commit(t, s, store.Change{Baselines: []store.Baseline{want}})
		mustMatch(t, "BaselineGet", must(s.BaselineGet(t.Context(), ordersDay)).get(t), want)
	})
}
