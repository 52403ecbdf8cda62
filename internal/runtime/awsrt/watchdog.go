package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// Watchdog is the watchdog Lambda: an EventBridge scheduled rule invokes
// it (rate(5 minutes)), and each invocation is one engine.WatchdogPass on
// the DynamoDB store — the same nine checks as the local watchdog loop,
// each finding committed with its dedup marker and its events, which the
// outbox publishes like every other event (WATCHDOG_DEGRADED, and its
// clearing, included). A warm container keeps the engine, and with it the
// pass's snapshot: a pass reads what changed since the previous one.
//
// Runs with no execution behind them — a step overdue by more than
// Overdue (run.Orphaned: the execution timed out, failed, was deleted, or
// was never started) — are handed to a new execution (engine.HandOff,
// then Executions.Start), bounded per pass. An invocation whose checks
// failed returns an error after committing what it could, so the
// function's Errors alarm fires as well.
type Watchdog struct {
	Engine *engine.Engine
	// StuckRunThreshold is watchdog.stuckRunThreshold (0: the default).
	StuckRunThreshold time.Duration
	// Clock is the engine's.
	Clock clock.Clock
	// Overdue is how late a timer may be before the pass processes it
	// itself (a timer that is not a run step) or hands its run to a new
	// execution (a run step) (0: DefaultOverdue).
	Overdue time.Duration
	Log     *slog.Logger
	// Executions starts the executions of the runs the pass resumes; nil:
	// the handoff is committed and the stream-router starts the execution
	// from its record.
	Executions *ExecutionStarter
}

// DefaultOverdue: Scheduler fires a one-time schedule within a minute of
// its time; a timer five minutes late has no schedule behind it.
const DefaultOverdue = 5 * time.Minute

// maxSwept bounds the overdue timers one pass processes; the next pass
// takes the rest.
const maxSwept = 100

// WatchdogResult is the answer of one pass.
type WatchdogResult struct {
	At       time.Time `json:"at"`
	Findings int       `json:"findings"`
	Raised   []string  `json:"raised"` // the event types recorded
	Repaired int       `json:"repaired"`
	Swept    int       `json:"swept"`            // overdue timers processed
	Resumed  int       `json:"resumed"`          // runs handed to a new execution
	Failed   []string  `json:"failed,omitempty"` // the checks that failed
}

// Handle is the Lambda handler; the scheduled event's content is not read.
func (w *Watchdog) Handle(ctx context.Context, _ json.RawMessage) (WatchdogResult, error) {
	rep, err := w.Engine.WatchdogPass(ctx, w.StuckRunThreshold)
	res := WatchdogResult{At: rep.At, Findings: len(rep.Result.Findings), Repaired: rep.Repaired, Raised: []string{}}
	if err == nil {
		res.Swept, res.Resumed, err = w.sweep(ctx)
	}
	for _, e := range rep.Raised {
		res.Raised = append(res.Raised, string(e.Type))
	}
	res.Failed = rep.Result.Failed
	log := w.Log
	if log == nil {
		log = slog.Default()
	}
	log.Info("watchdog pass", "findings", res.Findings, "raised", len(res.Raised), "repaired", res.Repaired, "swept", res.Swept, "resumed", res.Resumed, "failed", res.Failed)
	if err != nil {
		return res, fmt.Errorf("%s: %w", FnWatchdog, err)
	}
	if rep.Degraded() {
		return res, fmt.Errorf("%s: degraded: checks failed: %s", FnWatchdog, strings.Join(res.Failed, ", "))
	}
	return res, nil
}

// sweep is the net under the Scheduler schedules and the executions: a
// timer overdue by more than Overdue has nothing behind it.
//
//   - A timer that is not a run step (its stream record failed for good,
//     a schedule was deleted by hand): the pass processes it with
//     engine.ProcessTimer, as its firing would have. A schedule firing at
//     the same moment is settled by the store (the timer's due time is a
//     condition of the commit).
//   - A run's step (run.Orphaned): no execution takes it — an execution
//     takes its step within seconds of the due time, and a trigger call
//     in flight moved the timer to the end of its lease. The run is
//     handed to a new execution (engine.HandOff: the timer moves to now,
//     stamped; then the execution is started, named for that instant, so
//     a second pass or the stream-router's start from the handoff's
//     record starts nothing twice). A live but slow execution finds itself
//     superseded at its next step and ends; no step is taken twice, as
//     every step commits on the timer it read.
//
// Both are bounded per pass (maxSwept); the next pass takes the rest.
func (w *Watchdog) sweep(ctx context.Context) (swept, resumed int, err error) {
	grace := w.Overdue
	if grace <= 0 {
		grace = DefaultOverdue
	}
	due, err := w.Engine.DueTimers(ctx, maxSwept)
	if err != nil {
		return 0, 0, fmt.Errorf("overdue timers: %w", err)
	}
	now := w.Clock.Now()
	var startErr error
	for _, t := range due {
		at := run.TimerAt{Kind: t.Kind, At: t.DueAt}
		switch {
		case run.Swept(at, now, grace):
			if err := w.Engine.ProcessTimer(ctx, t); err != nil {
				return swept, resumed, fmt.Errorf("overdue timer %s: %w", t.Key, err)
			}
			swept++
		case run.Orphaned(at, now, grace):
			step, handed, err := w.Engine.HandOff(ctx, t, grace)
			if err != nil {
				return swept, resumed, fmt.Errorf("orphaned step %s: %w", t.Key, err)
			}
			if !handed {
				continue
			}
			resumed++
			if w.Executions != nil {
				if err := w.Executions.Start(ctx, step, viaTimer); err != nil {
					// The handoff is committed: its stream record starts
					// the execution too, and the pass goes on with the rest.
					startErr = errors.Join(startErr, fmt.Errorf("orphaned step %s: %w", t.Key, err))
				}
			}
		}
	}
	return swept, resumed, startErr
}

// EnvStuckRunThreshold is the watchdog's stuck-run threshold as a Go
// duration ("30m"); unset: watchdog.DefaultStuckRunThreshold.
const EnvStuckRunThreshold = "STUCK_RUN_THRESHOLD"

// WatchdogFromEnv is the watchdog function: the four tables and
// STATE_MACHINE_ARN (the executions of the runs it resumes) are required;
// EVENTS_TTL_DAYS and STUCK_RUN_THRESHOLD are optional.
func WatchdogFromEnv(ctx context.Context, env Env) (any, error) {
	const fn = FnWatchdog
	cfg, err := setUpTables(ctx, env, fn, EnvStateMachineARN)
	if err != nil {
		return nil, err
	}
	stuck := watchdog.DefaultStuckRunThreshold
	if s := env.Get(EnvStuckRunThreshold); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s: %s is %q, not a positive duration like 30m", fn, EnvStuckRunThreshold, s)
		}
		stuck = d
	}
	eng, st, err := passiveEngine(ctx, cfg, env, fn)
	if err != nil {
		return nil, err
	}
	log := Logger()
	return Metered(watchedMeter(env, fn, eng, log), (&Watchdog{Engine: eng, StuckRunThreshold: stuck, Clock: clock.Real{}, Log: log,
		Executions: NewExecutionStarter(cfg, env.Get(EnvStateMachineARN), st, log)}).Handle), nil
}
