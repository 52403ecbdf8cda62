package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// BenchmarkExpireBatch measures one batch of serve's retention sweep — an
// Expire of 500 records in one durable transaction, the time the write
// lock is held — on a store holding 30 or 300 days of history for 100
// pipelines (a run, ledger entry, baseline, marker, two per-period
// sensors and an event per day). Each round expires the oldest 5 days
// (3,500 records, 7 batches); ms/batch must not grow with the history.
func BenchmarkExpireBatch(b *testing.B) {
	const pipelines, batch = 100, 500
	first := schedule.Date{Year: 2025, Month: time.January, Day: 1}
	seed := func(b *testing.B, s *Store, from, days int) {
		var c store.Change
		for p := range pipelines {
			for d := from; d < from+days; d++ {
				day := first.AddDays(d)
				k := run.Key{PipelineID: fmt.Sprint("p", p), ScheduleID: "cron", Period: day.String()}
				at := day.Midnight(time.UTC).Add(6 * time.Hour)
				c.Runs = append(c.Runs, store.RunWrite{Run: run.Run{Key: k, State: run.Completed, Outcome: run.OutcomeSucceeded, CreatedAt: at, UpdatedAt: at, EndedAt: at}})
				c.Ledger = append(c.Ledger, store.LedgerEntry{Key: k, Seq: 1, Reason: "manual", Source: "request", At: at})
				c.Baselines = append(c.Baselines, store.Baseline{Key: k, CapturedAt: at})
				c.Markers = append(c.Markers, store.MarkerWrite{Marker: store.Marker{Key: k, Kind: run.MarkerFirstArrival, At: at}})
				c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: store.Sensor{PipelineID: k.PipelineID, Key: "a#" + day.String(), ChangedAt: at, WrittenAt: at}},
					store.SensorWrite{Sensor: store.Sensor{PipelineID: k.PipelineID, Key: "b#" + day.Compact(), ChangedAt: at, WrittenAt: at}})
				c.Events = append(c.Events, event.Event{ID: fmt.Sprint(k, "-", d), Time: at, Type: event.JobCompleted, PipelineID: k.PipelineID, ScheduleID: "cron", Date: k.Period})
				if c.Records() >= store.MaxChangeRecords-10 {
					if err := s.Commit(b.Context(), c); err != nil {
						b.Fatal(err)
					}
					c = store.Change{}
				}
			}
		}
		if err := s.Commit(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
	for _, days := range []int{30, 300} {
		b.Run(fmt.Sprintf("days=%d", days), func(b *testing.B) {
			s := benchStore(b, syncFull)
			seed(b, s, 0, days)
			batches, oldest := 0, 0
			b.ResetTimer()
			for b.Loop() {
				cutoff := first.AddDays(oldest + 5).String()
				for {
					res, err := s.Expire(b.Context(), store.ExpireParams{PeriodBefore: cutoff, Before: first.AddDays(oldest + 5).Midnight(time.UTC), Limit: batch})
					if err != nil {
						b.Fatal(err)
					}
					batches++
					if !res.More {
						break
					}
				}
				// The history grows back by what was expired, off the clock.
				b.StopTimer()
				seed(b, s, oldest+days, 5)
				oldest += 5
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(batches), "ms/batch")
		})
	}
}
