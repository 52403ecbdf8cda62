package app

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/interlockhq/interlock/internal/lease"
	"github.com/interlockhq/interlock/internal/store"
)

// WatchdogLease is the lease of the watchdog's passes: when several serve
// processes share a store, one of them runs the passes.
const WatchdogLease = "watchdog"

// Identity names this process among those sharing its store (serve
// replicas), as the holder of its leases: the host and the listen address
// — stable across a restart, so a restarted process keeps its leases at
// once. With no fixed port (":0"), the host and the project's settings
// file: still stable across a restart, but two processes of one project on
// one host must then listen on fixed ports to be told apart.
func (a *App) Identity(addr string) string {
	host, _ := os.Hostname()
	if _, port, err := net.SplitHostPort(addr); err == nil && port != "0" && port != "" {
		return host + "/" + addr
	}
	file := a.SettingsFile
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return host + "/" + file
}

// OneShotIdentity is the holder of the leases of the one-shot commands
// (`interlock watchdog --once` delivering its alerts): one name per host,
// so each run takes back the leases the previous run left, and defers to
// a serve holding them.
func OneShotIdentity() string {
	host, _ := os.Hostname()
	return host + "/interlock-once"
}

// RunWatchdog runs watchdog passes every watchdog.interval until ctx
// ends, while this process (holder) holds the watchdog's lease: with
// several processes on one store, one runs the passes, and when it dies
// another takes the lease within its time to live (half the interval) and
// runs a pass at once. Every quarter interval the holder renews the lease
// and the others try to take it. A failed pass is logged and the loop goes
// on: the watchdog must keep watching when something else is wrong.
func (a *App) RunWatchdog(ctx context.Context, holder string) {
	interval := a.Settings.Watchdog.Interval
	if interval <= 0 {
		return
	}
	ttl := interval / 2
	var held store.Lease
	var last time.Time
	every(ctx, max(interval/4, time.Millisecond), func(ctx context.Context) {
		now := a.Engine.Now()
		l, ok, err := lease.Acquire(ctx, a.Store, WatchdogLease, holder, now, ttl)
		switch {
		case err != nil:
			a.Log.Error("watchdog lease", "err", err)
			return
		case !ok:
			if held.Holder != "" {
				a.Log.Info("the watchdog runs in another process now", "holder", l.Holder)
			}
			held = store.Lease{}
			return
		}
		taken := held.Holder == "" || held.Version != l.Version-1
		held = l
		if !taken && now.Sub(last) < interval {
			return
		}
		last = now
		a.watchdogPass(ctx)
		if a.passed != nil {
			a.passed()
		}
	})
}

func (a *App) watchdogPass(ctx context.Context) {
	rep, err := a.Engine.WatchdogPass(ctx, a.Settings.Watchdog.StuckRunThreshold)
	switch {
	case err != nil:
		a.Log.Error("watchdog pass failed", "err", err)
	case rep.Degraded():
		a.Log.Warn("watchdog degraded", "failed", rep.Result.Failed, "err", rep.Result.Err)
	default:
		a.Log.Debug("watchdog pass", "events", len(rep.Raised), "repaired", rep.Repaired)
	}
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
