// Package engine runs the Interlock lifecycle: it takes sensor writes,
// cron ticks, operator actions and durable timers, asks the pure core
// (internal/run, internal/rule, internal/schedule) what they mean, and
// commits the result — new state, events, timers — atomically to the store.
//
// The engine holds the clock and the ports (store, jobs). It decides nothing
// itself beyond sequencing: every verdict comes from the core packages. It
// keeps no state that the store does not have: a restarted engine (Open)
// rebuilds its config cache from the store and carries on from the durable
// timers.
package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Errors callers can test for.
var (
	ErrUnknownPipeline = errors.New("unknown pipeline")
	ErrInvalidSensor   = errors.New("invalid sensor")
	ErrInvalidRequest  = errors.New("invalid request")
)

// Options configure an engine.
type Options struct {
	Store     store.Store
	Clock     clock.Clock
	Jobs      trigger.Runner // wrapped in trigger.Guard by New
	Logger    *slog.Logger
	Rules     rule.Options
	Calendars map[string]schedule.Calendar
	EnvAllow  []string
	// LookupEnv reads environment variables for job templates; nil: none.
	LookupEnv func(string) (string, bool)
	// Notify, when set, is called after every commit that changed timers,
	// so a runtime sleeping until the next timer can wake up.
	Notify func()
	// Passive marks a process that runs no timers (`interlock watchdog
	// --once` beside a serve): Open does not treat calls in flight as
	// interrupted — the serve that makes them may be alive.
	Passive bool
}

// Engine is the lifecycle controller. Its methods are safe for concurrent
// use; concurrent decisions on the same run are serialised by the store's
// compare-and-swap, and the loser retries with fresh state.
type Engine struct {
	st      store.Store
	clk     clock.Clock
	jobs    trigger.Runner
	log     *slog.Logger
	rules   rule.Options
	popt    pipeline.Options
	env     func(string) (string, bool)
	notify  func()
	events  func([]event.Event)
	passive bool

	mu        sync.RWMutex
	pipelines map[string]*loadedPipeline

	wd watchdogCache // the watchdog's snapshot between passes
}

type loadedPipeline struct {
	p   *pipeline.Pipeline
	row store.Pipeline
}

// New returns an engine; call Open before use.
func New(o Options) *Engine {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	notify := o.Notify
	if notify == nil {
		notify = func() {}
	}
	return &Engine{
		st:        o.Store,
		clk:       o.Clock,
		jobs:      trigger.Guard{Next: o.Jobs},
		log:       log,
		rules:     o.Rules,
		popt:      pipeline.Options{Calendars: o.Calendars, EnvAllow: o.EnvAllow},
		env:       o.LookupEnv,
		notify:    notify,
		passive:   o.Passive,
		pipelines: map[string]*loadedPipeline{},
	}
}

// Open rebuilds the engine's config cache from the store. Stored configs
// that no longer load (a calendar they name was removed) are skipped with a
// CONFIG_INVALID event, so the rest keep running. Then every trigger call
// left in flight by a process that stopped is found and its outcome
// established (recovery.go): TRIGGER_OUTCOME_UNKNOWN at once, and a
// lookup of the job where its type allows — unless the engine is passive.
func (e *Engine) Open(ctx context.Context) error {
	if err := e.loadStored(ctx); err != nil {
		return err
	}
	if e.passive {
		return nil
	}
	return e.recoverInterrupted(ctx)
}

func (e *Engine) loadStored(ctx context.Context) error {
	rows, err := e.st.PipelineList(ctx)
	if err != nil {
		return fmt.Errorf("engine: load pipelines: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, row := range rows {
		p, err := pipeline.ParsePipeline(row.File, row.Doc, e.popt)
		if err != nil {
			e.log.Error("stored pipeline config no longer loads", "pipeline", row.ID, "err", err)
			continue
		}
		e.pipelines[row.ID] = &loadedPipeline{p: p, row: row}
	}
	return nil
}

// OnTimersChanged sets the function called after every commit that
// changed timers (replacing Options.Notify). Call it before the engine is
// used concurrently: runtimes set it once, before starting their loops.
func (e *Engine) OnTimersChanged(f func()) {
	if f == nil {
		f = func() {}
	}
	e.notify = f
}

// OnEventsCommitted sets the function called with the events of every
// commit that stored some (alert delivery wakes up, metrics count them).
// Like OnTimersChanged, call it before concurrent use.
func (e *Engine) OnEventsCommitted(f func([]event.Event)) { e.events = f }

// Pipeline returns the loaded config of a pipeline.
func (e *Engine) Pipeline(id string) (*pipeline.Pipeline, store.Pipeline, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	lp, ok := e.pipelines[id]
	if !ok {
		return nil, store.Pipeline{}, false
	}
	return lp.p, lp.row, true
}

// Pipelines lists the loaded pipeline ids.
func (e *Engine) Pipelines() []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	ids := make([]string, 0, len(e.pipelines))
	for id := range e.pipelines {
		ids = append(ids, id)
	}
	return ids
}

func (e *Engine) cacheRow(row store.Pipeline) {
	e.mu.Lock()
	if lp, ok := e.pipelines[row.ID]; ok {
		lp.row = row
	}
	e.mu.Unlock()
}

// Store exposes the engine's store for read-only use by runtimes.
func (e *Engine) Store() store.Store { return e.st }

// Now is the engine clock's time.
func (e *Engine) Now() time.Time { return e.clk.Now() }

// maxAttempts bounds retries of an operation that lost a compare-and-swap
// race; each retry starts from fresh state. Under contention (many writers
// of one sensor) every attempt lets at least one writer through, so the
// bound is well above any realistic number of simultaneous writers.
const maxAttempts = 64

// retry runs op until it commits or fails with something other than a
// conflict. Between attempts it waits a short random time that grows with
// the attempt, so racing writers stop colliding in lockstep.
func (e *Engine) retry(ctx context.Context, what string, op func() error) error {
	var err error
	for i := 0; i < maxAttempts; i++ {
		if err = op(); !errors.Is(err, store.ErrConflict) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		backoff(ctx, i)
	}
	return fmt.Errorf("engine: %s: still conflicting after %d attempts: %w", what, maxAttempts, err)
}

// backoff waits up to (attempt+1)×200µs, at random; it is contention
// control, not timekeeping, and reads no clock.
func backoff(ctx context.Context, attempt int) {
	var b [2]byte
	_, _ = rand.Read(b[:])
	d := time.Duration(int(b[0])<<8|int(b[1])) % time.Duration((attempt+1)*200) * time.Microsecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// newID returns a unique event id: the time in milliseconds (so ids sort
// roughly by time) and 64 random bits.
func newID(now time.Time) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatInt(now.UnixMilli(), 36) + "-" + hex.EncodeToString(b[:])
}
