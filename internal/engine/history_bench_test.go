package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// The flat-history benchmarks (product spec §8, retention: "the cost of a
// decision and of a watchdog pass does not grow with stored history").
// Each runs on a store holding H = 30 and 10×H = 300 days of history per
// pipeline: per-period sensors (three keys), a run, markers, a ledger
// entry, a baseline and two events per day. Besides the time, each
// reports how many records the engine read from the store per operation
// (records-read/op, counted by a decorator on the real store), a figure
// the machine's load cannot blur: it must be the same at 30 and 300 days.

const historyPipelines = 100

// BenchmarkFlatHistorySensorDecision: a sensor write that makes the
// engine evaluate a waiting run's rules — the decision reads the rule
// keys' sensors for the period — on durable SQLite.
func BenchmarkFlatHistorySensorDecision(b *testing.B) {
	for _, days := range []int{30, 300} {
		b.Run(fmt.Sprintf("days=%d", days), func(b *testing.B) {
			eng, _, reads := historyFixture(b, historyPipelines, days)
			// Today's data landed: each trigger pipeline's run waits for
			// its quality rule, which these writes never satisfy.
			for i := 0; i < historyPipelines; i += 2 {
				if _, err := eng.PutSensor(b.Context(), fmt.Sprintf("h%d", i), "landed", obj("files", 1)); err != nil {
					b.Fatal(err)
				}
			}
			reads.Store(0)
			i := 0
			b.ResetTimer()
			for b.Loop() {
				res, err := eng.PutSensor(b.Context(), fmt.Sprintf("h%d", (i%(historyPipelines/2))*2), "quality", obj("count", i))
				if err != nil || !res.Changed {
					b.Fatalf("write %d: %v (changed %v)", i, err, res.Changed)
				}
				i++
			}
			b.ReportMetric(float64(reads.Load())/float64(b.N), "records-read/op")
		})
	}
}

// BenchmarkFlatHistoryWatchdogPass: a steady-state watchdog pass over the
// same stores.
func BenchmarkFlatHistoryWatchdogPass(b *testing.B) {
	for _, days := range []int{30, 300} {
		b.Run(fmt.Sprintf("days=%d", days), func(b *testing.B) {
			eng, clk, reads := historyFixture(b, historyPipelines, days)
			if _, err := eng.WatchdogPass(b.Context(), 30*time.Minute); err != nil {
				b.Fatal(err)
			}
			reads.Store(0)
			b.ResetTimer()
			for b.Loop() {
				clk.Advance(5 * time.Minute)
				rep, err := eng.WatchdogPass(b.Context(), 30*time.Minute)
				if err != nil || rep.Degraded() {
					b.Fatalf("pass: %v (degraded %v)", err, rep.Degraded())
				}
			}
			b.ReportMetric(float64(reads.Load())/float64(b.N), "records-read/op")
		})
	}
}

// readCounter is the real store, counting the records its reads return.
type readCounter struct {
	store.Store
	n *atomic.Int64
}

// counted counts the records of a list read: counted[T](s.n)(read(…)).
func counted[T any](n *atomic.Int64) func([]T, error) ([]T, error) {
	return func(xs []T, err error) ([]T, error) {
		n.Add(int64(len(xs)))
		return xs, err
	}
}

func (s readCounter) SensorGet(ctx context.Context, pipelineID, key string) (store.Sensor, error) {
	x, err := s.Store.SensorGet(ctx, pipelineID, key)
	if err == nil {
		s.n.Add(1)
	}
	return x, err
}

func (s readCounter) SensorList(ctx context.Context, pipelineID string) ([]store.Sensor, error) {
	return counted[store.Sensor](s.n)(s.Store.SensorList(ctx, pipelineID))
}

func (s readCounter) SensorGetMany(ctx context.Context, p store.SensorGetManyParams) ([]store.Sensor, error) {
	return counted[store.Sensor](s.n)(s.Store.SensorGetMany(ctx, p))
}

func (s readCounter) SensorListPrefix(ctx context.Context, p store.SensorListPrefixParams) ([]store.Sensor, error) {
	return counted[store.Sensor](s.n)(s.Store.SensorListPrefix(ctx, p))
}

func (s readCounter) SensorListChanged(ctx context.Context, p store.SensorListChangedParams) ([]store.Sensor, error) {
	return counted[store.Sensor](s.n)(s.Store.SensorListChanged(ctx, p))
}

func (s readCounter) RunList(ctx context.Context, p store.RunListParams) ([]run.Run, error) {
	return counted[run.Run](s.n)(s.Store.RunList(ctx, p))
}

func (s readCounter) MarkerList(ctx context.Context, p store.MarkerListParams) ([]store.Marker, error) {
	return counted[store.Marker](s.n)(s.Store.MarkerList(ctx, p))
}

func (s readCounter) MarkerListOf(ctx context.Context, key run.Key) ([]store.Marker, error) {
	return counted[store.Marker](s.n)(s.Store.MarkerListOf(ctx, key))
}

