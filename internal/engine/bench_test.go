package engine_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// BenchmarkSensorWriteToDecision measures, on SQLite with durable commits,
// the latency of a sensor write that starts a period: the write, the
// trigger condition, the rule evaluation and the run's creation in one
// commit — the "trigger decision" — at a sustained 500 writes/s
// (product spec §8: p99 under 20 ms). Run it with -benchtime 1x; it
// reports p50-ms, p99-ms and max-ms.
//
// Pacing is open-loop: write i is due at start + i×interval and its
// latency counts from then. With arrivals=concurrent each write is made
// at its due time by a goroutine of its own, as writes from independent
// clients reach serve's HTTP handlers, whatever the writes before it are
// doing: that is the spec's figure. With arrivals=serial one client makes
// them in turn, so a slow write also delays every write due behind it and
// is charged to each.
func BenchmarkSensorWriteToDecision(b *testing.B) {
	b.Run("arrivals=concurrent", func(b *testing.B) { benchSensorWrites(b, true) })
	b.Run("arrivals=serial", func(b *testing.B) { benchSensorWrites(b, false) })
}

func benchSensorWrites(b *testing.B, concurrent bool) {
	const (
		rate      = 500
		duration  = 4 * time.Second
		pipelines = 200
	)
	wall := clock.Real{}
	for b.Loop() {
		st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		eng := engine.New(engine.Options{Store: st, Clock: wall, Jobs: &countingJobs{}})
		if err := eng.Open(b.Context()); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < pipelines; i++ {
			doc := fmt.Sprintf(`
pipeline: {id: p%d}
schedule:
  trigger: {key: landed, check: gte, field: files, value: 1}
validation:
  rules:
    - {key: landed, check: gte, field: files, value: 1}
    - {key: rows, check: gte, field: count, value: 1000}
job: {type: glue, config: {jobName: j%d}}
`, i, i)
			if _, err := eng.ApplyConfig(b.Context(), fmt.Sprintf("p%d.yaml", i), []byte(doc)); err != nil {
				b.Fatal(err)
			}
			if _, err := eng.PutSensor(b.Context(), fmt.Sprintf("p%d", i), "rows", obj("count", 5000)); err != nil {
				b.Fatal(err)
			}
		}
		n := int(duration.Seconds() * rate)
		lat := make([]time.Duration, n)
		interval := time.Second / rate
		var wg sync.WaitGroup
		write := func(i int, due time.Time) {
			// Each write is for a new period (its date field), so each is
			// new data that starts a run.
			day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i/pipelines)
			if _, err := eng.PutSensor(b.Context(), fmt.Sprintf("p%d", i%pipelines), "landed", obj("files", 3, "date", day.Format("2006-01-02"))); err != nil {
				b.Error(err)
			}
			lat[i] = wall.Now().Sub(due)
		}
		start := wall.Now()
		for i := 0; i < n; i++ {
			due := start.Add(time.Duration(i) * interval)
			if d := due.Sub(wall.Now()); d > 0 {
				time.Sleep(d)
			}
			if !concurrent {
				write(i, due)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				write(i, due)
			}()
		}
		wg.Wait()
		elapsed := wall.Now().Sub(start)
		slices.Sort(lat)
		b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
		b.ReportMetric(float64(n)/elapsed.Seconds(), "writes/s")
		_ = st.Close()
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
