package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
)

// BenchmarkSensorWriteToDecision is the engine's benchmark of the same
// name (internal/engine) on PostgreSQL: sensor writes arriving at 500/s for
// 4 s, each for a new period of one of 200 pipelines so each decides to
// start a run, the latency from the write's due time to its decision
// committed. With replicas=3 three engines, each with its own connection
// pool as three serve processes would have, share the database and take
// the writes in turn. The server is the test's (fsync off: the figures are
// the store's and the engine's, not a disk's).
func BenchmarkSensorWriteToDecision(b *testing.B) {
	for _, replicas := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) { benchSensorWrites(b, replicas) })
	}
}

// countingJobs starts jobs that succeed at the first poll.
type countingJobs struct{ starts atomic.Int64 }

func (c *countingJobs) Start(context.Context, trigger.Request) (trigger.Started, error) {
	return trigger.Started{JobRunID: fmt.Sprintf("jr-%d", c.starts.Add(1))}, nil
}

func (c *countingJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusSucceeded}, nil
}

func benchSensorWrites(b *testing.B, replicas int) {
	const (
		rate      = 500
		duration  = 4 * time.Second
		pipelines = 200
	)
	wall := clock.Real{}
	for b.Loop() {
		u := schemaURL(b)
		jobs := &countingJobs{}
		engines := make([]*engine.Engine, replicas)
		for r := range engines {
			engines[r] = engine.New(engine.Options{Store: open(b, u), Clock: wall, Jobs: jobs})
		}
		for i := range pipelines {
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
			if _, err := engines[0].ApplyConfig(b.Context(), fmt.Sprintf("p%d.yaml", i), []byte(doc)); err != nil {
				b.Fatal(err)
			}
			if _, err := engines[0].PutSensor(b.Context(), fmt.Sprintf("p%d", i), "rows", run.Detail("count", 5000)); err != nil {
				b.Fatal(err)
			}
		}
		for _, e := range engines {
			if err := e.Open(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
		n := int(duration.Seconds() * rate)
		lat := make([]time.Duration, n)
		interval := time.Second / rate
		var wg sync.WaitGroup
		start := wall.Now()
		for i := range n {
			due := start.Add(time.Duration(i) * interval)
			if d := due.Sub(wall.Now()); d > 0 {
				time.Sleep(d)
			}
			wg.Go(func() {
				day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i/pipelines)
				if _, err := engines[i%replicas].PutSensor(b.Context(), fmt.Sprintf("p%d", i%pipelines), "landed",
					run.Detail("files", 3, "date", day.Format("2006-01-02"))); err != nil {
					b.Error(err)
				}
				lat[i] = wall.Now().Sub(due)
			})
		}
		wg.Wait()
		elapsed := wall.Now().Sub(start)
		slices.Sort(lat)
		b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
		b.ReportMetric(float64(n)/elapsed.Seconds(), "writes/s")
		runs, err := engines[0].Store().RunList(b.Context(), store.RunListParams{})
		if err != nil {
			b.Fatal(err)
		}
		if len(runs) != n {
			b.Fatalf("%d runs after %d writes each of a new period", len(runs), n)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
