package local

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// countingStore is the real store, counting Expire calls.
type countingStore struct {
	store.Store
	expires atomic.Int32
}

func (s *countingStore) Expire(ctx context.Context, p store.ExpireParams) (store.ExpireResult, error) {
	s.expires.Add(1)
	return s.Store.Expire(ctx, p)
}

// seedDays stores, for each of n days from first, a completed run, a
// per-period sensor and an event at noon of the day.
func seedDays(t *testing.T, st store.Store, first schedule.Date, n int) {
	t.Helper()
	for i := range n {
		d := first.AddDays(i)
		k := run.Key{PipelineID: "orders", ScheduleID: "cron", Period: d.String()}
		noon := d.Midnight(time.UTC).Add(12 * time.Hour)
		err := st.Commit(t.Context(), store.Change{
			Runs:    []store.RunWrite{{Run: run.Run{Key: k, State: run.Completed, Outcome: run.OutcomeSucceeded, CreatedAt: noon, UpdatedAt: noon, EndedAt: noon}}},
			Sensors: []store.SensorWrite{{Sensor: store.Sensor{PipelineID: "orders", Key: "ready#" + d.Compact(), ChangedAt: noon, WrittenAt: noon}}},
			Events:  []event.Event{{ID: fmt.Sprint("e-", d), Time: noon, Type: event.JobCompleted, PipelineID: "orders", ScheduleID: "cron", Date: d.String()}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestSweepDeletesExpiredHistoryInBatches(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "interlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// 60 days before the cutoff, 30 after it. With a retention of 90 days
	// at 2026-06-01 00:00 UTC, periods before 2026-03-02 expire (the day
	// before a 90-day-old instant, so that a period ends before it in any
	// zone), and events before 2026-03-03 00:00: the event at noon of
	// 2026-03-02 too.
	seedDays(t, st, schedule.Date{Year: 2026, Month: time.January, Day: 1}, 60) // to 2026-03-01
	seedDays(t, st, schedule.Date{Year: 2026, Month: time.March, Day: 2}, 30)
	var batches []store.ExpireResult
	s := &Sweeper{Store: st, Clock: clock.NewVirtual(time.Date(2026, time.June, 1, 0, 0, 0, 0, time.UTC)), Retention: 90 * 24 * time.Hour,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Batch: 25, Pause: time.Microsecond,
		Deleted: func(r store.ExpireResult) { batches = append(batches, r) }}

	total := s.Sweep(t.Context())
	if want := map[string]int{"runs": 60, "sensors": 60, "events": 61}; fmt.Sprint(total) != fmt.Sprint(want) {
		t.Errorf("swept %v, want %v", total, want)
	}
	if len(batches) < 181/25 {
		t.Errorf("%d batches for 181 records in batches of 25", len(batches))
	}
	for i, b := range batches {
		if b.Total() > 25 {
			t.Errorf("batch %d deleted %d records, more than the batch size", i, b.Total())
		}
	}
	runs, err := st.RunList(t.Context(), store.RunListParams{PipelineID: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 30 || runs[len(runs)-1].Period != "2026-03-02" {
		t.Errorf("%d runs left, oldest %s; want the 30 from 2026-03-02", len(runs), runs[len(runs)-1].Period)
	}
	sensors, _ := st.SensorList(t.Context(), "orders")
	events, _ := st.EventList(t.Context(), store.EventListParams{})
	if len(sensors) != 30 || len(events.Events) != 29 {
		t.Errorf("%d sensors and %d events left, want 30 and 29", len(sensors), len(events.Events))
	}
	if again := s.Sweep(t.Context()); len(again) != 0 {
		t.Errorf("a second sweep deleted %v", again)
	}
}

func TestSweepRunsAtOnceThenEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		real, err := sqlite.Open(t.Context(), sqlite.Memory)
		if err != nil {
			t.Fatal(err)
		}
		defer real.Close()
		st := &countingStore{Store: real}
		ctx, cancel := context.WithCancel(t.Context())
		s := &Sweeper{Store: st, Clock: clock.NewVirtual(time.Date(2026, time.June, 1, 0, 0, 0, 0, time.UTC)), Retention: 90 * 24 * time.Hour,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Interval: time.Hour}
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		synctest.Wait()
		if n := st.expires.Load(); n != 1 {
			t.Fatalf("Expire calls at start = %d, want 1 (nothing to delete: one batch)", n)
		}
		time.Sleep(3*time.Hour + time.Minute)
		synctest.Wait()
		if n := st.expires.Load(); n != 4 {
			t.Fatalf("Expire calls after 3h01m = %d, want 4", n)
		}
		cancel()
		<-done
	})
}
