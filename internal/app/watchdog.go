package app

import (
	"context"
	"time"
)

// RunWatchdog runs a watchdog pass at once and then every
// watchdog.interval until ctx ends. A failed pass is logged and the loop
// goes on: the watchdog must keep watching when something else is wrong.
func (a *App) RunWatchdog(ctx context.Context) {
	every(ctx, a.Settings.Watchdog.Interval, func(ctx context.Context) {
		rep, err := a.Engine.WatchdogPass(ctx, a.Settings.Watchdog.StuckRunThreshold)
		switch {
		case err != nil:
			a.Log.Error("watchdog pass failed", "err", err)
		case rep.Degraded():
			a.Log.Warn("watchdog degraded", "failed", rep.Result.Failed, "err", rep.Result.Err)
		default:
			a.Log.Debug("watchdog pass", "events", len(rep.Raised), "repaired", rep.Repaired)
		}
	})
}

// every calls fn at once and then every interval until ctx ends. A slow
// call delays the next one rather than piling calls up.
func every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		fn(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
