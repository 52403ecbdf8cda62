package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
)

func TestEveryRunsAtOnceThenOnTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var calls atomic.Int32
		done := make(chan struct{})
		start := time.Now()
		var at []time.Duration
		go func() {
			every(ctx, 5*time.Minute, func(context.Context) {
				calls.Add(1)
				at = append(at, time.Since(start))
			})
			close(done)
		}()
		synctest.Wait()
		if calls.Load() != 1 {
			t.Fatalf("calls at start = %d, want 1", calls.Load())
		}
		time.Sleep(16 * time.Minute)
		synctest.Wait()
		if calls.Load() != 4 {
			t.Fatalf("calls after 16m = %d, want 4 (0, 5, 10, 15 min)", calls.Load())
		}
		cancel()
		<-done
		want := []time.Duration{0, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute}
		for i, w := range want {
			if at[i] != w {
				t.Fatalf("call %d at %v, want %v", i, at[i], w)
			}
		}
	})
}

func TestEveryWithoutIntervalDoesNothing(t *testing.T) {
	called := false
	every(context.Background(), 0, func(context.Context) { called = true })
	if called {
		t.Fatal("a zero interval ran the function")
	}
}

// TestWatchdogRunsInOneProcess: two processes (two Apps on one store
// file, two identities) run the watchdog loop; only the lease's holder
// runs passes. When it stops, the other takes the lease once it has
// expired — half an interval after the last renewal — and runs a pass at
// once. The clock is virtual: a lease expires, and a pass comes due, only
// when the test moves it, so a loaded machine cannot hand the lease over
// by stalling a renewal.
func TestWatchdogRunsInOneProcess(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "interlock.yaml")
	if err := os.WriteFile(cfg, []byte("store: sqlite:./state.db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const interval = 200 * time.Millisecond // the loop's real ticks: a quarter of it
	clk := clock.NewVirtual(time.Date(2026, 3, 10, 6, 0, 0, 0, time.UTC))
	var passes [2]atomic.Int32
	var apps [2]*App
	for i := range apps {
		a, err := Open(t.Context(), cfg, Options{Clock: clk, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		a.passed = func() { passes[i].Add(1) }
		a.Settings.Watchdog.Interval = interval // below what interlock.yaml allows: a test's pace
		apps[i] = a
	}
	var stops [2]context.CancelFunc
	var loops [2]sync.WaitGroup
	for i, a := range apps {
		ctx, cancel := context.WithCancel(t.Context())
		stops[i] = cancel
		loops[i].Go(func() { a.RunWatchdog(ctx, fmt.Sprintf("host/127.0.0.1:707%d", i)) })
	}
	defer func() {
		for i := range stops {
			stops[i]()
			loops[i].Wait()
		}
	}()
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10s (passes %d and %d)", what, passes[0].Load(), passes[1].Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	total := func() int32 { return passes[0].Load() + passes[1].Load() }
	// advance moves the clock by d in steps of an eighth of an interval,
	// a real half interval apart (two ticks of each loop): the holder
	// renews between steps, as it does on a wall clock.
	advance := func(d time.Duration) {
		for d > 0 {
			s := min(d, interval/8)
			clk.Advance(s)
			d -= s
			time.Sleep(interval / 2)
		}
	}
	waitUntil("a first pass", func() bool { return total() == 1 })
	leader := 0
	if passes[1].Load() == 1 {
		leader = 1
	}
	time.Sleep(3 * interval) // many ticks of both loops: no pass is due
	advance(interval)
	waitUntil("the next pass", func() bool { return total() == 2 })
	time.Sleep(3 * interval)
	if passes[leader].Load() != 2 || total() != 2 {
		t.Fatalf("passes %d and %d: want both by process %d, one per interval", passes[0].Load(), passes[1].Load(), leader)
	}

	stops[leader]()
	loops[leader].Wait()
	clk.Advance(interval/2 - time.Nanosecond) // the lease is still good: nobody takes it
	time.Sleep(3 * interval)
	if total() != 2 {
		t.Fatalf("a pass while the stopped process's lease was unexpired: %d and %d", passes[0].Load(), passes[1].Load())
	}
	clk.Advance(time.Nanosecond) // expired: the other takes it and runs a pass at once
	waitUntil("the other process's pass", func() bool { return passes[1-leader].Load() == 1 })
	if passes[leader].Load() != 2 {
		t.Errorf("the stopped process ran %d passes, want 2", passes[leader].Load())
	}
}
