package storetest

import (
	"sync/atomic"
	"testing"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// FactsSnapshot checks that s's Facts reads one snapshot: while a writer
// commits a sensor and a run together, each commit moving both versions
// by one, every Facts read of the two sees them at the same version. A
// backend that reads its statements one after another without a
// transaction sees the pair torn now and then. It is for the backends that
// promise a snapshot (SQLite, PostgreSQL), not part of Run: DynamoDB reads
// each item strongly consistent, with no snapshot across them.
func FactsSnapshot(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := key("snap", "cron", "2026-03-10")
	ref := store.SensorRef{PipelineID: "snap", Key: "a"}
	commit(t, s, store.Change{Sensors: []store.SensorWrite{{Sensor: minimalSensor("snap", "a", 0)}}, Runs: []store.RunWrite{{Run: newRun(k)}}})
	stop, done := make(chan struct{}), make(chan error, 1)
	var writes atomic.Int64
	go func() {
		for v := int64(1); ; v++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			r := newRun(k)
			r.Attempt = int(v)
			if err := s.Commit(ctx, store.Change{Sensors: []store.SensorWrite{{Sensor: minimalSensor("snap", "a", v), ExpectVersion: v}},
				Runs: []store.RunWrite{{Run: r, ExpectVersion: v}}}); err != nil {
				done <- err
				return
			}
			writes.Add(1)
		}
	}()
	q := store.FactsQuery{Sensors: []store.SensorRef{ref}, Runs: []run.Key{k}, MarkersOf: []run.Key{k}}
	// Reads at least 2,000 times and until the writer committed 150
	// times (a commit between two statements of one read is what a torn
	// read needs), or up to a bound that a machine too busy to write
	// meanwhile still reaches.
	torn, reads := 0, 0
	for (writes.Load() < 150 || reads < 2000) && reads < 200_000 {
		f, err := store.ReadFacts(ctx, s, q)
		if err != nil {
			close(stop)
			t.Fatalf("Facts: %v", err)
		}
		reads++
		if sv, rv := f.Sensors[ref].Version, f.Runs[k].Version; sv != rv {
			torn++
			if torn == 1 {
				t.Errorf("Facts read sensor version %d and run version %d, committed together", sv, rv)
			}
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	t.Logf("%d Facts reads during %d commits, %d torn", reads, writes.Load(), torn)
}
