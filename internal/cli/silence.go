package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/silence"
)

// `interlock silence add|list|expire`: silences through the API
// (docs/silences.md).

func init() {
	register(&command{
		name:    "silence",
		summary: "Silence alerts (add), list silences (list), or end one now (expire)",
		usage:   "add [--pipeline GLOB] [--type T] [--level L] [--owner O] (--duration D | --until RFC3339) [--comment TEXT] | list [--all] | expire ID  [--server URL] [--output table|json]",
		examples: []string{
			`interlock silence add --pipeline 'gold-*' --duration 2h --comment "warehouse migration"`,
			`interlock silence add --owner analytics --type SLA_BREACH --until 2026-03-10T18:00:00Z`,
			"interlock silence list --all",
			"interlock silence expire s-20260310-4f1c2a9b7e3d",
		},
		args:  func() []string { return []string{"add", "list", "expire"} },
		flags: runSilence,
	})
}

// listFlag is a repeatable flag whose values may also be comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		*l = append(*l, strings.TrimSpace(v))
	}
	return nil
}

func runSilence(fs *flag.FlagSet) action {
	cf := addClientFlags(fs)
	var pipelines, types, levels, owners listFlag
	fs.Var(&pipelines, "pipeline", "add: pipeline id or glob (gold-*); repeatable")
	fs.Var(&types, "type", "add: event type (SLA_BREACH); repeatable")
	fs.Var(&levels, "level", "add: event level, info, warning or error; repeatable")
	fs.Var(&owners, "owner", "add: the pipelines' owner (pipeline.owner); repeatable")
	dur := fs.String("duration", "", "add: how long from now (30m, 2h, 1d)")
	until := fs.String("until", "", "add: when it ends (RFC3339)")
	comment := fs.String("comment", "", "add: why, for whoever sees the silenced alerts")
	id := fs.String("id", "", "add: name the silence (letters, digits, '-', '_', '.'); a second silence of that name is refused (default: one is made)")
	all := fs.Bool("all", false, "list: every stored silence, not only the active and those ended in the last day")
	return func(ctx context.Context, env Env) int {
		verb := fs.Arg(0)
		if verb != "add" && verb != "list" && verb != "expire" {
			return usageError(env, fs, "want add, list or expire")
		}
		for _, f := range []string{"pipeline", "type", "level", "owner", "duration", "until", "comment", "all"} {
			ofVerb := (verb == "add" && f != "all") || (verb == "list" && f == "all")
			if flagGiven(fs, f) && !ofVerb {
				fmt.Fprintf(env.Stderr, "interlock silence %s: --%s is not a flag of %s\n", verb, f, verb)
				return ExitUsage
			}
		}
		rest := fs.Args()[1:]
		name := "silence " + verb
		cl, err := cf.client()
		if err != nil {
			return fail(env, name, err)
		}
		switch verb {
		case "add":
			if len(rest) != 0 {
				fmt.Fprintf(env.Stderr, "interlock silence add: unexpected argument %q (matchers are flags: --pipeline, --type, --level, --owner)\n", rest[0])
				return ExitUsage
			}
			if len(pipelines)+len(types)+len(levels)+len(owners) == 0 {
				fmt.Fprintf(env.Stderr, "interlock silence add: give at least one matcher (--pipeline, --type, --level, --owner)\n")
				return ExitUsage
			}
			if (*dur == "") == (*until == "") {
				fmt.Fprintf(env.Stderr, "interlock silence add: give one of --duration and --until\n")
				return ExitUsage
			}
			m := silence.Written{Pipelines: pipelines, Types: types, Levels: levels, Owners: owners}
			req := api.SilenceRequest{ID: *id, Written: m, Duration: *dur, Until: *until, Comment: *comment}
			var s api.Silence
			raw, err := cl.call(ctx, "POST", "/v1/silences", req, &s)
			if err != nil {
				return fail(env, name, err)
			}
			if *cf.output == "json" {
				printJSON(env.Stdout, raw)
			} else {
				fmt.Fprintf(env.Stdout, "silence %s until %s\n", s.ID, s.EndsAt)
			}
			return ExitOK
		case "list":
			if len(rest) != 0 {
				fmt.Fprintf(env.Stderr, "interlock silence list: takes no argument\n")
				return ExitUsage
			}
			path := "/v1/silences"
			if *all {
				path += "?all=true"
			}
			var ans api.Silences
			raw, err := cl.call(ctx, "GET", path, nil, &ans)
			if err != nil {
				return fail(env, name, err)
			}
			if *cf.output == "json" {
				printJSON(env.Stdout, raw)
				return ExitOK
			}
			printSilences(env, ans.Silences)
			return ExitOK
		default: // expire
			if len(rest) != 1 {
				fmt.Fprintf(env.Stderr, "interlock silence expire: want one silence ID\n")
				return ExitUsage
			}
			var s api.Silence
			raw, err := cl.call(ctx, "DELETE", "/v1/silences/"+url.PathEscape(rest[0]), nil, &s)
			if err != nil {
				return fail(env, name, err)
			}
			if *cf.output == "json" {
				printJSON(env.Stdout, raw)
			} else {
				end := s.ExpiredAt
				if end == "" {
					end = s.EndsAt
				}
				fmt.Fprintf(env.Stdout, "silence %s ended at %s\n", s.ID, end)
			}
			return ExitOK
		}
	}
}

func printSilences(env Env, ss []api.Silence) {
	if len(ss) == 0 {
		fmt.Fprintln(env.Stdout, "no silences")
		return
	}
	fmt.Fprintf(env.Stdout, "%-28s %-7s %-20s %-40s %s\n", "ID", "STATE", "ENDS", "MATCHERS", "COMMENT")
	for _, s := range ss {
		state, end := "active", s.EndsAt
		if !s.Active {
			state = "ended"
			if s.ExpiredAt != "" {
				end = s.ExpiredAt
			}
		}
		if t, err := time.Parse(time.RFC3339, end); err == nil {
			end = t.UTC().Format("2006-01-02 15:04Z")
		}
		var m []string
		add := func(k string, vs []string) {
			if len(vs) > 0 {
				m = append(m, k+"="+strings.Join(vs, ","))
			}
		}
		add("pipeline", s.Pipelines)
		add("type", s.Types)
		add("level", s.Levels)
		add("owner", s.Owners)
		fmt.Fprintf(env.Stdout, "%-28s %-7s %-20s %-40s %s\n", s.ID, state, end, strings.Join(m, " "), s.Comment)
	}
}
