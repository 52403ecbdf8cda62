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
	"github.com/interlockhq/interlock/internal/run"
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

// Workers is how many timers RunTimers processes at once. Timer work is
// store work — decisions and their commits — plus the job system's status
// and lookup calls, each bounded by its type's timeout; no trigger call
// holds a worker (CallWorkers).
const Workers = 8

// CallWorkers is how many trigger calls RunTimers has in flight at once.
// A synchronous job (a command, an http or lambda call) runs within its
// call, for up to its timeout; the calls have workers of their own, so a
// slow job delays no other pipeline's SLA alert, evaluation or poll. A
// trigger step that finds every call worker busy waits, due, until one is
// free.
const CallWorkers = 32

// RunTimers processes the engine's due timers until ctx ends: it sleeps
// until the earliest timer is due, until woken (a commit changed the
// timers), or until a worker finishes. Each due timer goes to one of
// Workers; a trigger step there only begins its call (the in-flight
// mark, engine.ProcessTimerUntilCall), and the call and the record of its
// answer (engine.MakeCall) run on one of CallWorkers, which the trigger
// step reserves before it begins, so a begun call never waits for a
// worker. A timer being processed is not handed to a second worker; the
// engine's commit conditions would make a second one harmless anyway.
func RunTimers(ctx context.Context, eng *engine.Engine, wake <-chan struct{}, log *slog.Logger) {
	runTimers(ctx, eng, wake, log, Workers, CallWorkers, Drain)
}

// stopWait bounds how long a shutdown waits, after the drain period, for
// the work it stopped to return (a command job's process group is killed
// at once; its pipes close within the runner's WaitDelay).
const stopWait = 10 * time.Second

// runTimers is RunTimers with pools of the sizes given and a drain period.
func runTimers(ctx context.Context, eng *engine.Engine, wake <-chan struct{}, log *slog.Logger, workers, callWorkers int, drain time.Duration) {
	var (
		mu       sync.Mutex
		inFlight = map[string]bool{}
		failed   = map[string]time.Time{} // a timer whose processing failed waits before the next try
		wg       sync.WaitGroup
		done     = make(chan struct{}, 1)
		slots    = make(chan struct{}, workers)
		calls    = make(chan struct{}, callWorkers)
	)
	finished := func() {
		select {
		case done <- struct{}{}:
		default:
		}
	}
	// Work in flight (a trigger call and the commit of its result) is not
	// cut short by a graceful shutdown: it runs under a context of its
	// own, and shutdown waits up to drain for it. What is still running
	// after that is stopped — its context cancelled, which kills a command
	// job's whole process group, the grandchildren a shell started
	// included (they would outlive serve otherwise: the kernel's
	// parent-death signal reaches the program only) — and left to the
	// crash rules (the next start finds the in-flight mark).
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	defer func() {
		drained := make(chan struct{})
		go func() { wg.Wait(); close(drained) }()
		t := time.NewTimer(drain)
		defer t.Stop()
		select {
		case <-drained:
			return
		case <-t.C:
		}
		log.Warn("shutdown: timer work still running after the drain period is stopped; the next start will find it", "drain", drain)
		stopWork()
		t.Reset(stopWait)
		select {
		case <-drained:
		case <-t.C:
			log.Warn("shutdown: stopped timer work did not return", "wait", stopWait)
		}
	}()
	// makeCall makes a begun trigger call on the call worker reserved for
	// it.
	makeCall := func(c engine.Call) {
		defer wg.Done()
		if _, err := eng.MakeCall(work, c); err != nil && ctx.Err() == nil {
			log.Error("trigger call; its outcome is left to the crash rules", "pipeline", c.Run.PipelineID, "period", c.Run.Period, "err", err)
		}
		<-calls
		finished()
	}
	for {
		minSleep := time.Duration(0)
		due, err := eng.DueTimers(ctx, 4*workers+callWorkers)
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
			trigger := t.Kind == string(run.StepTrigger)
			reserved := reserve(slots)
			if reserved && trigger && !reserve(calls) {
				<-slots // no call worker is free: give the worker back
				reserved = false
			}
			if !reserved {
				mu.Lock()
				delete(inFlight, t.Key)
				mu.Unlock()
				continue // picked up when a worker finishes
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				call, err := eng.ProcessTimerUntilCall(work, t)
				if call != nil {
					wg.Add(1)
					go makeCall(*call)
				} else if trigger {
					<-calls
				}
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
				finished()
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
			idle := len(inFlight) == 0 && len(failed) == 0 && len(calls) == 0
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

// reserve takes a place in the pool, if one is free.
func reserve(pool chan struct{}) bool {
	select {
	case pool <- struct{}{}:
		return true
	default:
		return false
	}
}
