package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestWatchdogOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := write(t, dir, "interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\n")
	write(t, dir, "pipelines/p.yaml", strings.Replace(goodPipeline, "schedule:\n", "schedule:\n  cron: \"0 6 * * *\"\n", 1))

	code, out, errOut := run(t, "watchdog", "--once", "--config", cfg)
	if code != ExitOK || !strings.Contains(out, "healthy") || !strings.Contains(out, "(first pass)") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, "watchdog", "--once", "--config", cfg, "--output", "json")
	var rep struct {
		Degraded bool
		Findings []any
		Previous string `json:"previousPass"`
	}
	// The second pass knows when the first ran: a stopped watchdog shows.
	if code != ExitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Degraded || len(rep.Findings) != 0 || rep.Previous == "" {
		t.Fatalf("json: exit %d %q", code, out)
	}
	// An invalid pipeline file is reported and refused; the pass still runs.
	write(t, dir, "pipelines/bad.yaml", "pipeline: {id: bad}\nschedule: {cron: nope}\njob: {type: glue, config: {jobName: j}}\n")
	code, out, errOut = run(t, "watchdog", "--once", "--config", cfg)
	if code != ExitOK || !strings.Contains(errOut, "bad.yaml") || !strings.Contains(out, "healthy") {
		t.Fatalf("with an invalid file: exit %d\n%s%s", code, out, errOut)
	}
}

func TestWatchdogUsage(t *testing.T) {
	if code, _, errOut := run(t, "watchdog"); code != ExitUsage || !strings.Contains(errOut, "--once") {
		t.Fatalf("without --once: exit %d %s", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "interlock.yaml")
	if code, _, errOut := run(t, "watchdog", "--once", "--config", missing); code != ExitRuntime || !strings.Contains(errOut, "not found") {
		t.Fatalf("missing project: exit %d %s", code, errOut)
	}
}
