package awsrt

import (
	"context"
	"encoding/json"
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
// Runs with no execution behind them are the stale-runs and stuck-runs
// checks' (RUN_STUCK, SFN_TIMEOUT). An invocation whose checks failed
// returns an error after committing what it could, so the function's
// Errors alarm fires as well.
type Watchdog struct {
	Engine *engine.Engine
	// StuckRunThreshold is watchdog.stuckRunThreshold (0: the default).
	StuckRunThreshold time.Duration
	// Clock is the engine's.
	Clock clock.Clock
	// Overdue is how late a timer that is not a run step may be before
	// the pass processes it itself (0: DefaultOverdue).
	Overdue time.Duration
	Log     *slog.Logger
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
	Failed   []string  `json:"failed,omitempty"` // the checks that failed
}

// Handle is the Lambda handler; the scheduled event's content is not read.
func (w *Watchdog) Handle(ctx context.Context, _ json.RawMessage) (WatchdogResult, error) {
	rep, err := w.Engine.WatchdogPass(ctx, w.StuckRunThreshold)
	res := WatchdogResult{At: rep.At, Findings: len(rep.Result.Findings), Repaired: rep.Repaired, Raised: []string{}}
	if err == nil {
		res.Swept, err = w.sweep(ctx)
	}
	for _, e := range rep.Raised {
		res.Raised = append(res.Raised, string(e.Type))
	}
	res.Failed = rep.Result.Failed
	log := w.Log
	if log == nil {
		log = slog.Default()
	}
	log.Info("watchdog pass", "findings", res.Findings, "raised", len(res.Raised), "repaired", res.Repaired, "swept", res.Swept, "failed", res.Failed)
	if err != nil {
		return res, fmt.Errorf("%s: %w", FnWatchdog, err)
	}
	if rep.Degraded() {
		return res, fmt.Errorf("%s: degraded: checks failed: %s", FnWatchdog, strings.Join(res.Failed, ", "))
	}
	return res, nil
}

// sweep is the net under the Scheduler schedules: a timer that is not a
// run step and is overdue by more than Overdue has no schedule behind it
// (its stream record failed for good, a schedule was deleted by hand), so
// the pass processes it with engine.ProcessTimer, as its firing would
// have. A schedule firing at the same moment is settled by the store (the
// timer's due time is a condition of the commit). Run steps are left to
// the stuck-runs and stale-runs checks.
func (w *Watchdog) sweep(ctx context.Context) (int, error) {
	grace := w.Overdue
	if grace <= 0 {
		grace = DefaultOverdue
	}
	due, err := w.Engine.DueTimers(ctx, maxSwept)
	if err != nil {
		return 0, fmt.Errorf("overdue timers: %w", err)
	}
	now := w.Clock.Now()
	n := 0
	for _, t := range due {
		if !run.Swept(run.TimerAt{Kind: t.Kind, At: t.DueAt}, now, grace) {
			continue
		}
		if err := w.Engine.ProcessTimer(ctx, t); err != nil {
			return n, fmt.Errorf("overdue timer %s: %w", t.Key, err)
		}
		n++
	}
	return n, nil
}

// EnvStuckRunThreshold is the watchdog's stuck-run threshold as a Go
// duration ("30m"); unset: watchdog.DefaultStuckRunThreshold.
const EnvStuckRunThreshold = "STUCK_RUN_THRESHOLD"

// WatchdogFromEnv is the watchdog function: the four tables are required;
// EVENTS_TTL_DAYS and STUCK_RUN_THRESHOLD are optional.
func WatchdogFromEnv(ctx context.Context, env Env) (any, error) {
	const fn = FnWatchdog
	cfg, err := setUp(ctx, env, fn, TableVars...)
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
	eng, _, err := passiveEngine(ctx, cfg, env, fn)
	if err != nil {
		return nil, err
	}
	return (&Watchdog{Engine: eng, StuckRunThreshold: stuck, Clock: clock.Real{}, Log: Logger()}).Handle, nil
}
