package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/duration"
	irun "github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

func init() {
	register(&command{
		name:    "rerun",
		summary: "Request a rerun of a period (budgets and the circuit breaker apply)",
		usage:   "PIPELINE --period P [--reason R] [--server URL] [--output table|json]",
		examples: []string{
			"interlock rerun gold-revenue --period 2026-03-10",
			"interlock rerun silver-cdr-hour --period 2026-03-10T07 --reason reprocess",
		},
		flags: runRerun,
	})
	register(&command{
		name:    "pause",
		summary: "Stop new runs of a pipeline; running jobs finish, alerts continue",
		usage:   "PIPELINE [--until RFC3339|DURATION] [--server URL]",
		examples: []string{
			"interlock pause gold-revenue",
			"interlock pause gold-revenue --until 2h",
		},
		flags: runPause,
	})
	register(&command{
		name:     "resume",
		summary:  "Allow new runs again; data that came during the pause is handled now",
		usage:    "PIPELINE [--server URL]",
		examples: []string{"interlock resume gold-revenue"},
		flags:    runPause,
	})
}

func runRerun(fs *flag.FlagSet) action {
	cf := addClientFlags(fs)
	period := fs.String("period", "", "the period to rerun: YYYY-MM-DD or YYYY-MM-DDTHH (required)")
	reason := fs.String("reason", "manual", "why; reasons other than data-drift/late-data draw on maxManualReruns, counted per reason")
	return func(ctx context.Context, env Env) int {
		if fs.NArg() != 1 || *period == "" {
			return usageError(env, fs, "want PIPELINE and --period")
		}
		cl, err := cf.client()
		if err != nil {
			return fail(env, "rerun", err)
		}
		var ans api.RerunAnswer
		raw, err := cl.call(ctx, "POST", "/v1/pipelines/"+url.PathEscape(fs.Arg(0))+"/reruns", api.RerunRequest{Period: *period, Reason: *reason}, &ans)
		if err != nil {
			return fail(env, "rerun", err)
		}
		if *cf.output == "json" {
			printJSON(env.Stdout, raw)
		} else if ans.Accepted {
			fmt.Fprintf(env.Stdout, "rerun of %s accepted\n", ans.Period)
		} else {
			fmt.Fprintf(env.Stdout, "rerun of %s rejected: %s\n", ans.Period, ans.Reason)
		}
		if !ans.Accepted {
			return ExitFailed
		}
		return ExitOK
	}
}

// runPause is pause and resume: fs is named for the verb.
func runPause(fs *flag.FlagSet) action {
	verb := fs.Name()
	cf := addClientFlags(fs)
	var until *string
	if verb == "pause" {
		until = fs.String("until", "", "resume automatically then: RFC3339 or a duration from now (2h), at most a year ahead")
	}
	return func(ctx context.Context, env Env) int {
		if fs.NArg() != 1 {
			fmt.Fprintf(env.Stderr, "interlock %s: want one PIPELINE\n", verb)
			return ExitUsage
		}
		// Each route takes its own body, strictly: resume refuses pause's
		// "until", so it is sent an empty object.
		var body any = struct{}{}
		var pause api.PauseRequest
		if until != nil && *until == "" && flagGiven(fs, "until") {
			fmt.Fprintf(env.Stderr, "interlock pause: --until is empty: give a time or a duration, or leave the flag out to pause until resumed\n")
			return ExitUsage
		}
		if until != nil && *until != "" {
			t, err := time.Parse(time.RFC3339, *until)
			if err != nil {
				d, derr := duration.Parse(*until)
				if derr != nil || d <= 0 {
					fmt.Fprintf(env.Stderr, "interlock pause: --until %q: want RFC3339 or a positive duration like 2h or 1d\n", *until)
					return ExitUsage
				}
				t = clock.Real{}.Now().Add(d) // "2h from now", from where the user is
			}
			// The server refuses it too; saying so here sends nothing.
			if err := irun.CheckPauseUntil(t, clock.Real{}.Now()); err != nil {
				fmt.Fprintf(env.Stderr, "interlock pause: --until %v\n", err)
				return ExitUsage
			}
			pause.Until = t.UTC().Format(time.RFC3339)
		}
		if verb == "pause" {
			body = pause
		}
		cl, err := cf.client()
		if err != nil {
			return fail(env, verb, err)
		}
		var view api.PipelineView
		raw, err := cl.call(ctx, "POST", "/v1/pipelines/"+url.PathEscape(fs.Arg(0))+"/"+verb, body, &view)
		if err != nil {
			return fail(env, verb, err)
		}
		if *cf.output == "json" {
			printJSON(env.Stdout, raw)
			return ExitOK
		}
		state := "resumed"
		if view.Paused {
			state = "paused"
			if view.PausedUntil != nil {
				state += " until " + when(view.PausedUntil)
			}
		}
		fmt.Fprintf(env.Stdout, "%s %s\n", view.ID, state)
		return ExitOK
	}
}

// flagGiven reports whether the command line set the flag, even to "".
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
