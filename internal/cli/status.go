package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"text/tabwriter"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

func init() {
	register(&command{
		name:    "status",
		summary: "Show pipelines: current period, run state, SLA deadline, last events",
		usage:   "[PIPELINE] [--server URL] [--output table|json]",
		examples: []string{
			"interlock status",
			"interlock status gold-revenue",
		},
		run: runStatus,
	})
}

func runStatus(ctx context.Context, env Env, args []string) int {
	c := commands["status"]
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	cf := addClientFlags(fs)
	if code, ok := parseFlags(env, c, fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(env.Stderr, "interlock status: at most one pipeline\n")
		return ExitUsage
	}
	cl, err := cf.client()
	if err != nil {
		return fail(env, "status", err)
	}
	if fs.NArg() == 0 {
		var list api.PipelineList
		raw, err := cl.call(ctx, "GET", "/v1/pipelines", nil, &list)
		if err != nil {
			return fail(env, "status", err)
		}
		if *cf.output == "json" {
			printJSON(env.Stdout, raw)
			return ExitOK
		}
		tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PIPELINE\tPERIOD\tRUN\tSLA BREACH\tPAUSED")
		for _, p := range list.Pipelines {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\n", p.ID, p.CurrentPeriod, runState(p.Run), slaBreach(p.SLA), p.Paused)
		}
		tw.Flush()
		if len(list.Pipelines) == 0 {
			fmt.Fprintln(env.Stdout, "(no pipelines loaded)")
		}
		var dead api.DeadLetterList
		if _, err := cl.call(ctx, "GET", "/v1/alerts/dead-letters", nil, &dead); err == nil && len(dead.DeadLetters) > 0 {
			fmt.Fprintf(env.Stdout, "\n%d alert(s) could not be delivered:\n", len(dead.DeadLetters))
			for _, d := range dead.DeadLetters {
				fmt.Fprintf(env.Stdout, "  %s  %s %s %s after %d attempt(s): %s\n", d.Sink, d.Type, d.PipelineID, d.Period, d.Attempts, d.Error)
			}
		}
		return ExitOK
	}
	id := fs.Arg(0)
	var p api.PipelineView
	raw, err := cl.call(ctx, "GET", "/v1/pipelines/"+url.PathEscape(id), nil, &p)
	if err != nil {
		return fail(env, "status", err)
	}
	var page struct {
		Events []event.Envelope `json:"events"`
	}
	evRaw, err := cl.call(ctx, "GET", "/v1/events?pipeline="+url.QueryEscape(id)+"&since=24h&limit=1000", nil, &page)
	if err != nil {
		return fail(env, "status", err)
	}
	if *cf.output == "json" {
		// One document: the pipeline and its events of the last 24 hours.
		var evs struct {
			Events json.RawMessage `json:"events"`
		}
		_ = json.Unmarshal(evRaw, &evs)
		if len(evs.Events) == 0 {
			evs.Events = json.RawMessage("[]")
		}
		doc, err := json.Marshal(struct {
			Pipeline json.RawMessage `json:"pipeline"`
			Events   json.RawMessage `json:"events"`
		}{raw, evs.Events})
		if err != nil {
			return fail(env, "status", err)
		}
		printJSON(env.Stdout, doc)
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "pipeline   %s (owner %s, schedule %s, %s)\n", p.ID, p.Owner, p.ScheduleID, p.Timezone)
	fmt.Fprintf(env.Stdout, "period     %s\n", p.CurrentPeriod)
	fmt.Fprintf(env.Stdout, "run        %s\n", runState(p.Run))
	if p.SLA != nil {
		fmt.Fprintf(env.Stdout, "sla        deadline %s: warning %s, breach %s\n", p.SLA.Deadline, when(p.SLA.Warning), when(&p.SLA.Breach))
	}
	if p.NextTick != nil {
		fmt.Fprintf(env.Stdout, "next tick  %s\n", when(p.NextTick))
	}
	if p.Paused {
		fmt.Fprintf(env.Stdout, "paused     until %s\n", map[bool]string{true: when(p.PausedUntil), false: "resumed"}[p.PausedUntil != nil])
	}
	if p.DryRun {
		fmt.Fprintln(env.Stdout, "dry-run    yes: observes and projects, never triggers")
	}
	evs := page.Events
	if len(evs) > 10 {
		evs = evs[len(evs)-10:]
	}
	fmt.Fprintf(env.Stdout, "\nlast events (24h):\n")
	for _, e := range evs {
		fmt.Fprintf(env.Stdout, "  %s  %-26s %-13s %s\n", e.Time, e.DetailType, e.Detail.Date, e.Detail.Message)
	}
	if len(evs) == 0 {
		fmt.Fprintln(env.Stdout, "  (none)")
	}
	return ExitOK
}

func runState(r *api.RunBrief) string {
	if r == nil {
		return "no run yet"
	}
	s := string(r.State)
	if r.Outcome != "" {
		s += " (" + string(r.Outcome) + ")"
	}
	if r.Attempt > 0 {
		s += fmt.Sprintf(", attempt %d", r.Attempt)
	}
	return s
}

func slaBreach(s *api.SLAView) string {
	if s == nil {
		return "-"
	}
	return when(&s.Breach)
}