func (s readCounter) LedgerList(ctx context.Context, key run.Key) ([]store.LedgerEntry, error) {
	return counted[store.LedgerEntry](s.n)(s.Store.LedgerList(ctx, key))
}

func (s readCounter) TimerList(ctx context.Context, p store.TimerListParams) ([]store.Timer, error) {
	return counted[store.Timer](s.n)(s.Store.TimerList(ctx, p))
}

// historyFixture builds n pipelines — half sensor-triggered with rules,
// an SLA and post-run checks, half cron — with days of history each
// before today (2026-03-10), loaded through a scratch store and reopened
// durable, as serve opens it. The engine reads through a readCounter.
func historyFixture(b *testing.B, n, days int) (*engine.Engine, *clock.Virtual, *atomic.Int64) {
	b.Helper()
	now := time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC)
	today := schedule.DateOf(now, time.UTC)
	clk := clock.NewVirtual(now.Add(-time.Duration(days+1) * 24 * time.Hour))
	path := filepath.Join(b.TempDir(), "history.db")
	st, err := sqlite.OpenScratch(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: &countingJobs{}})
	if err := eng.Open(b.Context()); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		doc := fmt.Sprintf(`pipeline: {id: h%d}
schedule: {trigger: {key: landed, check: exists}}
sla: {deadline: "22:00"}
validation: {rules: [{key: landed, check: exists}, {key: quality, check: gte, field: count, value: 1000000000}]}
postRun: {rules: [{key: audit, check: exists}]}
job: {type: glue, config: {jobName: j}}
`, i)
		if i%2 == 1 {
			doc = fmt.Sprintf("pipeline: {id: h%d}\nschedule: {cron: \"0 6 * * *\", time: \"06:00\"}\nvalidation: {rules: [{key: quality, check: exists}]}\njob: {type: glue, config: {jobName: j}}\n", i)
		}
		if _, err := eng.ApplyConfig(b.Context(), fmt.Sprintf("h%d.yaml", i), []byte(doc)); err != nil {
			b.Fatal(err)
		}
	}
	var c store.Change
	flush := func() {
		if err := st.Commit(b.Context(), c); err != nil {
			b.Fatal(err)
		}
		c = store.Change{}
	}
	for i := 0; i < n; i++ {
		pid := fmt.Sprintf("h%d", i)
		sid := "stream"
		if i%2 == 1 {
			sid = "cron"
		}
		for d := days; d >= 1; d-- {
			day := today.AddDays(-d)
			at := day.Midnight(time.UTC).Add(6 * time.Hour)
			k := run.Key{PipelineID: pid, ScheduleID: sid, Period: day.String()}
			c.Runs = append(c.Runs, store.RunWrite{Run: run.Run{Key: k, State: run.Completed, Outcome: run.OutcomeSucceeded, Cause: run.CauseSensor,
				CreatedAt: at, UpdatedAt: at.Add(time.Hour), StateSince: at.Add(time.Hour), EndedAt: at.Add(time.Hour), ConfigVersion: 1}})
			c.Markers = append(c.Markers,
				store.MarkerWrite{Marker: store.Marker{Key: k, Kind: run.MarkerFirstArrival, At: at}},
				store.MarkerWrite{Marker: store.Marker{Key: k, Kind: run.MarkerSLAVerdict, At: at.Add(time.Hour), Detail: obj("verdict", "SLA_MET")}})
			c.Ledger = append(c.Ledger, store.LedgerEntry{Key: k, Seq: 1, Reason: run.ReasonManual, Source: "request", At: at.Add(2 * time.Hour)})
			c.Baselines = append(c.Baselines, store.Baseline{Key: k, Sensors: nil, CapturedAt: at.Add(time.Hour)})
			for _, key := range []string{"landed", "quality", "audit"} {
				c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: store.Sensor{PipelineID: pid, Key: key + "#" + day.String(), Data: obj("count", d), ChangedAt: at, WrittenAt: at}})
			}
			c.Events = append(c.Events,
				event.Event{ID: fmt.Sprintf("%s-%s-t", pid, day), Time: at, Type: event.JobTriggered, PipelineID: pid, ScheduleID: sid, Date: day.String()},
				event.Event{ID: fmt.Sprintf("%s-%s-c", pid, day), Time: at.Add(time.Hour), Type: event.JobCompleted, PipelineID: pid, ScheduleID: sid, Date: day.String()})
			if c.Records() >= store.MaxChangeRecords-10-1 {
				flush()
			}
		}
	}
	flush()
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	durable, err := sqlite.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = durable.Close() })
	clk.Set(now)
	reads := &atomic.Int64{}
	eng = engine.New(engine.Options{Store: readCounter{Store: durable, n: reads}, Clock: clk, Jobs: &countingJobs{}})
	if err := eng.Open(b.Context()); err != nil {
		b.Fatal(err)
	}
	return eng, clk, reads
}
