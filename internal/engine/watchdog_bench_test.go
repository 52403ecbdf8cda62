package engine_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// watchdogFixture builds a store with n pipelines and a realistic mix: a
// third cron (New York time, expected at 06:00), a third sensor-triggered
// with a 09:00 SLA, a third sensor-triggered with post-run checks and a
// relative SLA; yesterday's runs completed, today's 10% still running and
// 40% completed; and a long history that the watchdog must not read: old
// sensors (oldSensors per pipeline) and events.
func watchdogFixture(b *testing.B, n, oldSensors int) (*engine.Engine, *clock.Virtual) {
	b.Helper()
	now := time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(now.Add(-30 * 24 * time.Hour))
	st, err := sqlite.OpenScratch(b.Context(), filepath.Join(b.TempDir(), "wd.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: &countingJobs{}})
	if err := eng.Open(b.Context()); err != nil {
		b.Fatal(err)
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
		if _, err := eng.ApplyConfig(b.Context(), fmt.Sprintf("p%d.yaml", i), []byte(doc)); err != nil {
			b.Fatal(err)
		}
	}
	clk.Set(now)
	var c store.Change
	flush := func() {
		if err := st.Commit(b.Context(), c); err != nil {
			b.Fatal(err)
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
	old := now.Add(-20 * 24 * time.Hour)
	for i := 0; i < n; i++ {
		pid := fmt.Sprintf("p%d", i)
		sid := "stream"
		if i%3 == 0 {
			sid = "cron"
		}
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
			r := run.Run{Key: run.Key{PipelineID: pid, ScheduleID: sid, Period: day}, State: state, CreatedAt: now.Add(-time.Duration(24*(1-d)+3) * time.Hour), StateSince: now.Add(-time.Hour)}
			if state == run.Completed {
				r.Outcome, r.EndedAt = run.OutcomeSucceeded, now.Add(-time.Duration(24*(1-d)+1)*time.Hour)
			} else {
				r.ExpiresAt = now.Add(time.Hour)
			}
			c.Runs = append(c.Runs, store.RunWrite{Run: r})
			c.Markers = append(c.Markers, store.MarkerWrite{Marker: store.Marker{Key: r.Key, Kind: run.MarkerFirstArrival, At: r.CreatedAt}})
			full()
		}
		for k := 0; k < oldSensors; k++ {
			c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: store.Sensor{PipelineID: pid, Key: fmt.Sprintf("landed#2026-02-%02d-%d", 1+k%28, k), Data: obj("n", k), ChangedAt: old, WrittenAt: old}})
			c.Events = append(c.Events, event.Event{ID: fmt.Sprintf("%s-%d", pid, k), Time: old, Type: event.JobCompleted, PipelineID: pid})
			full()
		}
		c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: store.Sensor{PipelineID: pid, Key: "landed", Data: obj("n", 1), ChangedAt: now.Add(-4 * time.Hour), WrittenAt: now.Add(-4 * time.Hour)}})
		full()
	}
	flush()
	// Loaded through a scratch store, for speed; measured on the store as
	// serve opens it: durable, WAL, readers beside the writer.
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	st, err = sqlite.Open(b.Context(), st.Path())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	eng = engine.New(engine.Options{Store: st, Clock: clk, Jobs: &countingJobs{}})
	if err := eng.Open(b.Context()); err != nil {
		b.Fatal(err)
	}
	return eng, clk
}

// BenchmarkWatchdogPass10k measures one watchdog pass over 10,000
// pipelines on SQLite (product spec §8: under 1 s on two cores). The
// store also holds 100,000 old sensors and 100,000 old events that the
// pass must not read: compare with BenchmarkWatchdogPass10kNoHistory.
func BenchmarkWatchdogPass10k(b *testing.B) { benchWatchdog(b, 10000, 10) }

// BenchmarkWatchdogPass10kNoHistory is the same without the history, to
// show the pass does not grow with stored sensors or events.
func BenchmarkWatchdogPass10kNoHistory(b *testing.B) { benchWatchdog(b, 10000, 0) }

func benchWatchdog(b *testing.B, n, oldSensors int) {
	eng, clk := watchdogFixture(b, n, oldSensors)
	// The first pass raises and repairs what the fixture left open; the
	// measured passes are the steady state a watchdog runs in.
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
