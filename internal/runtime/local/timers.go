// Package local is the runtime of `interlock serve`: it sequences the
// engine's durable timers, the watchdog, alert delivery, config reloads and
// the HTTP API on one machine. It decides nothing: every decision is the
// engine's (and so the pure core's).
package local

import (
	"context"
	"log/slog"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
)

// maxSleep bounds how long the timer loop sleeps without looking at the
// store: a timer written by another process (a second replica) is picked
// up within it.
const maxSleep = 30 * time.Second

// RunTimers processes the engine's due timers until ctx ends: it sleeps
// until the earliest timer is due, or until woken (a commit changed the
// timers), whichever comes first.
func RunTimers(ctx context.Context, eng *engine.Engine, wake <-chan struct{}, log *slog.Logger) {
	for {
		minSleep := time.Duration(0)
		if _, err := eng.RunDue(ctx); err != nil && ctx.Err() == nil {
			log.Error("processing timers", "err", err)
			minSleep = time.Second // a persistent error must not spin the loop
		}
		sleep := maxSleep
		if due, ok, err := eng.NextDue(ctx); err == nil && ok {
			if d := due.Sub(eng.Now()); d < sleep {
				sleep = d
			}
		}
		if sleep < minSleep {
			sleep = minSleep
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
			t.Stop()
		case <-t.C:
		}
	}
}
