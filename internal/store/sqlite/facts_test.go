package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
	"github.com/interlockhq/interlock/internal/store/storetest"
)

// TestFactsQueryPlans: every statement of Facts reads its table by the
// whole primary key, whatever the number of keys: its cost follows the
// keys named, never the table's history (a pipeline's every marker, a
// period index walked for another pipeline's rows).
func TestFactsQueryPlans(t *testing.T) {
	s := openFile(t)
	for _, n := range []int{1, 2, 7} {
		for _, tc := range []struct{ q, want string }{
			{keysQuery(sqlstore.PipelineCols, "pipelines", "id", n), "SEARCH pipelines USING PRIMARY KEY (id=?)"},
			{keysQuery(sqlstore.TimerCols, "timers", "key", n), "SEARCH timers USING PRIMARY KEY (key=?)"},
			{sensorsQuery(n), "SEARCH sensors USING PRIMARY KEY (pipeline_id=? AND key=?)"},
			{periodsQuery(sqlstore.RunCols, "runs", "", n), "SEARCH runs USING PRIMARY KEY (pipeline_id=? AND schedule_id=? AND period=?)"},
			{periodsQuery(sqlstore.BaselineCols, "baselines", "", n), "SEARCH baselines USING PRIMARY KEY (pipeline_id=? AND schedule_id=? AND period=?)"},
			{periodsQuery(sqlstore.MarkerCols, "markers", "kind", n), "SEARCH markers USING PRIMARY KEY (pipeline_id=? AND schedule_id=? AND period=?)"},
			// The period index holds the primary key's columns too: as
			// narrow, and LedgerList's own plan.
			{periodsQuery(sqlstore.LedgerCols, "ledger", "seq", n), "SEARCH ledger USING INDEX ledger_period (period=? AND pipeline_id=? AND schedule_id=?)"},
		} {
			args := make([]any, strings.Count(tc.q, "?"))
			for i := range args {
				args[i] = "x"
			}
			plan := strings.Join(explain(t, s, tc.q, args), " | ")
			if !strings.Contains(plan, tc.want) {
				t.Errorf("%d keys: plan %q does not contain %q\n%s", n, plan, tc.want, tc.q)
			}
		}
	}
}

