package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandOutputShownRedacted: a command job that fails under `interlock
// serve` shows the end of its stdout and stderr, with its secret
// redacted, in the JOB_FAILED event of the API and in `interlock explain`;
// the secret shows nowhere, the server's log included.
func TestCommandOutputShownRedacted(t *testing.T) {
	t.Parallel()
	const secret = "e2e-db-password-77"
	dir := t.TempDir()
	for name, body := range map[string]string{
		"interlock.yaml": "store: sqlite:./state.db\npipelines: ./pipelines\n",
		"pipelines/load.yaml": `pipeline: {id: load}
schedule: {trigger: {key: upstream, check: exists}}
job:
  type: command
  config:
    command: [/bin/sh, -c, 'echo "connecting as etl with $1"; printf "fatal: login failed (password %s)\n" "$1" >&2; exit 2', sh, "${env:INTERLOCK_DB_PASSWORD}"]
  maxCodeRetries: 0
`,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := start(t, dir, []string{"INTERLOCK_DB_PASSWORD=" + secret})
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			srv.kill9(t)
		}
	})

	if code, body := request(t, "PUT", srv.url+"/v1/pipelines/load/sensors/upstream", "", `{"n": 1}`); code != 200 {
		t.Fatalf("sensor write: %d %s", code, body)
	}
	const want = "[stdout]\nconnecting as etl with [redacted]\n[stderr]\nfatal: login failed (password [redacted])"
	var events string
	eventually(t, "JOB_FAILED", func() bool {
		_, events = request(t, "GET", srv.url+"/v1/events?pipeline=load&type=JOB_FAILED", "", "")
		return strings.Contains(events, "JOB_FAILED")
	})
	var page struct {
		Events []struct {
			Detail struct {
				Message string `json:"message"`
				Detail  struct {
					Output string `json:"output"`
				} `json:"detail"`
			} `json:"detail"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(events), &page); err != nil || len(page.Events) != 1 {
		t.Fatalf("events: %v\n%s", err, events)
	}
	if got := page.Events[0].Detail.Detail.Output; got != want {
		t.Fatalf("JOB_FAILED detail output = %q, want %q", got, want)
	}

	cmd := exec.Command(binary, "explain", "load", "--server", srv.url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("interlock explain: %v\n%s", err, out)
	}
	for _, line := range []string{
		"last output of attempt 1 (JOB_FAILED at ",
		"  | [stdout]\n  | connecting as etl with [redacted]\n  | [stderr]\n  | fatal: login failed (password [redacted])\n",
	} {
		if !strings.Contains(string(out), line) {
			t.Fatalf("interlock explain does not show %q:\n%s", line, out)
		}
	}
	_, all := request(t, "GET", srv.url+"/v1/events?pipeline=load", "", "")
	srv.stop(t)
	stopped = true
	for what, s := range map[string]string{"the events": all, "explain": string(out), "the server log": srv.out.String()} {
		if strings.Contains(s, secret) {
			t.Fatalf("%s show the secret", what)
		}
	}
}
