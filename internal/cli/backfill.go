package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

func init() {
	register(&command{
		name:    "backfill",
		summary: "Run a range of past periods, at most N at once, and follow the progress",
		usage: "PIPELINE --from P --to P [--only missing|failed|all] [--max-active N] [--reverse] [--dry-run] [--detach] [--server URL] [--output table|json]\n" +
			"       interlock backfill list PIPELINE [--server URL] [--output table|json]\n" +
			"       interlock backfill status PIPELINE ID [--server URL] [--output table|json]\n" +
			"       interlock backfill cancel PIPELINE ID [--server URL] [--output table|json]",
		examples: []string{
			"interlock backfill gold-revenue --from 2026-03-01 --to 2026-03-07 --dry-run",
			"interlock backfill gold-revenue --from 2026-03-01 --to 2026-03-07 --only failed --max-active 2",
			"interlock backfill list gold-revenue",
			"interlock backfill cancel gold-revenue 3",
		},
		flags: runBackfill,
	})
}

// backfillPoll is how often a follower reads the backfill's progress.
const backfillPoll = time.Second

func runBackfill(fs *flag.FlagSet) action {
	cf := addClientFlags(fs)
	from := fs.String("from", "", "the first period: YYYY-MM-DD or YYYY-MM-DDTHH (required)")
	to := fs.String("to", "", "the last period, inclusive (required; it must have started)")
	only := fs.String("only", "missing", "which periods: missing (no run), failed (ended without success), all (reruns the ended ones)")
	maxActive := fs.Int("max-active", 1, "run at most this many periods at once (1 to 20)")
	reverse := fs.Bool("reverse", false, "newest period first")
	dryRun := fs.Bool("dry-run", false, "list what would run and why; start nothing")
	detach := fs.Bool("detach", false, "start the backfill and return, without following it")
	return func(ctx context.Context, env Env) int {
		sub := fs.Arg(0)
		switch {
		case sub == "list" && fs.NArg() == 2, (sub == "status" || sub == "cancel") && fs.NArg() == 3:
		case fs.NArg() == 1 && sub != "list" && *from != "" && *to != "":
			sub = ""
		default:
			return usageError(env, fs, "want PIPELINE --from P --to P, list PIPELINE, status PIPELINE ID or cancel PIPELINE ID")
		}
		cl, err := cf.client()
		if err != nil {
			return fail(env, "backfill", err)
		}
		asJSON := *cf.output == "json"
		if sub == "" {
			return startBackfill(ctx, env, cl, fs.Arg(0), api.BackfillRequest{From: *from, To: *to, Only: *only, MaxActive: *maxActive, Reverse: *reverse, DryRun: *dryRun}, *detach, asJSON)
		}
		base := "/v1/pipelines/" + url.PathEscape(fs.Arg(1)) + "/backfills"
		one := base + "/" + url.PathEscape(fs.Arg(2)) // status and cancel: PIPELINE ID
		switch sub {
		case "list":
			return show(ctx, env, cl, "backfill list", "GET", base, asJSON, func(l api.BackfillList) {
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATE\tFROM\tTO\tONLY\tPROGRESS\tREQUESTED\tBY")
				for _, b := range l.Backfills {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.ID, b.State, b.From, b.To, b.Only, progressWords(b), b.RequestedAt.Format(time.RFC3339), b.RequestedBy)
				}
				tw.Flush()
			})
		case "status":
			return show(ctx, env, cl, "backfill status", "GET", one, asJSON, func(b api.BackfillView) { printBackfill(env.Stdout, b) })
		}
		return show(ctx, env, cl, "backfill cancel", "DELETE", one, asJSON, func(b api.BackfillView) {
			fmt.Fprintf(env.Stdout, "backfill %s of %s %s: %s\n", b.ID, b.PipelineID, b.State, progressWords(b))
		})
	}
}

// show asks the API (a request without a body) and prints the answer: as
// it came with --output json, else with print. A failed call is what
// fails the command.
func show[T any](ctx context.Context, env Env, cl *client, what, method, path string, asJSON bool, print func(T)) int {
	var v T
	raw, err := cl.call(ctx, method, path, nil, &v)
	if err != nil {
		return fail(env, what, err)
	}
	if asJSON {
		printJSON(env.Stdout, raw)
	} else {
		print(v)
	}
	return ExitOK
}

// startBackfill asks for the backfill (or its plan) and follows it.
func startBackfill(ctx context.Context, env Env, cl *client, pipelineID string, req api.BackfillRequest, detach, asJSON bool) int {
	var ans api.BackfillAnswer
	raw, err := cl.call(ctx, "POST", "/v1/pipelines/"+url.PathEscape(pipelineID)+"/backfills", req, &ans)
	if err != nil {
		return fail(env, "backfill", err)
	}
	if req.DryRun || asJSON && detach {
		if asJSON {
			printJSON(env.Stdout, raw)
		} else {
			printPlan(env.Stdout, ans, req)
		}
		return ExitOK
	}
	b := ans.Backfill
	cancelHint := fmt.Sprintf("interlock backfill cancel %s %s", pipelineID, b.ID)
	// What is said for people goes to stdout on a terminal, to stderr
	// when stdout is a pipe of JSON lines.
	say := env.Stdout
	if !isTerminal(env.Stdout) && !detach {
		say = env.Stderr
	}
	if !asJSON {
		n := 0
		for _, p := range ans.Periods {
			if p.Run {
				n++
			}
		}
		fmt.Fprintf(say, "backfill %s of %s started: %s..%s, only %s, %d of %d periods to run, at most %d at once\n", b.ID, pipelineID, b.From, b.To, b.Only, n, len(ans.Periods), b.MaxActive)
		if ans.Paused {
			fmt.Fprintln(say, "the pipeline is paused: the backfill waits for `interlock resume`")
		}
		if ans.Observe {
			fmt.Fprintln(say, "the pipeline is in dry-run: each period records what it would do, nothing runs")
		}
	}
	if detach {
		fmt.Fprintf(env.Stdout, "follow it with `interlock backfill status %s %s`; cancel it with `%s`\n", pipelineID, b.ID, cancelHint)
		return ExitOK
	}
	return followBackfill(ctx, env, cl, *b, cancelHint, asJSON)
}

