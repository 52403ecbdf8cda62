package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

type backfillProgress struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Done   int    `json:"done"`
	Total  int    `json:"total"`
	Counts struct {
		Active, Skipped, Succeeded, Failed, Pending int
	} `json:"counts"`
}

// TestBackfillCommand runs `interlock backfill` through the built binary
// against a real serve: the dry run lists each period's verdict (a
// weekend skipped by name), a followed backfill prints JSON lines on a
// pipe until it completes, list and cancel answer, and an interrupt stops
// the following — not the backfill — and says how to cancel it.
func TestBackfillCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := projectWriter(t, dir)
	write("interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\nwatchdog: {interval: 1h}\n")
	write("pipelines/daily.yaml", `pipeline: {id: daily}
schedule:
  cron: "0 6 * * *"
  exclude: {weekends: true}
validation:
  rules: [{key: ready, check: exists}]
job: {type: command, config: {command: ["true"]}, pollInterval: 1s}
`)
	srv := start(t, dir, nil)
	defer srv.stop(t)
	api := []string{"--server", srv.url}
	run := func(want int, args ...string) string {
		t.Helper()
		return mustCLI(t, dir, want, append(args, api...)...)
	}
	today := time.Now().UTC()
	day := func(n int) string { return today.AddDate(0, 0, -n).Format("2006-01-02") }
	from, to := day(7), day(2) // six days: a weekend among them
	weekdays := 0
	for n := 7; n >= 2; n-- {
		if wd := today.AddDate(0, 0, -n).Weekday(); wd != time.Saturday && wd != time.Sunday {
			weekdays++
			run(0, "sensor", "put", "daily", "ready#"+day(n), `{}`)
		}
	}

	plan := run(0, "backfill", "daily", "--from", from, "--to", to, "--dry-run")
	if !strings.Contains(plan, "dry run: backfill of daily, only missing") || !regexpLine(plan, `^\d{4}-\d\d-\d\d\s+skip\s+.*is excluded as a weekend \(exclude.weekends\)$`) ||
		!regexpLine(plan, `^`+from+`\s+(run\s+no run yet|skip\s+.*weekend.*)$`) {
		t.Fatalf("backfill --dry-run printed:\n%s", plan)
	}
	if l := run(0, "backfill", "list", "daily"); strings.Count(l, "\n") != 1 {
		t.Fatalf("a dry run stored a backfill:\n%s", l)
	}

	// Followed on a pipe: JSON lines, done never going back, the last
	// one completed with every weekday succeeded and the weekend skipped.
	out := run(0, "backfill", "daily", "--from", from, "--to", to, "--max-active", "2")
	var last backfillProgress
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		p := decode[backfillProgress](t, "a backfill progress line", l)
		if i > 0 && p.Done < last.Done || p.Counts.Active > 2 {
			t.Fatalf("progress line %d went back or ran more than 2: %s\n%s", i, l, out)
		}
		last = p
	}
	if last.State != "completed" || last.Counts.Succeeded != weekdays || last.Counts.Skipped != 6-weekdays || last.Total != 6 {
		t.Fatalf("last progress line %+v (want %d succeeded):\n%s", last, weekdays, out)
	}
	list := decode[struct {
		Backfills []struct{ ID, State string }
	}](t, "backfill list --output json", run(0, "backfill", "list", "daily", "--output", "json"))
	if len(list.Backfills) != 1 || list.Backfills[0].State != "completed" {
		t.Fatalf("backfill list: %+v", list)
	}
	if evs := jsonEvents(t, run(0, "events", "--type", "BACKFILL_COMPLETED", "--output", "json")); len(evs) != 1 {
		t.Fatalf("BACKFILL_COMPLETED events: %+v", evs)
	}
	if st := run(0, "backfill", "status", "daily", "1"); !strings.Contains(st, "backfill 1 of daily: completed") {
		t.Fatalf("backfill status:\n%s", st)
	}

	// Paused, a backfill waits: an interrupt stops the following and
	// says how to cancel; cancel then ends it.
	run(0, "pause", "daily")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"backfill", "daily", "--from", from, "--to", to, "--only", "all"}, api...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "INTERLOCK_TOKEN=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("no progress line before the interrupt; stderr:\n%s", stderr.String())
	}
	if p := decode[backfillProgress](t, "the first progress line", sc.Text()); p.ID != "2" || p.State != "running" {
		t.Fatalf("first progress line %+v", p)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	for sc.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("interrupted backfill exited %v; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped following; backfill 2 goes on. Cancel it with: interlock backfill cancel daily 2") {
		t.Fatalf("interrupt said:\n%s", stderr.String())
	}
	if out := run(0, "backfill", "cancel", "daily", "2"); !strings.HasPrefix(out, "backfill 2 of daily cancelled:") {
		t.Fatalf("backfill cancel printed %q", out)
	}
	detached := run(0, "backfill", "daily", "--from", from, "--to", to, "--only", "failed", "--detach")
	if !strings.Contains(detached, "backfill 3 of daily started:") || !strings.Contains(detached, "cancel it with `interlock backfill cancel daily 3`") {
		t.Fatalf("backfill --detach printed:\n%s", detached)
	}
	run(0, "backfill", "cancel", "daily", "3")
	if code, _, errOut := cli(t, dir, append([]string{"backfill", "daily", "--from", to, "--to", from}, api...)...); code != 1 || !strings.Contains(errOut, "from: "+to+" is after to "+from) {
		t.Fatalf("a reversed range: exit %d, %s", code, errOut)
	}
}
