package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

func testBaselines(t *testing.T, o Options) {
	k := key("orders", "daily", "2026-03-14")

	t.Run("RoundTripsEveryField", func(t *testing.T) {
		s := o.New(t)
		want := fullBaseline(k)
		requireAllSet(t, "fullBaseline", want)
		commit(t, s, store.Change{Baselines: []store.Baseline{want}})
		mustMatch(t, "BaselineGet", must(s.BaselineGet(t.Context(), k)).get(t), want)
	})

	t.Run("GetMissingIsNotFound", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Baselines: []store.Baseline{fullBaseline(k)}})
		_, err := s.BaselineGet(t.Context(), key("orders", "daily", "2026-03-13"))
		notFound(t, "BaselineGet of another period", err)
	})

	t.Run("PutReplacesWhole", func(t *testing.T) {
		// A rerun's success captures a new baseline; sensors of the old one
		// that are not in the new one must not linger.
		s := o.New(t)
		commit(t, s, store.Change{Baselines: []store.Baseline{fullBaseline(k)}})
		second := store.Baseline{Key: k, CapturedAt: at(2 * time.Hour), Sensors: map[string]sensor.Object{
			"orders-count": detail("rows", "2"),
		}}
		commit(t, s, store.Change{Baselines: []store.Baseline{second}})
		mustMatch(t, "BaselineGet", must(s.BaselineGet(t.Context(), k)).get(t), second)
	})

	t.Run("DeleteThenDeleteMissing", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{Baselines: []store.Baseline{fullBaseline(k)}})
		commit(t, s, store.Change{BaselineDelete: []run.Key{k}})
		_, err := s.BaselineGet(t.Context(), k)
		notFound(t, "deleted baseline", err)
		commit(t, s, store.Change{BaselineDelete: []run.Key{k}})
	})

	t.Run("NoSensorsRoundTrips", func(t *testing.T) {
		s := o.New(t)
		want := store.Baseline{Key: k, CapturedAt: at(0)}
		commit(t, s, store.Change{Baselines: []store.Baseline{want}})
		mustMatch(t, "BaselineGet", must(s.BaselineGet(t.Context(), k)).get(t), want)
	})
}
