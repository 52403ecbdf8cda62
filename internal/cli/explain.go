package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
)

func init() {
	register(&command{
		name:    "explain",
		summary: "Show why a period would or would not run: each rule with the value it saw, its age and verdict",
		usage:   "PIPELINE [--period P] [--server URL] [--output table|json]",
		examples: []string{
			"interlock explain gold-revenue",
			"interlock explain silver-cdr-hour --period 2026-03-10T07",
		},
		flags: runExplain,
	})
}

func runExplain(fs *flag.FlagSet) action {
	cf := addClientFlags(fs)
	period := fs.String("period", "", "the period (YYYY-MM-DD or YYYY-MM-DDTHH; default: the current one)")
	return func(ctx context.Context, env Env) int {
		if fs.NArg() != 1 {
			return usageError(env, fs, "want one PIPELINE")
		}
		cl, err := cf.client()
		if err != nil {
			return fail(env, "explain", err)
		}
		path := "/v1/pipelines/" + url.PathEscape(fs.Arg(0)) + "/explain"
		if *period != "" {
			path += "?period=" + url.QueryEscape(*period)
		}
		var x engine.Explanation
		raw, err := cl.call(ctx, "GET", path, nil, &x)
		if err != nil {
			return fail(env, "explain", err)
		}
		if *cf.output == "json" {
			printJSON(env.Stdout, raw)
			return ExitOK
		}
		w := env.Stdout
		fmt.Fprintf(w, "%s, period %s (%s), at %s\n", x.PipelineID, x.Period, x.Timezone, when(&x.Now))
		if x.Excluded {
			fmt.Fprintf(w, "excluded   %s: nothing starts\n", x.ExcludedBy)
		}
		if x.Paused {
			fmt.Fprintln(w, "paused     new runs are held until resume")
		}
		if x.DryRun {
			fmt.Fprintln(w, "dry-run    observes and projects only")
		}
		if x.Trigger != nil {
			fmt.Fprintf(w, "trigger    %s %s: %s\n", x.Trigger.Key, verdict(x.Trigger.Passed), x.Trigger.Reason)
			if l := x.Trigger.Lineage; l != nil {
				fmt.Fprintf(w, "           %s: from OpenLineage %s of %s, run %s, at %s by %s\n", x.Trigger.SensorKey, l.EventType, l.Job, l.RunID, l.EventTime, l.Producer)
			}
		}
		fmt.Fprintf(w, "\nvalidation %s — %s\n", verdict(x.Validation.Passed), x.Validation.Summary)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  RULE\tVERDICT\tSEEN\tAGE\tREASON")
		for _, r := range x.Validation.Rules {
			seen := "-"
			if r.Observed != nil {
				seen = r.Observed.String()
			}
			age := r.SensorAge
			if age == "" {
				age = "-"
			}
			fmt.Fprintf(tw, "  %s %s %s\t%s\t%s\t%s\t%s\n", r.Key, r.Check, r.Field, verdict(r.Passed), seen, age, r.Reason)
		}
		tw.Flush()
		shown := map[string]bool{} // one line per sensor, however many rules read it
		for _, r := range x.Validation.Rules {
			if l := r.Lineage; l != nil && !shown[r.SensorKey] {
				shown[r.SensorKey] = true
				fmt.Fprintf(w, "  %s: from OpenLineage %s of %s, run %s, at %s by %s\n", r.SensorKey, l.EventType, l.Job, l.RunID, l.EventTime, l.Producer)
			}
		}
		fmt.Fprintln(w)
		if x.Run == nil {
			fmt.Fprintln(w, "lock       free: the period has no run")
		} else {
			fmt.Fprintf(w, "lock       held by run in %s since %s (cause %s, generation %d, attempt %d)\n", x.Run.State, when(&x.Run.StateSince), x.Run.Cause, x.Run.Generation, x.Run.Attempt)
			if x.Run.Outcome != "" {
				fmt.Fprintf(w, "outcome    %s\n", x.Run.Outcome)
			}
			if x.Run.EvalDeadline != nil {
				fmt.Fprintf(w, "evaluation window closes %s\n", when(x.Run.EvalDeadline))
			}
			if x.Run.TriggerCall != "" {
				fmt.Fprintf(w, "in flight  %s\n", x.Run.TriggerCall)
			}
			if x.Run.LastFailure != nil {
				fmt.Fprintf(w, "last failure %s: %s\n", x.Run.LastFailure.Category, x.Run.LastFailure.Message)
			}
			printJobOutput(w, x.Run.LastOutput)
		}
		// SLA instants in the SLA's zone, the others in the schedule's, each
		// with UTC beside it.
		d := x.Deadlines
		slaZone := d.SLATimezone
		if slaZone == "" {
			slaZone = x.Timezone
		}
		for _, l := range []struct {
			name string
			at   *time.Time
			zone string
		}{{"sla warning", d.SLAWarning, slaZone}, {"sla breach", d.SLABreach, slaZone}, {"relative sla breach", d.RelativeSLABreach, slaZone}, {"trigger deadline", d.TriggerDeadline, x.Timezone}, {"next cron tick", d.NextCronTick, x.Timezone}, {"first trigger data", d.FirstTriggerSensor, x.Timezone}} {
			if l.at != nil {
				fmt.Fprintf(w, "%-20s %s\n", l.name, zoned(l.at, l.zone, x.Period))
			}
		}
		if note := beforeLoad(d.SLAWarningBeforeLoad, d.SLABreachBeforeLoad, d.LoadedAt, slaZone, x.Period); note != "" {
			fmt.Fprintln(w, note)
		}
		fmt.Fprintln(w, "\nbudgets")
		for _, b := range x.Budgets {
			fmt.Fprintf(w, "  %-40s %d/%d used\n", b.Name, b.Used, b.Max)
		}
		return ExitOK
	}
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
