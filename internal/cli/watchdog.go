package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/runtime/local"
)

func init() {
	register(&command{
		name:    "watchdog",
		summary: "Run one watchdog pass over the project's store: report what did not happen",
		usage:   "--once [--config FILE] [--output table|json]",
		examples: []string{
			"interlock watchdog --once                     # from cron or a cloud function",
			"interlock watchdog --once --output json",
		},
		flags: runWatchdog,
	})
}

func runWatchdog(fs *flag.FlagSet) action {
	config := fs.String("config", "interlock.yaml", "project settings (store, pipelines, calendars, watchdog)")
	once := fs.Bool("once", false, "run one pass and exit (the only mode; interlock serve runs the watchdog continuously)")
	output := addOutputFlag(fs)
	deliver := fs.Bool("alerts", true, "deliver the pass's events (and any others pending) to the alert routes of --config; false when a running interlock serve on the same store delivers them")
	return func(ctx context.Context, env Env) int {
		if !*once {
			fmt.Fprintf(env.Stderr, "interlock watchdog: pass --once (serve runs the watchdog on its own interval)\n")
			return ExitUsage
		}
		// Passive: a serve on the same store may be making a trigger call
		// right now; its recovery is serve's, at its next start.
		a, err := app.Open(ctx, *config, app.Options{Passive: true})
		if err != nil {
			fmt.Fprintf(env.Stderr, "interlock watchdog: %v\n", err)
			return ExitRuntime
		}
		defer a.Close()
		console := env.Stdout
		if *output == "json" {
			console = env.Stderr // keep stdout one JSON document
		}
		var alerts *local.Delivery
		if *deliver {
			alerts, err = local.OpenDelivery(ctx, a, local.Options{Console: console, SlackAPIURL: os.Getenv("INTERLOCK_SLACK_API_URL")})
			if err != nil {
				fmt.Fprintf(env.Stderr, "interlock watchdog: %v\n", err)
				return ExitUsage
			}
			defer alerts.Close()
		}
		if refused := local.LoadOnce(ctx, a); len(refused) > 0 {
			fmt.Fprintf(env.Stderr, "interlock watchdog: %d pipeline file(s) refused (CONFIG_INVALID; the last valid version, if any, is watched):\n%v\n", len(refused), errors.Join(refused...))
		}
		prev, hadPrev, err := a.Engine.LastWatchdogPass(ctx)
		if err != nil {
			fmt.Fprintf(env.Stderr, "interlock watchdog: %v\n", err)
			return ExitRuntime
		}
		rep, err := a.Engine.WatchdogPass(ctx, a.Settings.Watchdog.StuckRunThreshold)
		if err != nil {
			fmt.Fprintf(env.Stderr, "interlock watchdog: %v\n", err)
			return ExitRuntime
		}
		if *output == "json" {
			type finding struct {
				Check, Pipeline, Schedule, Date, Event, Message string
			}
			out := struct {
				At       string    `json:"at"`
				Degraded bool      `json:"degraded"`
				Failed   []string  `json:"failedChecks"`
				Findings []finding `json:"findings"`
				Repaired int       `json:"repaired"`
				Previous string    `json:"previousPass,omitempty"`
			}{At: rep.At.UTC().Format(time.RFC3339), Degraded: rep.Degraded(), Failed: rep.Result.Failed, Findings: []finding{}, Repaired: rep.Repaired}
			if hadPrev {
				out.Previous = prev.UTC().Format(time.RFC3339)
			}
			for _, e := range rep.Raised {
				out.Findings = append(out.Findings, finding{Event: string(e.Type), Pipeline: e.PipelineID, Schedule: e.ScheduleID, Date: e.Date, Message: e.Message})
			}
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(out)
		} else {
			for _, e := range rep.Raised {
				fmt.Fprintf(env.Stdout, "%-26s %-20s %-13s %s\n", e.Type, e.PipelineID, e.Date, e.Message)
			}
			status := "healthy"
			if rep.Degraded() {
				status = "DEGRADED"
			}
			previous := "first pass"
			if hadPrev {
				previous = "previous pass " + prev.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(env.Stdout, "watchdog pass at %s (%s): %s, %d event(s), %d SLA timer repair(s)\n", rep.At.UTC().Format(time.RFC3339), previous, status, len(rep.Raised), rep.Repaired)
		}
		if alerts != nil {
			if err := alerts.Deliver(ctx); err != nil {
				fmt.Fprintf(env.Stderr, "interlock watchdog: delivering alerts: %v\n", err)
				return ExitRuntime
			}
		}
		if rep.Degraded() {
			return ExitFailed
		}
		return ExitOK
	}
}
