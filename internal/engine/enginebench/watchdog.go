// Package enginebench holds the engine's benchmark fixtures that more than
// one store's benchmarks load (internal/engine on SQLite,
// internal/store/postgres on PostgreSQL), so that their figures are of the
// same data. It is for benchmarks only.
package enginebench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Now is the instant the watchdog fixture is loaded for.
var Now = time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC)

// NoJobs succeeds every job at once (the watchdog starts none).
type NoJobs struct{}

func (NoJobs) Start(context.Context, trigger.Request) (trigger.Started, error) {
	return trigger.Started{JobRunID: "jr"}, nil
}

func (NoJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusSucceeded}, nil
}

// LoadWatchdogFixture loads st with n pipelines and a realistic mix: a
// third cron (New York time, expected at 06:00), a third sensor-triggered
// with a 09:00 SLA, a third sensor-triggered with post-run checks and a
// relative SLA; yesterday's runs completed, today's 10% still running and
// 40% completed; and a long history that the watchdog must not read: old
// sensors (oldSensors per pipeline) and events. The data is as of Now.
func LoadWatchdogFixture(tb testing.TB, st store.Store, n, oldSensors int) {
	tb.Helper()
	ctx := context.Background()
	clk := clock.NewVirtual(Now.Add(-30 * 24 * time.Hour))
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: NoJobs{}})
	if err := eng.Open(ctx); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i++ {
		var doc string
		switch i % 3 {
		case 0:
			doc = fmt.Sprintf("pipeline: {id: p%d}\nschedule: {cron: \"0 6 * * *\", timezone: America/New_York, time: \"06:00\"}\nvalidation: {rules: [{key: landed, check: exists}]}\njob: {type: glue, config: {jobName: j}}\n", i)
		case 1:
			doc = fmt.Sprintf("pipeline: {id: p%d}\nschedule: {trigger: {key: landed, check: exists, deadline: \"23:00\"}}\nsla: {deadline: \"09:00\", expectedDuration: 30m}\njob: {type: glue, config: {jobName: j}}\n", i)
		default:
			doc = fmt.Sprintf("pipeline: {id: p%d}\nschedule: {trigger: {key: landed, check: exists}}\nsla: {maxDuration: 6h}\npostRun: {rules: [{key: audit, check: exists}], sensorTimeout: 2h}\njob: {type: glue, config: {jobName: j}}\n", i)
		}
		if _, err := eng.ApplyConfig(ctx, fmt.Sprintf("p%d.yaml", i), []byte(doc)); err != nil {
			tb.Fatal(err)
		}
	}
	clk.Set(Now)
	var c store.Change
	flush := func() {
		if err := st.Commit(ctx, c); err != nil {
			tb.Fatal(err)
		}
		c = store.Change{}
	}
	// A Change holds at most store.MaxChangeRecords records, the counters
	// of the event shards it appends to among them.
	full := func() {
		if len(c.Runs)+len(c.Markers)+len(c.Sensors)+len(c.Events) >= store.MaxChangeRecords-1-store.EventShards {
			flush()
		}
	}
	old := Now.Add(-20 * 24 * time.Hour)
	for i := 0; i < n; i++ {
		pid := fmt.Sprintf("p%d", i)
		sid := "stream"
		if i%3 == 0 {
			sid = "cron"
		}
		watched := sid == "stream" // the trigger's key, as the engine stores it (watchdog.Watches)
		for d, day := range []string{"2026-03-09", "2026-03-10"} {
			state := run.Completed
			if d == 1 {
				switch {
				case i%10 == 0:
					state = run.Running
				case i%10 >= 6:
					continue // today's data not there yet
				}
			}
			r := run.Run{Key: run.Key{PipelineID: pid, ScheduleID: sid, Period: day}, State: state, CreatedAt: Now.Add(-time.Duration(24*(1-d)+3) * time.Hour), StateSince: Now.Add(-time.Hour)}
			if state == run.Completed {
				r.Outcome, r.EndedAt = run.OutcomeSucceeded, Now.Add(-time.Duration(24*(1-d)+1)*time.Hour)
			} else {
				r.ExpiresAt = Now.Add(time.Hour)
			}
			c.Runs = append(c.Runs, store.RunWrite{Run: r})
			c.Markers = append(c.Markers, store.MarkerWrite{Marker: store.Marker{Key: r.Key, Kind: run.MarkerFirstArrival, At: r.CreatedAt}})
			full()
		}
		for k := 0; k < oldSensors; k++ {
			c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: store.Sensor{PipelineID: pid, Key: fmt.Sprintf("landed#2026-02-%02d-%d", 1+k%28, k), Data: run.Detail("n", k), ChangedAt: old, WrittenAt: old, Watched: watched}})
			c.Events = append(c.Events, event.Event{ID: fmt.Sprintf("%s-%d", pid, k), Time: old, Type: event.JobCompleted, PipelineID: pid})
			full()
		}
		c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: store.Sensor{PipelineID: pid, Key: "landed", Data: run.Detail("n", 1), ChangedAt: Now.Add(-4 * time.Hour), WrittenAt: Now.Add(-4 * time.Hour), Watched: watched}})
		full()
	}
	flush()
}

// WatchdogPasses measures watchdog passes over a loaded fixture, with an
// engine on st: a first pass raises and repairs what the fixture left
// open, then each measured pass runs 5 minutes after the previous one (the
// steady state a watchdog runs in).
func WatchdogPasses(b *testing.B, st store.Store) {
	clk := clock.NewVirtual(Now)
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: NoJobs{}})
	if err := eng.Open(b.Context()); err != nil {
		b.Fatal(err)
	}
	if _, err := eng.WatchdogPass(b.Context(), 30*time.Minute); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		clk.Advance(5 * time.Minute)
		rep, err := eng.WatchdogPass(b.Context(), 30*time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Degraded() {
			b.Fatalf("degraded: %v", rep.Result.Failed)
		}
	}
}
