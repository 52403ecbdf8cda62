package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

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
		flags: runStatus,
	})
}

func runStatus(fs *flag.FlagSet) action {
	cf := addClientFlags(fs)
	return func(ctx context.Context, env Env) int {
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\n", p.ID, p.CurrentPeriod, runState(p.Run), slaBreach(p.SLA, p.CurrentPeriod), p.Paused)
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
		if s := p.SLA; s != nil {
			fmt.Fprintf(env.Stdout, "sla        deadline %s: warning %s, breach %s\n", s.Deadline, zoned(s.Warning, s.Timezone, p.CurrentPeriod), zoned(&s.Breach, s.Timezone, p.CurrentPeriod))
			if note := beforeLoad(s.WarningBeforeLoad, s.BreachBeforeLoad, s.LoadedAt, s.Timezone, p.CurrentPeriod); note != "" {
				fmt.Fprintf(env.Stdout, "           %s\n", note)
			}
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

func slaBreach(s *api.SLAView, period string) string {
	if s == nil {
		return "-"
	}
	return zoned(&s.Breach, s.Timezone, period)
}

// zoned renders an instant for people in the zone it belongs to, with UTC
// in parentheses: "09:00 America/New_York (14:00Z)", the date added where
// it is not the period's date ("2026-03-11 06:00 Europe/Paris (05:00Z)",
// "20:00 America/New_York (2026-03-11 00:00Z)"). An unknown zone falls
// back to UTC alone.
func zoned(t *time.Time, zone, period string) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	loc, err := time.LoadLocation(zone)
	if zone == "" || err != nil {
		return when(t)
	}
	clock := func(x time.Time) string {
		if x.Second() != 0 {
			return x.Format("15:04:05")
		}
		return x.Format("15:04")
	}
	day := func(x time.Time) string { return x.Format(time.DateOnly) }
	local, utc := t.In(loc), t.UTC()
	periodDate, _, _ := strings.Cut(period, "T")
	out := clock(local) + " " + zone
	if day(local) != periodDate {
		out = day(local) + " " + out
	}
	if loc == time.UTC {
		return out
	}
	u := clock(utc) + "Z"
	if day(utc) != day(local) {
		u = day(utc) + " " + u
	}
	return out + " (" + u + ")"
}

// beforeLoad says which SLA alerts of a period are not sent because their
// time came before the pipeline was first loaded (SLA alerts are
// forward-only); "" when none.
func beforeLoad(warning, breach bool, loadedAt *time.Time, zone, period string) string {
	switch {
	case breach:
		return "no SLA verdict: pipeline loaded at " + zoned(loadedAt, zone, period) + ", after the breach time"
	case warning:
		return "no SLA warning: pipeline loaded at " + zoned(loadedAt, zone, period) + ", after the warning time"
	}
	return ""
}
