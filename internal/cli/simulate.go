package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/project"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/simulate"
	"github.com/interlockhq/interlock/internal/store"
)

func init() {
	register(&command{
		name:    "simulate",
		summary: "Replay scenario files on a virtual clock through the real engine and check their expectations",
		usage:   "[--output table|json] [--quiet] FILE…",
		examples: []string{
			"interlock simulate scenarios/weekend.yaml",
			"interlock simulate --quiet scenarios/*.yaml      # only the expectations and the summary",
			"interlock simulate --output json scenario.yaml  # one JSON object per event, then per expectation",
		},
		flags: runSimulate,
	})
}

// openSQLite opens the simulator's temporary store.
func openSQLite(ctx context.Context, path string) (store.Store, error) {
	return app.OpenScratch(ctx, path)
}

func runSimulate(fs *flag.FlagSet) action {
	output := addOutputFlag(fs)
	quiet := fs.Bool("quiet", false, "do not print the event timeline")
	return func(ctx context.Context, env Env) int {
		if fs.NArg() == 0 {
			return usageError(env, fs, "no scenario file given")
		}
		passed, failed, invalid := 0, 0, 0
		for _, file := range fs.Args() {
			// A pipeline, calendar or interlock.yaml given by mistake is named
			// as such, not listed as a scenario's missing fields.
			if data, err := os.ReadFile(file); err == nil {
				if err := project.NotAScenario(file, data); err != nil {
					invalid++
					fmt.Fprintln(env.Stderr, err)
					continue
				}
			}
			sc, err := scenario.Load(file)
			if err != nil {
				invalid++
				printLoadError(env.Stderr, file, err)
				continue
			}
			res, err := simulate.Run(ctx, sc, simulate.Options{OpenStore: openSQLite})
			if err != nil {
				fmt.Fprintf(env.Stderr, "%s: simulation failed: %v\n", file, err)
				return ExitRuntime
			}
			if *output == "json" {
				printSimJSON(env.Stdout, res)
			} else {
				printSimTable(env.Stdout, res, *quiet)
			}
			if res.Passed() {
				passed++
			} else {
				failed++
			}
		}
		fmt.Fprintf(env.Stdout, "%d passed, %d failed\n", passed, failed)
		switch {
		case invalid > 0:
			return ExitUsage
		case failed > 0:
			return ExitFailed
		}
		return ExitOK
	}
}

func printLoadError(w io.Writer, file string, err error) {
	if errs, ok := err.(confdec.Errors); ok {
		for _, e := range errs {
			fmt.Fprintln(w, e.Error())
		}
		return
	}
	fmt.Fprintf(w, "%s: %v\n", file, err)
}

func printSimTable(w io.Writer, res *simulate.Result, quiet bool) {
	sc := res.Scenario
	fmt.Fprintf(w, "== %s (%s)\n", sc.Name, sc.Path)
	if !quiet {
		for _, e := range res.Events {
			msg := e.Message + simulate.Mark(e)
			if id := res.Silenced[e.ID]; id != "" {
				msg += "  [silenced by " + id + "]"
			}
			fmt.Fprintf(w, "%s  %-26s %-18s %-6s %-13s %s\n", e.Time.UTC().Format(time.RFC3339), e.Type, e.PipelineID, e.ScheduleID, e.Date, msg)
		}
		if len(res.Events) == 0 {
			fmt.Fprintln(w, "(no events)")
		}
	}
	for _, a := range res.Errors {
		fmt.Fprintf(w, "refused  %s  timeline line %d: %s\n", a.At.UTC().Format(time.RFC3339), a.Line, a.Err)
	}
	for _, c := range res.Checks {
		status := "ok    "
		if !c.OK {
			status = "FAILED"
		}
		kind := "expect"
		if c.Absent || c.Refusal {
			kind = c.Kind()
		}
		fmt.Fprintf(w, "%s %s %s (line %d): %s\n", status, kind, c.What(), c.Matcher.Line, c.Why)
	}
	verdict := "PASSED"
	if !res.Passed() {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "%s: %d event(s), %d expectation(s)\n\n", verdict, len(res.Events), len(res.Checks))
}

type simEventJSON struct {
	Time       string     `json:"time"`
	Type       event.Type `json:"type"`
	PipelineID string     `json:"pipelineId"`
	ScheduleID string     `json:"scheduleId"`
	Date       string     `json:"date"`
	Message    string     `json:"message"`
	Detail     any        `json:"detail"`
	SilencedBy string     `json:"silencedBy,omitempty"`
}

type simCheckJSON struct {
	Scenario    string `json:"scenario"`
	Expectation string `json:"expectation"`
	Kind        string `json:"kind"`
	Line        int    `json:"line"`
	OK          bool   `json:"ok"`
	Matched     int    `json:"matched"`
	Why         string `json:"why"`
}

func printSimJSON(w io.Writer, res *simulate.Result) {
	enc := json.NewEncoder(w)
	for _, e := range res.Events {
		_ = enc.Encode(simEventJSON{Time: e.Time.UTC().Format(time.RFC3339), Type: e.Type, PipelineID: e.PipelineID, ScheduleID: e.ScheduleID, Date: e.Date, Message: e.Message, Detail: e.Detail, SilencedBy: res.Silenced[e.ID]})
	}
	for _, c := range res.Checks {
		_ = enc.Encode(simCheckJSON{Scenario: res.Scenario.Name, Expectation: c.What(), Kind: c.Kind(), Line: c.Matcher.Line, OK: c.OK, Matched: c.Matched, Why: c.Why})
	}
}