// followBackfill prints the backfill's progress until it ends: a bar
// redrawn in place on a terminal, else one JSON line per change. An
// interrupt stops the following, not the backfill.
func followBackfill(ctx context.Context, env Env, cl *client, b api.BackfillView, cancelHint string, asJSON bool) int {
	tty := isTerminal(env.Stdout) && !asJSON
	path := "/v1/pipelines/" + url.PathEscape(b.PipelineID) + "/backfills/" + url.PathEscape(b.ID)
	last := ""
	for {
		if line := progressLine(b); line != last {
			if tty {
				fmt.Fprintf(env.Stdout, "\r%s", progressBar(b))
			} else {
				fmt.Fprintln(env.Stdout, line)
			}
			last = line
		}
		if b.State != "running" {
			if tty {
				fmt.Fprintln(env.Stdout)
				fmt.Fprintf(env.Stdout, "backfill %s %s: %s\n", b.ID, b.State, progressWords(b))
			}
			if b.Counts.Failed > 0 || b.State == "cancelled" {
				return ExitFailed
			}
			return ExitOK
		}
		select {
		case <-ctx.Done():
			if tty {
				fmt.Fprintln(env.Stdout)
			}
			fmt.Fprintf(env.Stderr, "stopped following; backfill %s goes on. Cancel it with: %s\n", b.ID, cancelHint)
			return ExitOK
		case <-time.After(backfillPoll):
		}
		var next api.BackfillView
		if _, err := cl.call(ctx, "GET", path, nil, &next); err != nil {
			if ctx.Err() != nil {
				continue // the interrupt is reported above
			}
			return fail(env, "backfill", err)
		}
		b = next
	}
}

// progressEvent is one JSON line of a followed backfill.
type progressEvent struct {
	PipelineID string             `json:"pipelineId"`
	ID         string             `json:"id"`
	State      string             `json:"state"`
	Done       int                `json:"done"`
	Total      int                `json:"total"`
	Counts     api.BackfillCounts `json:"counts"`
}

func progressLine(b api.BackfillView) string {
	c := b.Counts
	line, _ := json.Marshal(progressEvent{PipelineID: b.PipelineID, ID: b.ID, State: b.State, Done: c.Succeeded + c.Failed + c.Skipped, Total: len(b.Periods), Counts: c})
	return string(line)
}

func progressWords(b api.BackfillView) string {
	c := b.Counts
	return fmt.Sprintf("%d succeeded, %d failed, %d skipped, %d running, %d pending", c.Succeeded, c.Failed, c.Skipped, c.Active, c.Pending)
}

func progressBar(b api.BackfillView) string {
	const width = 30
	c := b.Counts
	done, total := c.Succeeded+c.Failed+c.Skipped, max(len(b.Periods), 1)
	fill := min(done*width/total, width) // counts ahead of the periods listed never overflow the bar
	return fmt.Sprintf("[%s%s] %d/%d  %s ", strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, progressWords(b))
}

func printPlan(w io.Writer, ans api.BackfillAnswer, req api.BackfillRequest) {
	n := 0
	for _, p := range ans.Periods {
		if p.Run {
			n++
		}
	}
	fmt.Fprintf(w, "dry run: backfill of %s, only %s: %d of %d periods would run, at most %d at once\n", ans.PipelineID, req.Only, n, len(ans.Periods), req.MaxActive)
	if ans.Paused {
		fmt.Fprintln(w, "the pipeline is paused: the backfill would wait for a resume")
	}
	if ans.Observe {
		fmt.Fprintln(w, "the pipeline is in dry-run: each period would record what it would do, nothing would run")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PERIOD\tVERDICT\tWHY")
	for _, p := range ans.Periods {
		verdict := "skip"
		if p.Run {
			verdict = "run"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Period, verdict, p.Reason)
	}
	tw.Flush()
}

func printBackfill(w io.Writer, b api.BackfillView) {
	fmt.Fprintf(w, "backfill %s of %s: %s, %s..%s, only %s, at most %d at once\n%s\n", b.ID, b.PipelineID, b.State, b.From, b.To, b.Only, b.MaxActive, progressWords(b))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PERIOD\tSTATE\tWHY")
	for _, p := range b.Periods {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Period, p.State, p.Reason)
	}
	tw.Flush()
}

// isTerminal reports whether w is a terminal (a character device): the
// progress bar is for people, JSON lines for pipes and files.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
