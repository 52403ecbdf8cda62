package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// testConditionFacts checks store.ConditionFactsOf over the backend: the
// facts of one period, its run found under either schedule id, its
// markers and nobody else's.
func testConditionFacts(t *testing.T, o Options) {
	k := key("orders", pipeline.ScheduleCron, "2099-03-14")

	t.Run("EmptyPeriodHasNoFacts", func(t *testing.T) {
		s := o.New(t)
		f, err := store.ConditionFactsOf(t.Context(), s, k)
		if err != nil {
			t.Fatal(err)
		}
		mustMatch(t, "facts", f, deps.ConditionFacts{})
	})

	t.Run("ReadsRowRunAndMarkersOfThePeriod", func(t *testing.T) {
		s := o.New(t)
		p := fullPipeline("orders")
		commit(t, s, createPipeline(p))
		r := withState(newRun(k), run.Completed)
		r.EndedAt = at(time.Hour)
		commit(t, s, putRun(r, 0))
		commit(t, s, store.Change{Markers: []store.MarkerWrite{
			{Marker: store.Marker{Key: k, Kind: run.MarkerRecovered, At: at(time.Minute)}},
			{Marker: store.Marker{Key: k, Kind: run.MarkerPostRunArrived, At: at(2 * time.Hour)}},
			{Marker: store.Marker{Key: k, Kind: run.MarkerSLABreach, At: at(3 * time.Minute)}},
			{Marker: store.Marker{Key: k, Kind: run.MarkerFirstArrival, At: at(4 * time.Minute)}},
			// A neighbour period's marker is not this period's fact.
			{Marker: store.Marker{Key: key("orders", pipeline.ScheduleCron, "2099-03-15"), Kind: run.MarkerSLAWarning, At: at(0)}},
		}})
		f, err := store.ConditionFactsOf(t.Context(), s, k)
		if err != nil {
			t.Fatal(err)
		}
		if f.Run == nil || f.Run.State != run.Completed || !f.Run.EndedAt.Equal(at(time.Hour)) {
			t.Fatalf("run = %+v", f.Run)
		}
		if !f.Paused || !f.FirstLoaded.Equal(p.FirstLoadedAt) {
			t.Errorf("row facts: paused %v, first loaded %v", f.Paused, f.FirstLoaded)
		}
		if !f.Recovered || !f.PostRunArrived.Equal(at(2*time.Hour)) || !f.Marks.Breach || f.Marks.Warning || !f.Marks.FirstArrival.Equal(at(4*time.Minute)) {
			t.Errorf("marker facts = %+v", f)
		}
	})

	t.Run("RunUnderTheOtherScheduleID", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, putRun(withState(newRun(run.OtherSchedule(k)), run.FailedFinal), 0))
		f, err := store.ConditionFactsOf(t.Context(), s, k)
		if err != nil {
			t.Fatal(err)
		}
		if f.Run == nil || f.Run.State != run.FailedFinal {
			t.Fatalf("run = %+v", f.Run)
		}
	})
}
