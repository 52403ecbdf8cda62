package e2e_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/secret/secrettest"
)

// TestSecretsInEveryOutput (issue 10, defects 1, 2 and 8): under `interlock
// serve`, a command job prints its secret split by control and format
// characters and in its wire forms — as Go and other languages' encoders
// print it (Python's quote and repr, lower-case percent hex, PHP's JSON,
// JSON of JSON, HTML) — and an http job's endpoint echoes its token and
// the Basic header its URL's user info makes, in every form. No form
// shows in the events API, the runs API (the run's last failure),
// explain, the server's log, the webhook payloads or the file sink, nor
// does the token the http job's URL path reads from the environment (a
// webhook's key is there) — while its host, read from the environment
// too, is shown as it is.
func TestSecretsInEveryOutput(t *testing.T) {
	t.Parallel()
	const (
		token     = `e2e-tok "5f1c\9a/+b`
		password  = "e2e-pw+7d;3=c"
		pathToken = "T0AAA-B0BBB-s3cr3tPathToken"
	)
	userinfo := url.UserPassword("etl", password)
	// The forms other languages print, one per line: each is kept whole
	// in a command's output (its last 20 lines) and first in the endpoint's
	// answer (its first 512 bytes are kept).
	var others []string
	for _, e := range secrettest.Encoders {
		if !strings.HasPrefix(e.Name, "go ") {
			others = append(others, e.Encode(token))
		}
	}
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "rejected %s%s; %s; you sent Authorization: %s, X-Api-Key: %s; %s",
			r.Host, r.URL.Path, strings.Join(others[:4], " | "), r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), secrettest.Echo(token, userinfo))
	}))
	t.Cleanup(endpoint.Close)
	ep, _ := url.Parse(endpoint.URL)

	var mu sync.Mutex
	var payloads []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		payloads = append(payloads, string(b))
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)

	dir := t.TempDir()
	echo := filepath.Join(dir, "echo.txt")
	files := map[string]string{
		"echo.txt": strings.Join(others, "\n") + "\n" + secrettest.Echo(token, nil) + "\n",
		"interlock.yaml": fmt.Sprintf(`store: sqlite:./state.db
pipelines: ./pipelines
triggers: {allowAddresses: [%q]}
alerts:
  - {type: webhook, url: %q, match: {types: [JOB_FAILED]}}
  - {type: file, path: ./events.jsonl}
`, ep.Host, hook.URL),
		"pipelines/cmd.yaml": fmt.Sprintf(`pipeline: {id: cmd}
schedule: {trigger: {key: upstream, check: exists}}
job:
  type: command
  config:
    command: [/bin/sh, -c, 'cat "$2"; cat "$2" >&2; exit 2', sh, "${env:INTERLOCK_E2E_TOKEN}", %q]
  maxCodeRetries: 0
`, echo),
		"pipelines/web.yaml": fmt.Sprintf(`pipeline: {id: web}
schedule: {trigger: {key: upstream, check: exists}}
job:
  type: http
  config:
    url: "http://etl:${env:INTERLOCK_E2E_PASS}@${env:INTERLOCK_E2E_HOST}:%s/hooks/${env:INTERLOCK_E2E_HOOK}/run"
    headers: {X-Api-Key: "${env:INTERLOCK_E2E_TOKEN}"}
  maxCodeRetries: 0
`, ep.Port()),
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := start(t, dir, []string{"INTERLOCK_E2E_TOKEN=" + token, "INTERLOCK_E2E_PASS=" + password, "INTERLOCK_E2E_HOST=" + ep.Hostname(), "INTERLOCK_E2E_HOOK=" + pathToken})
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			srv.kill9(t)
		}
	})
	for _, p := range []string{"cmd", "web"} {
		if code, body := request(t, "PUT", srv.url+"/v1/pipelines/"+p+"/sensors/upstream", "", `{"n": 1}`); code != 200 {
			t.Fatalf("sensor write %s: %d %s", p, code, body)
		}
	}
	var events string
	eventually(t, "two JOB_FAILED", func() bool {
		_, events = request(t, "GET", srv.url+"/v1/events?type=JOB_FAILED", "", "")
		return strings.Count(events, `"detail-type":"JOB_FAILED"`) == 2
	})
	eventually(t, "the webhook payloads", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(payloads) == 2
	})
	// Defect 8: the host read from the environment is shown; the token
	// the path reads is not.
	if !strings.Contains(events, "POST http://"+ep.Host+"/hooks/[redacted]/run: status 400") {
		t.Errorf("the http job's failure does not show its host %s with its path's token redacted:\n%s", ep.Host, events)
	}
	_, all := request(t, "GET", srv.url+"/v1/events", "", "")
	outputs := map[string]string{"the events API": all}
	for _, p := range []string{"cmd", "web"} {
		_, outputs["the runs API of "+p] = request(t, "GET", srv.url+"/v1/pipelines/"+p+"/runs", "", "")
		out, err := exec.Command(binary, "explain", p, "--server", srv.url).CombinedOutput()
		if err != nil {
			t.Fatalf("interlock explain %s: %v\n%s", p, err, out)
		}
		outputs["explain "+p] = string(out)
	}
	srv.stop(t)
	stopped = true
	outputs["the server log"] = srv.out.String()
	file, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	outputs["the file sink"] = string(file)
	mu.Lock()
	outputs["the webhook payloads"] = strings.Join(payloads, "\n")
	mu.Unlock()
	for what, s := range outputs {
		if leak := secrettest.Leak(s, token, userinfo); leak != "" {
			t.Errorf("%s shows a secret as %q:\n%s", what, leak, s)
		}
		if leak := secrettest.Leak(s, pathToken, nil); leak != "" {
			t.Errorf("%s shows the token of the http job's path as %q:\n%s", what, leak, s)
		}
	}
	// Not vacuous: the echoes arrived, redacted, in each place that keeps
	// the job's failure.
	for _, what := range []string{"the events API", "the runs API of cmd", "the runs API of web", "the file sink", "the webhook payloads"} {
		if !strings.Contains(outputs[what], "[redacted]") {
			t.Errorf("%s shows nothing redacted:\n%s", what, outputs[what])
		}
	}
}
