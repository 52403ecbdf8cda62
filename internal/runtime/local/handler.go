package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/runtime/local/web"
	"github.com/interlockhq/interlock/internal/store"
)

// handlerParts are what the HTTP handler is built from: serve's, or the
// api function's (ControlPlaneHandler).
type handlerParts struct {
	tokens  []api.Token
	addr    string
	metrics *api.Metrics
	health  *api.Health
	streams *api.EventStreams
	// noLiveTail: the dashboard's pages open no event stream.
	noLiveTail bool
	handler    http.Handler
}

// newHandler builds the /v1 API with the dashboard over a's engine: the
// one handler serve serves in either mode, and the api function serves
// through a Lambda function URL.
func newHandler(ctx context.Context, a *app.App, p handlerParts) (handlerParts, error) {
	dashboard, err := web.New(web.Options{Engine: a.Engine, Logger: a.Log, Health: p.health.Report, NoLiveTail: p.noLiveTail})
	if err != nil {
		return p, err
	}
	p.handler, err = api.New(api.Options{Engine: a.Engine, Settings: a.Settings, Tokens: p.tokens, Logger: a.Log, Metrics: p.metrics, DeadLetters: p.health.DeadLetters, Addr: p.addr,
		Health: p.health, Dashboard: dashboard, Streams: p.streams,
		// Ready when the store answers a cheap read.
		Ready: func() error {
			if _, err := a.Store.TimerNext(ctx); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("store: %w", err)
			}
			return nil
		}})
	return p, err
}

// ControlPlaneHandler is the handler `serve` serves in control-plane mode
// (the /v1 API and the dashboard; no timers, watchdog or alert delivery
// run), for a process that serves it without a listener of its own: the
// api function, behind a Lambda function URL. a must be in
// app.ModeControlPlane; tokens are its bearer tokens (at least one: the
// handler is reachable from other machines). Its response is buffered
// whole, so the dashboard's pages open no event stream (each page is
// current at its load); the caller answers GET /v1/events/stream itself.
func ControlPlaneHandler(ctx context.Context, a *app.App, tokens []api.Token) (http.Handler, error) {
	if a.Mode() != app.ModeControlPlane {
		return nil, fmt.Errorf("the control plane's handler serves an AWS deployment's tables; this store is %s (mode %s)", a.Settings.Store.Driver, a.Mode())
	}
	if len(tokens) == 0 {
		return nil, errors.New("the control plane's handler needs at least one token: it is reachable from other machines")
	}
	metrics := api.NewMetrics(a.Engine)
	streams := api.NewEventStreams()
	a.Engine.OnEventsCommitted(func(evs []event.Event) {
		metrics.CountEvents(evs...)
		streams.Notify()
	})
	p, err := newHandler(ctx, a, handlerParts{tokens: tokens, metrics: metrics, streams: streams, noLiveTail: true,
		health: healthOf(a)})
	if err != nil {
		return nil, err
	}
	return p.handler, nil
}

// InProcessControlPlane opens an AWS deployment's tables (storeURL,
// dynamodb://PREFIX[?region=R][&endpoint=URL]) with the caller's AWS
// credentials (the SDK's default chain) and returns the handler a control
// plane serves (ControlPlaneHandler's, with no tokens), for one process's
// own requests: the CLI's API commands given `--server dynamodb://…` run
// against it in-process, as against `serve --store` — whoever may read and
// write the tables may act, as with deploy-config. Nothing runs in the
// background: the engine is passive and the requests are the caller's.
// log receives what the handler logs (a request that failed says why there).
func InProcessControlPlane(ctx context.Context, storeURL string, log *slog.Logger) (http.Handler, error) {
	st, err := app.OpenDynamoDB(ctx, storeURL, 0)
	if err != nil {
		return nil, err
	}
	a, err := app.OpenControlPlane(ctx, st, storeURL, app.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	p, err := newHandler(ctx, a, handlerParts{metrics: api.NewMetrics(a.Engine), streams: api.NewEventStreams(), noLiveTail: true,
		health: healthOf(a)})
	if err != nil {
		return nil, err
	}
	return p.handler, nil
}

// healthOf is a's health report; a control plane's lists the
// deployment's sinks and dead letters as its alert-dispatcher recorded
// them in the tables (serve adds a local process's own).
func healthOf(a *app.App) *api.Health {
	h := &api.Health{Engine: a.Engine, Settings: a.Settings, Mode: a.Mode()}
	if a.AlertConfig != nil {
		h.Sinks, h.DeadLetters = a.AlertConfig.SinkStatus, a.AlertConfig.DeadLetters
	}
	return h
}
