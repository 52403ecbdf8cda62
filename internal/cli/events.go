package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/interlockhq/interlock/internal/duration"
	"github.com/interlockhq/interlock/internal/event"
)

func init() {
	register(&command{
		name:    "events",
		summary: "Read the event log, optionally following it",
		usage:   "[--pipeline P] [--type T]… [--since D] [--limit N] [--follow] [--server URL] [--output table|json]",
		examples: []string{
			"interlock events --pipeline gold-revenue --since 24h",
			"interlock events --type SLA_BREACH --type JOB_FAILED --since 7d",
			"interlock events --follow                       # like tail -f",
			"interlock events --output json --since 1h | jq .",
		},
		flags: runEvents,
	})
}

// typeFlag is --type: repeatable, its values the event catalogue's.
type typeFlag []string

func (m *typeFlag) String() string     { return fmt.Sprint([]string(*m)) }
func (m *typeFlag) Set(s string) error { *m = append(*m, s); return nil }

// repeatable and choices tell shell completion how --type is used.
func (m *typeFlag) repeatable() bool { return true }
func (m *typeFlag) choices() []string {
	var out []string
	for _, t := range event.Types() {
		out = append(out, string(t))
	}
	return out
}

func runEvents(fs *flag.FlagSet) action {
	cf := addClientFlags(fs)
	pipelineID := fs.String("pipeline", "", "only this pipeline")
	var types typeFlag
	fs.Var(&types, "type", "only this event `type` (repeatable)")
	since := fs.String("since", "", "only events since then: RFC3339 or a duration back from now (2h, 7d)")
	limit := fs.Int("limit", 100, "at most this many events (without --follow)")
	follow := fs.Bool("follow", false, "keep printing new events until interrupted")
	return func(ctx context.Context, env Env) int {
		for _, t := range types {
			if _, ok := event.Lookup(event.Type(t)); !ok {
				fmt.Fprintf(env.Stderr, "interlock events: unknown event type %q (see docs/lifecycle.md)\n", t)
				return ExitUsage
			}
		}
		// A filter given empty ("$UNSET") would otherwise mean no filter and
		// print every pipeline's events; the server refuses it too.
		for _, name := range []string{"pipeline", "since"} {
			if fs.Lookup(name).Value.String() == "" && flagGiven(fs, name) {
				fmt.Fprintf(env.Stderr, "interlock events: --%s is empty: give a value or leave the flag out\n", name)
				return ExitUsage
			}
		}
		if *since != "" && !sinceParses(*since) {
			fmt.Fprintf(env.Stderr, "interlock events: --since %q: want an RFC 3339 time (2026-03-10T06:00:00Z) or a duration back from now (2h, 7d)\n", *since)
			return ExitUsage
		}
		cl, err := cf.client()
		if err != nil {
			return fail(env, "events", err)
		}
		q := url.Values{}
		if *pipelineID != "" {
			q.Set("pipeline", *pipelineID)
		}
		for _, t := range types {
			q.Add("type", t)
		}
		if *since != "" {
			q.Set("since", *since)
		}
		pageSize := *limit
		if *follow || pageSize <= 0 || pageSize > 1000 {
			pageSize = 1000
		}
		q.Set("limit", strconv.Itoa(pageSize))
		printed := 0
		for {
			var page struct {
				Events []json.RawMessage `json:"events"`
				Next   string            `json:"next"`
			}
			if _, err := cl.call(ctx, "GET", "/v1/events?"+q.Encode(), nil, &page); err != nil {
				if ctx.Err() != nil {
					return ExitOK
				}
				return fail(env, "events", err)
			}
			for _, raw := range page.Events {
				if !*follow && printed >= *limit {
					return ExitOK
				}
				printEvent(env, *cf.output == "json", raw)
				printed++
			}
			if page.Next != "" {
				q.Set("after", page.Next)
			}
			// The cursor takes over from --since once a page has events. An
			// empty page returns the cursor it was given (the start at first), which
			// alone would mean "from the beginning": --since stays until then.
			if len(page.Events) > 0 {
				q.Del("since")
			}
			if len(page.Events) < pageSize {
				if !*follow {
					return ExitOK
				}
				select {
				case <-ctx.Done():
					return ExitOK
				case <-time.After(2 * time.Second):
				}
			}
		}
	}
}

func printEvent(env Env, asJSON bool, raw json.RawMessage) {
	if asJSON {
		fmt.Fprintf(env.Stdout, "%s\n", raw)
		return
	}
	var e struct {
		event.Envelope
		SilencedBy string `json:"silencedBy"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return
	}
	msg := e.Detail.Message
	if e.SilencedBy != "" {
		msg += "  [silenced by " + e.SilencedBy + "]"
	}
	fmt.Fprintf(env.Stdout, "%s  %-7s %-26s %-20s %-13s %s\n", e.Time, e.Detail.Level, e.DetailType, e.Detail.PipelineID, e.Detail.Date, msg)
}

// sinceParses reports whether --since is what the server reads: an RFC
// 3339 time or a duration back from now.
func sinceParses(s string) bool {
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return true
	}
	_, err := duration.Parse(s)
	return err == nil
}
