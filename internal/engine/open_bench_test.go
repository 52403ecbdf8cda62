package engine_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// BenchmarkOpen10kPipelines: what an engine costs to open on a store of
// 10,000 pipelines (a Lambda cold start).
func BenchmarkOpen10kPipelines(b *testing.B) {
	st, err := sqlite.OpenScratch(b.Context(), filepath.Join(b.TempDir(), "open.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	var c store.Change
	for i := 0; i < 10000; i++ {
		id := fmt.Sprintf("p%d", i)
		doc := fmt.Sprintf("pipeline: {id: %s}\nschedule: {cron: \"0 6 * * *\", timezone: America/New_York, time: \"06:00\"}\nvalidation: {rules: [{key: landed, check: exists}]}\nsla: {deadline: \"09:00\", expectedDuration: 30m}\njob: {type: glue, config: {jobName: j}}\n", id)
		c.Pipelines = append(c.Pipelines, store.PipelineWrite{Pipeline: store.Pipeline{ID: id, ConfigVersion: 1, Doc: []byte(doc), Hash: id, File: id + ".yaml", FirstLoadedAt: t0, UpdatedAt: t0}})
		if len(c.Pipelines) == 100 {
			if err := st.Commit(b.Context(), c); err != nil {
				b.Fatal(err)
			}
			c = store.Change{}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		e := engine.New(engine.Options{Store: st, Clock: clock.NewVirtual(t0), Jobs: &countingJobs{}})
		if err := e.Open(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
