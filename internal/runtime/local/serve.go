package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/app/routing"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/telemetry/tracehttp"
)

// Options steer Serve.
type Options struct {
	// Addr overrides server.addr (tests listen on 127.0.0.1:0).
	Addr string
	// Listening is called once with the address the API listens on.
	Listening func(addr string)
	// Console is where the console alert sink writes (nil: stdout).
	Console io.Writer
	// Reload is how often pipeline files are looked at (default 5s);
	// SIGHUP (Hup) reloads at once.
	Reload time.Duration
	Hup    <-chan os.Signal
	// LookupEnv reads tokens and secrets (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// SlackAPIURL overrides Slack's API address (tests against a fake).
	SlackAPIURL string
}

func (o Options) lookupEnv() func(string) (string, bool) {
	if o.LookupEnv == nil {
		return os.LookupEnv
	}
	return o.LookupEnv
}

// delivery builds the alert routes of interlock.yaml and their deliverer.
// The caller closes the routes.
func delivery(ctx context.Context, a *app.App, o Options, lookup func(string) (string, bool), onFailure func(string), holder string) (routing.Routes, *alert.Deliverer, error) {
	routes, err := routing.Build(a.Settings.Alerts, routing.Options{
		LookupEnv: lookup, Path: a.Path, Console: o.Console, Logger: a.Log, SlackAPIURL: o.SlackAPIURL,
		Threads: alert.StoreThreads{Store: a.Store, Clock: a.Engine},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("alerts: %w", err)
	}
	deliv, err := alert.NewDeliverer(ctx, alert.Options{Store: a.Store, Clock: a.Engine, Routes: routes, Logger: a.Log, OnFailure: onFailure, Holder: holder, Silences: a.Engine})
	if err != nil {
		routes.Close()
		return nil, nil, fmt.Errorf("alerts: %w", err)
	}
	return routes, deliv, nil
}

// LoadOnce applies the pipeline files as serve's first look does (a
// pipeline no file defines does not run; a refused file keeps its last
// valid version; CONFIG_INVALID once per content) and returns the refused
// files with their errors, in file order. `interlock watchdog --once` runs
// it before its pass.
func LoadOnce(ctx context.Context, a *app.App) (refused []error) {
	r := newReloader(a, a.Log)
	r.reload(ctx)
	files := make([]string, 0, len(r.refused))
	for f := range r.refused {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		refused = append(refused, r.refused[f])
	}
	return refused
}

// Delivery sends the alerts in the log to the routes of interlock.yaml
// on demand (serve delivers continuously instead).
type Delivery struct {
	routes routing.Routes
	d      *alert.Deliverer
}

// OpenDelivery builds the routes and starts the cursors of new sinks at
// the log's current end: open it before writing the events it must send.
func OpenDelivery(ctx context.Context, a *app.App, o Options) (*Delivery, error) {
	routes, d, err := delivery(ctx, a, o, o.lookupEnv(), nil, app.OneShotIdentity())
	if err != nil {
		return nil, err
	}
	return &Delivery{routes: routes, d: d}, nil
}

// Deliver sends every pending alert (retried and dead-lettered as serve
// does).
func (d *Delivery) Deliver(ctx context.Context) error { return d.d.DeliverPending(ctx) }

// Close closes the sinks.
func (d *Delivery) Close() { d.routes.Close() }

// Serve runs the local runtime until ctx ends: the pipeline files (and
// their reloads), the engine's durable timers, the watchdog, alert
// delivery, the retention sweep and the HTTP API. It returns once
// everything has stopped; a setup problem (unresolvable token, unwritable
// alert file, address in use) is returned before anything runs.
//
// On an AWS deployment's tables (app.ModeControlPlane) it serves the API
// and the dashboard only: the deployment's functions run the timers, the
// watchdog and alert delivery, its tables expire by ttl, and its configs
// are loaded by deploy-config — none of those runs here, or it would run
// twice. Operator actions commit through the engine as locally; the
// timers they arm are the deployment's to realise.
func Serve(ctx context.Context, a *app.App, o Options) error {
	log := a.Log
	lookup := o.lookupEnv()
	if o.Reload <= 0 {
		o.Reload = 5 * time.Second
	}
	control := a.Mode() == app.ModeControlPlane
	metrics := api.NewMetrics(a.Engine)
	addr := a.Settings.Server.Addr
	if o.Addr != "" {
		addr = o.Addr
	}
	// This process among the replicas sharing the store: the holder of
	// the watchdog's and the alert sinks' leases.
	identity := a.Identity(addr)
	var deliv *alert.Deliverer
	if !control {
		routes, d, err := delivery(ctx, a, o, lookup, metrics.AlertDeliveryFailed, identity)
		if err != nil {
			return err
		}
		defer routes.Close()
		for _, r := range routes {
			metrics.KnowSinks(r.Sink.Name())
		}
		deliv = d
	}
	// Token files are relative to interlock.yaml, like every other path.
	tokens, err := api.ResolveTokens(a.Settings, lookup, func(p string) ([]byte, error) { return os.ReadFile(a.Path(p)) })
	if err != nil {
		return err
	}
	health := healthOf(a)
	var rl *reloader
	if !control {
		rl = newReloader(a, log)
		health.Sinks, health.DeadLetters, health.Refused = deliv.Status, deliv.DeadLetters, rl.Refused
	}
	h, err := newHandler(ctx, a, handlerParts{tokens: tokens, addr: addr, metrics: metrics, health: health, streams: api.NewEventStreams()})
	if err != nil {
		return err
	}
	handler, streams := h.handler, h.streams

	wake := make(chan struct{}, 1)
	a.Engine.OnTimersChanged(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	a.Engine.OnEventsCommitted(func(evs []event.Event) {
		metrics.CountEvents(evs...)
		if deliv != nil {
			deliv.Notify()
		}
		streams.Notify()
	})
	if control {
		running, err := a.Engine.Pipelines(ctx)
		if err != nil {
			return fmt.Errorf("pipelines: %w", err)
		}
		log.Info("control plane: the deployment's pipelines (loaded by deploy-config; no files read here)", "pipelines", len(running))
	} else {
		applied, refused := rl.reload(ctx)
		running, err := a.Engine.Pipelines(ctx)
		if err != nil {
			return fmt.Errorf("pipelines: %w", err)
		}
		log.Info("pipelines loaded", "applied", applied, "refused", refused, "pipelines", len(running))
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	// Every request but an event stream is short, so a slow or stuck
	// client is cut off instead of holding a connection and a goroutine:
	// a minute to send a request, two for the whole exchange (a sensor
	// write may start a job, whose own calls time out sooner).
	// Traced when tracing is on: each request a server span that
	// continues a caller's traceparent; a sensor write's span is its child.
	srv := &http.Server{Handler: tracehttp.Handler(handler, "interlock.api"), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute}
	// Event streams (GET /v1/events/stream) are the exception: they push
	// each write's deadline on, and end when the server shuts down
	// (Shutdown would otherwise wait for them).
	srv.RegisterOnShutdown(streams.Close)

	var wg sync.WaitGroup
	loops, stop := context.WithCancel(ctx)
	defer stop()
	goRun := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	goRun(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP server stopped", "err", err)
		}
	})
	if !control {
		goRun(func() { RunTimers(loops, a.Engine, wake, log) })
		goRun(func() { a.RunWatchdog(loops, identity) })
		sweeper := &Sweeper{Store: a.Store, Clock: a.Engine, Retention: a.Settings.Retention, Log: log, Deleted: metrics.CountExpired}
		goRun(func() { sweeper.Run(loops) })
		goRun(func() { deliv.Run(loops) })
		goRun(func() {
			t := time.NewTicker(o.Reload)
			defer t.Stop()
			for {
				select {
				case <-loops.Done():
					return
				case <-t.C:
				case <-o.Hup:
					log.Info("SIGHUP: reloading pipeline files")
				}
				rl.reload(loops)
			}
		})
	}
	log.Info("interlock serving", "addr", ln.Addr().String(), "store", a.Settings.Store.DSN, "mode", a.Mode())
	if o.Listening != nil {
		o.Listening(ln.Addr().String())
	}

	<-ctx.Done()
	log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		log.Warn("HTTP shutdown", "err", err)
	}
	stop()
	wg.Wait()
	return nil
}
