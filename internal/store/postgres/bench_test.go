package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/engine/enginebench"
	"github.com/interlockhq/interlock/internal/event"
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

// replicaEngines opens replicas engines on one new schema, each on a store
// of its own (a pool of its own, as a serve process has), with the load's
// pipelines loaded through the first.
func replicaEngines(b *testing.B, replicas, pipelines int) []*engine.Engine {
	u := schemaURL(b)
	jobs := &countingJobs{}
	engines := make([]*engine.Engine, replicas)
	for r := range engines {
		engines[r] = engine.New(engine.Options{Store: open(b, u), Clock: clock.Real{}, Jobs: jobs})
	}
	enginebench.LoadSensorPipelines(b, engines[0], pipelines)
	for _, e := range engines {
		if err := e.Open(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	return engines
}

func benchSensorWrites(b *testing.B, replicas int) {
	const (
		rate      = 500
		duration  = 4 * time.Second
		pipelines = 200
	)
	for b.Loop() {
		engines := replicaEngines(b, replicas, pipelines)
		next := 0
		s := enginebench.RunLoad(rate, duration, &next, func(i int) error {
			return enginebench.WriteLanded(b, engines[i%replicas], pipelines, i)
		})
		enginebench.Report(b, s)
		runs, err := engines[0].Store().RunList(b.Context(), store.RunListParams{})
		if err != nil {
			b.Fatal(err)
		}
		if len(runs) != s.Writes {
			b.Fatalf("%d runs after %d writes each of a new period", len(runs), s.Writes)
		}
	}
}

// BenchmarkSaturation is internal/engine's search of the highest sustained
// sensor-write rate with p99 under 50 ms, on PostgreSQL: one engine, and
// three sharing the database (the writes taken in turn), as in
// BenchmarkSensorWriteToDecision. `make bench` prints it beside
// BenchmarkCommit, the server's commit ceiling.
func BenchmarkSaturation(b *testing.B) {
	for _, replicas := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			for b.Loop() {
				engines := replicaEngines(b, replicas, enginebench.SaturationPipelines)
				best := enginebench.SaturateAndLog(b, func(i int) error {
					return enginebench.WriteLanded(b, engines[i%replicas], enginebench.SaturationPipelines, i)
				})
				b.ReportMetric(best, "sustained-writes/s")
			}
		})
	}
}

// BenchmarkCommit measures the server's ceiling for the engine's typical
// write (internal/store/sqlite's BenchmarkCommit: create a run, log its
// event and set its timer, in one commit): committers in parallel, 8 per
// CPU, through one store (its pool's connections, as one serve has), each
// commit for a pipeline of its own so the event shards spread as a real
// load's do.
func BenchmarkCommit(b *testing.B) {
	s := open(b, schemaURL(b))
	base := time.Date(2026, time.March, 14, 0, 0, 0, 0, time.UTC)
	var seq atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1)
			k := run.Key{PipelineID: fmt.Sprintf("p%d", i%1000), ScheduleID: "daily", Period: fmt.Sprintf("p%09d", i)}
			at := base.Add(time.Duration(i) * time.Second)
			err := s.Commit(b.Context(), store.Change{
				Runs:   []store.RunWrite{{Run: run.Run{Key: k, State: run.Evaluating, Cause: run.CauseSensor, CreatedAt: at, UpdatedAt: at, StateSince: at}}},
				Timers: []store.TimerWrite{{Timer: store.Timer{Key: "evaluate:" + k.PipelineID + ":" + k.Period, Kind: "evaluate", Run: k, DueAt: at.Add(time.Minute)}}},
				Events: []event.Event{{ID: fmt.Sprint("ev", i), Time: at, Type: event.ValidationPassed, PipelineID: k.PipelineID, ScheduleID: k.ScheduleID, Date: k.Period}},
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}
