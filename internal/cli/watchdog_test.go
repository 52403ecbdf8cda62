package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWatchdogOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := write(t, dir, "interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\nalerts:\n  - {type: file, path: alerts.jsonl}\n")
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
	if code != ExitOK || !strings.Contains(errOut, "bad.yaml") || !strings.Contains(errOut, "cron") || !strings.Contains(out, "healthy") {
		t.Fatalf("with an invalid file: exit %d\n%s%s", code, out, errOut)
	}
	// Its CONFIG_INVALID reached the alert route, once across passes:
	// with no serve running, the watchdog is what delivers.
	run(t, "watchdog", "--once", "--config", cfg)
	alerts, err := os.ReadFile(filepath.Join(dir, "alerts.jsonl"))
	if err != nil || strings.Count(string(alerts), "CONFIG_INVALID") != 1 {
		t.Fatalf("alerts file (%v):\n%s", err, alerts)
	}
	// --alerts=false leaves delivery to a running serve.
	write(t, dir, "pipelines/bad.yaml", "pipeline: {id: bad}\nschedule: {cron: never}\njob: {type: glue, config: {jobName: j}}\n")
	run(t, "watchdog", "--once", "--alerts=false", "--config", cfg)
	if again, _ := os.ReadFile(filepath.Join(dir, "alerts.jsonl")); string(again) != string(alerts) {
		t.Fatalf("--alerts=false delivered:\n%s", again)
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
