package e2e_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/store"
)

// TestDeployConfigStoresTheAlertConfig: `interlock deploy-config` (the
// built binary) checks interlock.yaml as serve does and stores its
// alerts: and maintenance: as the deployment's alert config, one
// versioned record: an invalid interlock.yaml or a file route (a
// function's disk is not kept) writes nothing — no pipeline, no alert
// config — naming the file, the line and the field; a valid one is
// stored as v1 (the two sections alone), the same again changes nothing,
// and a change is v2.
func TestDeployConfigStoresTheAlertConfig(t *testing.T) {
	ctx := t.Context()
	st, server := awsDeployment(t)
	dir := t.TempDir()
	write := writer(t, dir)
	write("pipelines/orders.yaml", "pipeline: {id: orders}\nschedule:\n  trigger: {key: orders-landed, check: exists}\njob: {type: command, config: {command: [\"true\"], timeout: 1m}}\n")
	nothingWritten := func(what string) {
		t.Helper()
		if rows, err := st.PipelineList(ctx); err != nil || len(rows) != 0 {
			t.Errorf("%s: the store holds %d pipeline(s) (%v): want none", what, len(rows), err)
		}
		if _, err := st.AlertConfigGet(ctx); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: an alert config is stored (%v): want none", what, err)
		}
	}

	for _, c := range []struct{ name, yaml, want string }{
		{"a misspelt field", "server: {addr: \"127.0.0.1:7070\"}\nalerts:\n  - {type: slack, chanel: C0OPS, tokenEnv: OPS_SLACK_TOKEN}\n", "interlock.yaml:3"},
		{"a file route", "alerts:\n  - {type: slack, channel: C0OPS, tokenEnv: OPS_SLACK_TOKEN}\n  - {type: file, path: /var/log/alerts.jsonl}\n", "interlock.yaml:3: alerts[1].type"},
	} {
		write("interlock.yaml", c.yaml)
		code, out, errOut := cli(t, dir, "deploy-config", "pipelines", "--server", server)
		if code != 1 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "nothing was written") {
			t.Errorf("%s: exit %d, want 1 naming %q\nstdout:\n%s\nstderr:\n%s", c.name, code, c.want, out, errOut)
		}
		nothingWritten(c.name)
	}

	const v1 = "server: {addr: \"127.0.0.1:7070\"}\nalerts:\n  - {type: slack, channel: C0OPS, tokenEnv: OPS_SLACK_TOKEN, match: {levels: [info, warning, error]}}\nmaintenance:\n  - {name: nightly, cron: \"0 2 * * *\", duration: 1h, pipelines: [\"*\"]}\n"
	write("interlock.yaml", v1)
	out := mustCLI(t, dir, 0, "deploy-config", "pipelines", "--server", server)
	if !strings.Contains(out, "alert config: stored v1 from interlock.yaml (1 route(s), 1 maintenance window(s))") || !strings.Contains(out, ": 2 change(s)") {
		t.Errorf("the first load:\n%s", out)
	}
	rec, err := st.AlertConfigGet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != 1 || !strings.Contains(rec.YAML, "C0OPS") || !strings.Contains(rec.YAML, "nightly") || strings.Contains(rec.YAML, "server") {
		t.Errorf("stored %+v: want v1 holding alerts: and maintenance: alone", rec)
	}
	s, err := rec.Settings()
	if err != nil || len(s.Alerts) != 1 || len(s.Maintenance) != 1 {
		t.Errorf("the stored record parses to %+v (%v)", s, err)
	}

	out = mustCLI(t, dir, 0, "deploy-config", "pipelines", "--server", server)
	if !strings.Contains(out, "alert config: unchanged (v1)") || !strings.Contains(out, ": 0 change(s)") {
		t.Errorf("the same files again:\n%s", out)
	}

	write("interlock.yaml", strings.Replace(v1, "duration: 1h", "duration: 2h", 1))
	out = mustCLI(t, dir, 0, "deploy-config", "pipelines", "--server", server)
	if !strings.Contains(out, "alert config: stored v2") {
		t.Errorf("a changed window:\n%s", out)
	}
	if rec, err := st.AlertConfigGet(ctx); err != nil || rec.Version != 2 || !strings.Contains(rec.YAML, "2h") {
		t.Errorf("after the change: %+v (%v), want v2 with the 2h window", rec, err)
	}

	// Without interlock.yaml the stored config is left as it is.
	if err := os.Remove(filepath.Join(dir, "interlock.yaml")); err != nil {
		t.Fatal(err)
	}
	out = mustCLI(t, dir, 0, "deploy-config", "pipelines", "--server", server)
	if !strings.Contains(out, "alert config: no interlock.yaml: the stored one is left as it is") {
		t.Errorf("no interlock.yaml:\n%s", out)
	}
	if rec, err := st.AlertConfigGet(ctx); err != nil || rec.Version != 2 {
		t.Errorf("without interlock.yaml: %+v (%v), want v2 kept", rec, err)
	}
}

// writer writes files under dir, making their directories.
func writer(t *testing.T, dir string) func(name, content string) {
	return func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
