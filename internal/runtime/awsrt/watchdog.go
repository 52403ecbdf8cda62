package awsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
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
	Log               *slog.Logger
}

// WatchdogResult is the answer of one pass.
type WatchdogResult struct {
	At       time.Time `json:"at"`
	Findings int       `json:"findings"`
	Raised   []string  `json:"raised"` // the event types recorded
	Repaired int       `json:"repaired"`
	Failed   []string  `json:"failed,omitempty"` // the checks that failed
}

// Handle is the Lambda handler; the scheduled event's content is not read.
func (w *Watchdog) Handle(ctx context.Context, _ json.RawMessage) (WatchdogResult, error) {
	rep, err := w.Engine.WatchdogPass(ctx, w.StuckRunThreshold)
	res := WatchdogResult{At: rep.At, Findings: len(rep.Result.Findings), Repaired: rep.Repaired, Raised: []string{}}
	for _, e := range rep.Raised {
		res.Raised = append(res.Raised, string(e.Type))
	}
	res.Failed = rep.Result.Failed
	log := w.Log
	if log == nil {
		log = slog.Default()
	}
	log.Info("watchdog pass", "findings", res.Findings, "raised", len(res.Raised), "repaired", res.Repaired, "failed", res.Failed)
	if err != nil {
		return res, fmt.Errorf("%s: %w", FnWatchdog, err)
	}
	if rep.Degraded() {
		return res, fmt.Errorf("%s: degraded: checks failed: %s", FnWatchdog, strings.Join(res.Failed, ", "))
	}
	return res, nil
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
	return (&Watchdog{Engine: eng, StuckRunThreshold: stuck, Log: Logger()}).Handle, nil
}
