// Package local is the runtime of `interlock serve`: it sequences the
// engine's durable timers, the watchdog, alert delivery, config reloads and
// the HTTP API on one machine. It decides nothing: every decision is the
// engine's (and so the pure core's).
package local

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
)

// maxSleep bounds how long the timer loop sleeps without looking at the
// store: a timer written by another process (a second replica) is picked
// up within it.
const maxSleep = 30 * time.Second

// Drain is how long a graceful shutdown waits for timer work in flight.
const Drain = 30 * time.Second

// retryFailed is how long a timer whose processing failed waits before
// it is tried again.
const retryFailed = 5 * time.Second

// Workers is how many timers RunTimers processes at once. A synchronous
// job (a long command) occupies one worker; the others keep SLA alerts,
// polls and triggers of other pipelines on time.
const Workers = 8

// RunTimers processes the engine's due timers until ctx ends, up to
// Workers at a time: it sleeps until the earliest timer is due, until
// woken (a commit changed the timers), or until a worker finishes. A
// timer being processed is not handed to a second worker; the engine's
// commit conditions would make a second one harmless anyway.
func RunTimers(ctx context.Context, eng *engine.Engine, wake <-chan struct{}, log *slog.Logger) {
	var (
		mu       sync.Mutex
		inFlight = map[string]bool{}
		failed   = map[string]time.Time{} // a timer whose processing failed waits before the next try
		wg       sync.WaitGroup
		done     = make(chan struct{}, Workers)
		slots    = make(chan struct{}, Workers)
	)
	// Work in flight (a trigger call and the commit of its result) is not
	// cut short by a graceful shutdown: it runs under a context that is
	// not cancelled, and shutdown waits up to Drain for it. Only what is
	// still running after that is left to the crash rules (the next start
	// finds the in-flight mark).
	work := context.WithoutCancel(ctx)
	defer func() {
		drained := make(chan struct{})
		go func() { wg.Wait(); close(drained) }()
		t := time.NewTimer(Drain)
		defer t.Stop()
		select {
		case <-drained:
		case <-t.C:
			log.Warn("shutdown: timer work still running after the drain period; the next start will find it", "drain", Drain)
		}
	}()
	for {
		minSleep := time.Duration(0)
		due, err := eng.DueTimers(ctx, 4*Workers)
		if err != nil && ctx.Err() == nil {
			log.Error("listing due timers", "err", err)
			minSleep = time.Second // a persistent error must not spin the loop
		}
		for _, t := range due {
			mu.Lock()
			busy := inFlight[t.Key] || eng.Now().Before(failed[t.Key])
			if !busy {
				inFlight[t.Key] = true
			}
			mu.Unlock()
			if busy {
				continue
			}
			select {
			case slots <- struct{}{}:
			default:
				mu.Lock()
				delete(inFlight, t.Key)
				mu.Unlock()
				continue // all workers busy: picked up when one finishes
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := eng.ProcessTimer(work, t)
				mu.Lock()
				delete(inFlight, t.Key)
				if err != nil && ctx.Err() == nil {
					log.Error("processing timer; retrying in a few seconds", "timer", t.Key, "err", err)
					failed[t.Key] = eng.Now().Add(retryFailed)
				} else {
					delete(failed, t.Key)
				}
				mu.Unlock()
				<-slots
				select {
				case done <- struct{}{}:
				default:
				}
			}()
		}
		sleep := maxSleep
		if next, ok, err := eng.NextDue(ctx); err == nil && ok {
			if d := next.Sub(eng.Now()); d < sleep {
				sleep = d
			}
		}
		if sleep < minSleep {
			sleep = minSleep
		}
		if sleep <= 0 {
			// Something is due now: dispatched (a finishing worker wakes
			// the loop), waiting for a free worker, or waiting after a
			// failure.
			sleep = retryFailed
			mu.Lock()
			idle := len(inFlight) == 0 && len(failed) == 0
			mu.Unlock()
			if idle {
				sleep = 0
			}
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
}
