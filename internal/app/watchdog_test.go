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
// runs passes. When it stops, the other takes the lease once it expires
// and runs a pass at once, then goes on every interval.
func TestWatchdogRunsInOneProcess(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "interlock.yaml")
	if err := os.WriteFile(cfg, []byte("store: sqlite:./state.db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var passes [2]atomic.Int32
	var apps [2]*App
	for i := range apps {
		a, err := Open(t.Context(), cfg, Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		a.passed = func() { passes[i].Add(1) }
		a.Settings.Watchdog.Interval = 200 * time.Millisecond // below what interlock.yaml allows: a test's pace
		apps[i] = a
	}
	var stops [2]context.CancelFunc
	var wg sync.WaitGroup
	for i, a := range apps {
		ctx, cancel := context.WithCancel(t.Context())
		stops[i] = cancel
		wg.Go(func() { a.RunWatchdog(ctx, fmt.Sprintf("host/127.0.0.1:707%d", i)) })
	}
	defer func() {
		for _, s := range stops {
			s()
		}
		wg.Wait()
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
	waitUntil("three passes", func() bool { return passes[0].Load()+passes[1].Load() >= 3 })
	leader := 0
	if passes[1].Load() > 0 {
		leader = 1
	}
	if passes[1-leader].Load() != 0 {
		t.Fatalf("both processes ran passes: %d and %d", passes[0].Load(), passes[1].Load())
	}
	stops[leader]()
	stoppedAt := time.Now()
	before := passes[leader].Load()
	waitUntil("the other process's passes", func() bool { return passes[1-leader].Load() >= 2 })
	// The lease lives half an interval and is tried every quarter: the
	// other process runs its first pass within about 0.75 interval
	// (150ms). The bound is loose, for a loaded machine; a lease that
	// outlived the interval many times over would still fail it.
	if took := time.Since(stoppedAt); took > 2*time.Second {
		t.Errorf("the other process took over after %v, want within about one interval (200ms)", took)
	}
	if passes[leader].Load() != before {
		t.Errorf("the stopped process ran %d more passes", passes[leader].Load()-before)
	}
}
