package app

import (
	"context"
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