// BenchmarkFacts compares Facts with the single reads (store.ReadFactsSingly,
// and readsOfAStep: the engine's reads of a step before Facts)
// for a step's typical query — its timer, run, pipeline row, the period's
// markers and three sensors — over a month of one pipeline's history, on
// a file store (WAL, reader pool) and a scratch store (one connection,
// pipeline, run and timer caches: what simulate opens).
func BenchmarkFacts(b *testing.B) {
	base := time.Date(2026, time.March, 1, 0, 0, 0, 0, time.UTC)
	period := func(d int) run.Key {
		return run.Key{PipelineID: "orders", ScheduleID: "daily", Period: base.AddDate(0, 0, d).Format("2006-01-02")}
	}
	seed := func(b *testing.B, s *Store) {
		doc := []byte("name: orders\nschedule: {cron: \"0 6 * * *\"}\n" + strings.Repeat("# padding of a real document\n", 40))
		if err := s.Commit(b.Context(), store.Change{Pipelines: []store.PipelineWrite{{Pipeline: store.Pipeline{ID: "orders", Doc: doc, UpdatedAt: base}}}}); err != nil {
			b.Fatal(err)
		}
		for d := range 30 {
			k := period(d)
			var c store.Change
			c.Runs = append(c.Runs, store.RunWrite{Run: run.Run{Key: k, State: run.Running, CreatedAt: base, UpdatedAt: base, StateSince: base}})
			c.Markers = append(c.Markers, store.MarkerWrite{Marker: store.Marker{Key: k, Kind: "first-trigger", At: base}},
				store.MarkerWrite{Marker: store.Marker{Key: k, Kind: "sla-warning", At: base}})
			for _, key := range []string{"landed", "rows", "quality"} {
				c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: store.Sensor{PipelineID: "orders", Key: key + "#" + k.Period,
					Data: sensor.NewObject(map[string]sensor.Value{"count": sensor.IntValue(int64(d))}), ChangedAt: base, WrittenAt: base}})
			}
			c.Timers = append(c.Timers, store.TimerWrite{Timer: store.Timer{Key: "step#" + k.Period, Kind: "step", Run: k, DueAt: base.Add(time.Hour)}})
			if err := s.Commit(b.Context(), c); err != nil {
				b.Fatal(err)
			}
		}
	}
	k := period(29)
	q := store.FactsQuery{Pipelines: []string{"orders"}, Timers: []string{"step#" + k.Period}, Runs: []run.Key{k}, MarkersOf: []run.Key{k},
		Sensors: []store.SensorRef{{PipelineID: "orders", Key: "landed#" + k.Period}, {PipelineID: "orders", Key: "rows#" + k.Period}, {PipelineID: "orders", Key: "quality#" + k.Period}}}
	for _, kind := range []struct {
		name string
		open func(b *testing.B) *Store
	}{
		{"file", func(b *testing.B) *Store { return benchStore(b, syncNormal) }},
		{"scratch", func(b *testing.B) *Store {
			s, err := OpenScratch(b.Context(), filepath.Join(b.TempDir(), "scratch.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
	} {
		s := kind.open(b)
		seed(b, s)
		for _, read := range []struct {
			name string
			read func(context.Context, store.Store, store.FactsQuery) (store.Facts, error)
		}{{"Facts", store.ReadFacts}, {"single", store.ReadFactsSingly}, {"getmany", readsOfAStep}} {
			b.Run(kind.name+"/"+read.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					f, err := read.read(b.Context(), s, q)
					if err != nil || len(f.Sensors) != 3 || len(f.Markers[k]) != 2 || len(f.Runs)+len(f.Timers)+len(f.Pipelines) != 3 {
						b.Fatalf("read %+v, %v", f, err)
					}
				}
			})
		}
	}
}

// TestFactsSnapshot: Facts reads one snapshot on a file store, whose
// readers run beside the writer, and on a scratch store.
func TestFactsSnapshot(t *testing.T) {
	t.Run("file", func(t *testing.T) { storetest.FactsSnapshot(t, openFile(t)) })
	t.Run("scratch", func(t *testing.T) {
		s, err := OpenScratch(t.Context(), filepath.Join(t.TempDir(), "scratch.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		storetest.FactsSnapshot(t, s)
	})
}

// readsOfAStep reads q as the engine read a step's facts before Facts: one
// read per record, the sensors of the pipeline in one SensorGetMany.
func readsOfAStep(ctx context.Context, s store.Store, q store.FactsQuery) (store.Facts, error) {
	f := store.NewFacts()
	p, err := s.PipelineGet(ctx, q.Pipelines[0])
	if err != nil {
		return f, err
	}
	f.Pipelines[p.ID] = p
	t, err := s.TimerGet(ctx, q.Timers[0])
	if err != nil {
		return f, err
	}
	f.Timers[t.Key] = t
	r, err := s.RunGet(ctx, q.Runs[0])
	if err != nil {
		return f, err
	}
	f.Runs[r.Key] = r
	if f.Markers[r.Key], err = s.MarkerListOf(ctx, q.MarkersOf[0]); err != nil {
		return f, err
	}
	keys := make([]string, len(q.Sensors))
	for i, x := range q.Sensors {
		keys[i] = x.Key
	}
	xs, err := s.SensorGetMany(ctx, store.SensorGetManyParams{PipelineID: q.Sensors[0].PipelineID, Keys: keys})
	for _, x := range xs {
		f.Sensors[store.SensorRef{PipelineID: x.PipelineID, Key: x.Key}] = x
	}
	return f, err
}
