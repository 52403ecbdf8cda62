// Package engine runs the Interlock lifecycle: it takes sensor writes,
// cron ticks, operator actions and durable timers, asks the pure decision
// (internal/decide, which sequences the core: internal/run, internal/rule,
// internal/schedule, internal/watchdog, …) what they mean, and commits
// the result — new state, events, timers — atomically to the store. What
// is left here is sequencing: the retry loop, needs → one batch read →
// decide → commit, and the effects after a commit or between two
// decisions (the job calls, the notifier, spans, logs).
//
// The engine decides nothing itself, not even whether a step is still its
// to take (run.TimerDue, run.StepFor) or whether an alert was sent
// already (the core reads the dedup markers: sla.Alert,
// ConfigRefusalReported, LateCallNote). For every input it loads the facts
// the decision needs from the store — the timer and the run, the sensors,
// the period's markers (sla.Marks, dryrun.Facts), and the pipeline's
// row (pause state and windows, config version) with the calendars its
// config names — calls the core, and commits what the core answered once, with the
// versions it read as the commit's conditions; a conflict means another
// process moved something, and the decision is made again on fresh facts.
// What is left here is which facts to read (a read no answer can depend on
// is skipped, as the core says: sla.MarksNeeded, dryrun.Facts.NeedsRules),
// how records are keyed, and the commit. It keeps no state that the store
// does not have, so any number of processes sharing a store decide as one
// would, and a restarted engine (Open) has nothing to rebuild. It keeps
// two caches, and neither answers a question: parsed pipeline configs,
// keyed by config and calendar versions read from the store (it saves a
// parse, pipelines.go), and the watchdog's last snapshot, refreshed
// from what changed since the previous pass as watchdog.Kept decides (it
// saves reads; each finding is committed on its dedup marker's absence
// and its run's version, watchdog.go).
package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Errors callers can test for.
var (
	ErrUnknownPipeline = decide.ErrUnknownPipeline
	ErrInvalidSensor   = decide.ErrInvalidSensor
	ErrInvalidRequest  = decide.ErrInvalidRequest
	// ErrNoSensorItem: PutSensorFromInbox found no inbox item (removed
	// since the write being decided).
	ErrNoSensorItem = decide.ErrNoSensorItem
)

// Options configure an engine.
type Options struct {
	Store    store.Store
	Clock    clock.Clock
	Jobs     trigger.Runner // wrapped in trigger.Guard by New
	Logger   *slog.Logger
	Rules    rule.Options
	EnvAllow []string
	// LookupEnv reads environment variables for job templates; nil: none.
	LookupEnv func(string) (string, bool)
	// Notify, when set, is called after every commit that changed timers,
	// so a runtime sleeping until the next timer can wake up.
	Notify func()
	// Passive marks a process that runs no timers (`interlock watchdog
	// --once` beside a serve): Open does not treat calls in flight as
	// interrupted — the serve that makes them may be alive.
	Passive bool
	// Maintenance are interlock.yaml's maintenance windows: events they
	// cover are not delivered (SilenceMatcher), and their ends send the
	// alerts of conditions that still hold.
	Maintenance []silence.Window
	// MaintenanceFrom, when set, gives the windows instead of Maintenance,
	// read each time they are needed (an AWS deployment's stored alert
	// config, which changes without a restart). An error is the
	// decision's error: nothing is decided on windows that could not be
	// read.
	MaintenanceFrom func(context.Context) ([]silence.Window, error)
	// Tracer makes the engine's spans (trace.go; the app's, when tracing
	// is on); nil: none, at no cost.
	Tracer trace.Tracer
}

// Engine is the lifecycle controller. Its methods are safe for concurrent
// use; concurrent decisions on the same run are serialised by the store's
// compare-and-swap, and the loser retries with fresh state.
type Engine struct {
	tracer trace.Tracer // nil: tracing off (trace.go)
	st     store.Store
	fc     factsCounters // how inputs read their facts (facts.go)
	clk    clock.Clock
	jobs   trigger.Runner
	// findable answers whether a job type can be looked up
	// (decide.Findable): the guard's own method, so a decision asks it
	// without calling back into the engine.
	findable    decide.Findable
	log         *slog.Logger
	rules       rule.Options
	envAllow    []string
	env         func(string) (string, bool)
	notify      func()
	events      func([]event.Event)
	passive     bool
	windows     []silence.Window
	windowsFrom func(context.Context) ([]silence.Window, error)

	parses parseCache    // parsed configs by version (pipelines.go)
	wd     watchdogCache // the watchdog's snapshot between passes
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
	jobs := trigger.Guard{Next: o.Jobs}
	return &Engine{
		st:          o.Store,
		clk:         o.Clock,
		jobs:        jobs,
		findable:    jobs.Finds,
		log:         log,
		rules:       o.Rules,
		envAllow:    o.EnvAllow,
		env:         o.LookupEnv,
		notify:      notify,
		passive:     o.Passive,
		windows:     slices.Clone(o.Maintenance),
		windowsFrom: o.MaintenanceFrom,
		tracer:      o.Tracer,
		parses:      parseCache{m: map[string]*parsed{}, refused: map[string]int64{}},
	}
}

// Open makes the engine ready. It reads no pipeline: each is parsed when
// a decision first needs it, so opening costs the same with ten pipelines
// or ten thousand (a Lambda cold start). Then, unless the engine is
// passive, every trigger call left in flight by a process that stopped is
// found and its outcome established (recovery.go): TRIGGER_OUTCOME_UNKNOWN
// at once, and a lookup of the job where its type allows.
func (e *Engine) Open(ctx context.Context) error {
	if e.passive {
		return nil
	}
	return e.recoverInterrupted(ctx)
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
func (e *Engine) retry(ctx context.Context, what string, op func(context.Context) error) error {
	var err error
	for i := 0; i < maxAttempts; i++ {
		// Each attempt is a span (its reads and its commit are children):
		// a conflict shows as one attempt ended conflicting and the next.
		actx, span := e.startSpan(ctx, spanDecide, attrAttempt.Int(i+1))
		err = op(actx)
		if span.IsRecording() {
			span.SetAttributes(attrDecision.String(what), attrConflict.Bool(errors.Is(err, store.ErrConflict)))
		}
		endSpan(span, ignoreConflict(err))
		if !errors.Is(err, store.ErrConflict) {
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
