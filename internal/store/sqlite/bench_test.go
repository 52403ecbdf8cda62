package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

func benchStore(b *testing.B, synchronous string) *Store {
	b.Helper()
	s, err := open(b.Context(), filepath.Join(b.TempDir(), "bench.db"), synchronous)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkCommit measures the engine's typical write: create a run, log
// its event and set its timer, in one durable commit. The NORMAL variant
// is there to show what synchronous=FULL costs (see Open); the scratch
// store's (OpenScratch, `interlock simulate`'s) is a commit's CPU alone.
func BenchmarkCommit(b *testing.B) {
	base := time.Date(2026, time.March, 14, 0, 0, 0, 0, time.UTC)
	for _, sync := range []string{syncFull, syncNormal, syncOff} {
		name := "sync=" + sync
		if sync == syncOff {
			name = "scratch"
		}
		b.Run(name, func(b *testing.B) {
			s := benchStore(b, sync)
			i := 0
			for b.Loop() {
				k := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: fmt.Sprintf("p%09d", i)}
				at := base.Add(time.Duration(i) * time.Second)
				err := s.Commit(b.Context(), store.Change{
					Runs:   []store.RunWrite{{Run: run.Run{Key: k, State: run.Evaluating, Cause: run.CauseSensor, CreatedAt: at, UpdatedAt: at, StateSince: at}}},
					Timers: []store.TimerWrite{{Timer: store.Timer{Key: "evaluate:" + k.Period, Kind: "evaluate", Run: k, DueAt: at.Add(time.Minute)}}},
					Events: []event.Event{{ID: fmt.Sprint("ev", i), Time: at, Type: event.ValidationPassed, PipelineID: k.PipelineID, ScheduleID: k.ScheduleID, Date: k.Period}},
				})
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// BenchmarkTimerListDue polls 100,000 timers, as the local runtime's timer
// loop does: half are due, and it takes a batch of 100; or none is due yet,
// the common case between firings.
func BenchmarkTimerListDue(b *testing.B) {
	const timers = 100_000
	base := time.Date(2026, time.March, 14, 0, 0, 0, 0, time.UTC)
	s := benchStore(b, syncNormal) // loading speed only; reads do not sync
	// store.MaxChangeRecords timers per Change.
	for batch := 0; batch < timers; batch += store.MaxChangeRecords {
		var c store.Change
		for i := batch; i < batch+store.MaxChangeRecords; i++ {
			c.Timers = append(c.Timers, store.TimerWrite{Timer: store.Timer{
				Key: fmt.Sprintf("evaluate:%06d", i), Kind: "evaluate",
				Run:   run.Key{PipelineID: fmt.Sprintf("p%05d", i%10000), ScheduleID: "daily", Period: "2026-03-14"},
				DueAt: base.Add(time.Duration(i) * time.Second),
			}})
		}
		if err := s.Commit(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
	cases := []struct {
		name string
		now  time.Time
		want int
	}{
		{"half-due/limit=100", base.Add(timers / 2 * time.Second), 100},
		{"none-due", base.Add(-time.Second), 0},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				ts, err := s.TimerListDue(b.Context(), tc.now, 100)
				if err != nil {
					b.Fatal(err)
				}
				if len(ts) != tc.want {
					b.Fatalf("%d timers due, want %d", len(ts), tc.want)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "polls/s")
		})
	}
}

// BenchmarkWatchdogReads makes the watchdog's snapshot reads (recent runs
// and markers of every pipeline, sensors changed lately, SLA timers) over
// 100 pipelines with a month and with a year of history. The two should
// cost about the same: the reads are range scans over what is recent, and
// the rest of the history is never read (TestQueryPlans pins the plans).
func BenchmarkWatchdogReads(b *testing.B) {
	const pipelines = 100
	now := time.Date(2026, time.March, 14, 12, 0, 0, 0, time.UTC)
	from := now.AddDate(0, 0, -3)
	for _, days := range []int{30, 360} {
		b.Run(fmt.Sprintf("history=%dd", days), func(b *testing.B) {
			s := benchStore(b, syncNormal) // loading speed only; reads do not sync
			for d := days - 1; d >= 0; d-- {
				day := now.AddDate(0, 0, -d)
				var c store.Change
				for p := range pipelines {
					k := run.Key{PipelineID: fmt.Sprintf("p%03d", p), ScheduleID: "daily", Period: day.Format("2006-01-02")}
					c.Runs = append(c.Runs, store.RunWrite{Run: run.Run{Key: k, State: run.Completed, Outcome: run.OutcomeSucceeded, CreatedAt: day, UpdatedAt: day, StateSince: day}})
					c.Markers = append(c.Markers,
						store.MarkerWrite{Marker: store.Marker{Key: k, Kind: "first-trigger", At: day}},
						store.MarkerWrite{Marker: store.Marker{Key: k, Kind: "sla-verdict", At: day}})
					c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: store.Sensor{PipelineID: k.PipelineID, Key: "s-" + k.Period, ChangedAt: day, WrittenAt: day}})
					if d == 0 {
						c.Timers = append(c.Timers, store.TimerWrite{Timer: store.Timer{Key: "sla-breach:" + k.PipelineID, Kind: "sla-breach", Run: k, DueAt: now.Add(time.Hour)}})
					}
					// At most 5 records a pipeline: 20 pipelines per Change
					// keep within store.MaxChangeRecords.
					if p%20 == 19 {
						if err := s.Commit(b.Context(), c); err != nil {
							b.Fatal(err)
						}
						c = store.Change{}
					}
				}
			}
			period := from.Format("2006-01-02")
			rows := 0
			for b.Loop() {
				rows = 0
				rs, err := s.RunList(b.Context(), store.RunListParams{PeriodFrom: period})
				rows += len(rs)
				ms, err2 := s.MarkerList(b.Context(), store.MarkerListParams{PeriodFrom: period})
				rows += len(ms)
				ss, err3 := s.SensorListChanged(b.Context(), store.SensorListChangedParams{Since: from, Watched: true})
				rows += len(ss)
				ts, err4 := s.TimerList(b.Context(), store.TimerListParams{Kind: "sla-breach"})
				rows += len(ts)
				if err := errors.Join(err, err2, err3, err4); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows), "rows/op")
		})
	}
}
