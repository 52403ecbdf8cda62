// Package e2e runs the real `interlock` binary as a user would: a project
// in a temporary directory, `interlock serve` on 127.0.0.1:0, sensors over
// HTTP, a polled job against a fake Airflow, alerts to a fake Slack and a
// webhook receiver, kill -9 and restart.
//
// Its tests run in parallel, all but the few that set environment
// variables (t.Setenv): most of their time is spent waiting on serve's
// own clocks (watchdog intervals, leases, the fault plan's kills), not
// on the CPU.
package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
	"github.com/interlockhq/interlock/internal/testenv/pglocal"
	"github.com/interlockhq/interlock/internal/testenv/serveproc"
)

var binary string

func TestMain(m *testing.M) {
	b, remove, err := serveproc.Build()
	if err != nil {
		panic("building interlock: " + err.Error())
	}
	binary = b
	code := m.Run()
	ddblocal.Stop() // the DynamoDB Local the AWS tests started, if any
	pglocal.Stop()  // the PostgreSQL the PostgreSQL test started, if any
	remove()
	os.Exit(code)
}

// fakeAirflow speaks the Airflow stable REST API for one DAG: it counts
// the DAG runs created and answers their state as told.
type fakeAirflow struct {
	*httptest.Server
	mu      sync.Mutex
	created int
	state   string
	runs    map[string]bool
	auth    []string
	// requests are "METHOD PATH TRACEPARENT" of each request.
	requests []string
}

func newFakeAirflow(t *testing.T) *fakeAirflow {
	f := &fakeAirflow{state: "running", runs: map[string]bool{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.requests = append(f.requests, r.Method+" "+r.URL.Path+" "+r.Header.Get("Traceparent"))
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/dags/gold/dagRuns":
			var body struct {
				DagRunID string `json:"dag_run_id"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			if f.runs[body.DagRunID] {
				w.WriteHeader(http.StatusConflict)
				fmt.Fprint(w, `{"detail":"DAGRun already exists","status":409,"title":"Conflict","type":"about:blank"}`)
				return
			}
			f.runs[body.DagRunID] = true
			f.created++
			fmt.Fprintf(w, `{"dag_id":"gold","dag_run_id":%q,"state":"queued"}`, body.DagRunID)
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/dags/gold/dagRuns/"):
			id := strings.TrimPrefix(r.URL.Path, "/api/v1/dags/gold/dagRuns/")
			if !f.runs[id] {
				// As Airflow answers a DAG run it never created: the
				// engine's lookup after a crash must not adopt a run that
				// does not exist.
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"detail":"DAGRun not found","status":404,"title":"DAGRun not found","type":"about:blank"}`)
				return
			}
			fmt.Fprintf(w, `{"dag_id":"gold","dag_run_id":%q,"state":%q}`, id, f.state)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAirflow) set(state string) { f.mu.Lock(); f.state = state; f.mu.Unlock() }
func (f *fakeAirflow) count() int       { f.mu.Lock(); defer f.mu.Unlock(); return f.created }
func (f *fakeAirflow) requested() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// receiver is a webhook endpoint recording event ids.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	ids []string
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.ids = append(rc.ids, r.Header.Get("X-Interlock-Event-Id")+" "+r.Header.Get("X-Interlock-Signature"))
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) received() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.ids...)
}

type server struct {
	cmd  *exec.Cmd
	url  string
	out  *logBuffer
	done chan error
}

// logBuffer collects serve's log while the test reads it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// projectWriter returns a function that writes a project file under dir,
// making its directories.
func projectWriter(t *testing.T, dir string) func(name, body string) {
	return func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// airflowPipeline is pipeline id: triggered by (and validating) its
// upstream sensor, running DAG gold of the Airflow at url.
func airflowPipeline(id, url string) string {
	return fmt.Sprintf(`pipeline: {id: %s, owner: analytics}
schedule:
  trigger: {key: upstream, check: exists}
validation:
  rules: [{key: upstream, check: exists}]
job:
  type: airflow
  config: {url: %q, dagId: gold}
  pollInterval: 1s
`, id, url)
}

// start runs `interlock serve` in dir and waits for its address.
func start(t *testing.T, dir string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "debug"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, out: logs, done: make(chan error, 1)}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	go func() { s.done <- cmd.Wait() }()
	deadline := time.After(20 * time.Second)
	for s.url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited before listening:\n%s", logs.String())
			}
			if u, ok := strings.CutPrefix(l, "interlock listening on "); ok {
				s.url = u
			}
		case <-deadline:
			t.Fatalf("serve did not start:\n%s", logs.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	return s
}

func (s *server) kill9(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

func (s *server) stop(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("serve did not exit cleanly on SIGTERM: %v\n%s", err, s.out.String())
		}
	case <-time.After(20 * time.Second):
		t.Errorf("serve did not stop on SIGTERM")
		_ = s.cmd.Process.Kill()
	}
}

func request(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// eventually polls cond until it holds or the time is up.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func eventTypes(t *testing.T, s *server, token string) map[string]int {
	t.Helper()
	code, body := request(t, "GET", s.url+"/v1/events?pipeline=gold&limit=1000", token, "")
	if code != 200 {
		t.Fatalf("events: %d %s", code, body)
	}
	var page struct {
		Events []struct {
			Type string `json:"detail-type"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range page.Events {
		out[e.Type]++
	}
	return out
}

func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	airflow := newFakeAirflow(t)
	slack := slacktest.New(t, "xoxb-e2e-token")
	hook := newReceiver(t)
	dir := t.TempDir()
	write := projectWriter(t, dir)
	write("interlock.yaml", fmt.Sprintf(`store: sqlite:./state.db
pipelines: ./pipelines
server:
  addr: 127.0.0.1:7070
  tokens:
    - {name: ops, role: admin, tokenEnv: INTERLOCK_ADMIN_TOKEN}
    - {name: etl, role: writer, tokenEnv: INTERLOCK_WRITER_TOKEN}
    - {name: dash, role: reader, tokenEnv: INTERLOCK_READER_TOKEN}
triggers: {allowAddresses: [127.0.0.1/32]}
alerts:
  - {type: slack, channel: C0E2E, tokenEnv: SLACK_BOT_TOKEN, match: {types: [VALIDATION_PASSED, JOB_TRIGGERED, JOB_COMPLETED]}}
  - {type: webhook, url: %q, secretEnv: INTERLOCK_HOOK_SECRET, match: {types: [VALIDATION_PASSED, JOB_TRIGGERED, JOB_COMPLETED]}}
`, hook.URL))
	write("pipelines/gold.yaml", fmt.Sprintf(`pipeline: {id: gold, owner: analytics}
schedule:
  trigger: {key: upstream, check: exists}
validation:
  rules: [{key: upstream, check: exists}]
job:
  type: airflow
  config: {url: %q, dagId: gold, headers: {Authorization: "Bearer ${env:INTERLOCK_AIRFLOW_TOKEN}"}}
  pollInterval: 1s
`, airflow.URL))
	env := []string{
		"INTERLOCK_ADMIN_TOKEN=admin-secret-1", "INTERLOCK_WRITER_TOKEN=writer-secret-1", "INTERLOCK_READER_TOKEN=reader-secret-1",
		"SLACK_BOT_TOKEN=xoxb-e2e-token", "INTERLOCK_SLACK_API_URL=" + slack.APIURL(),
		"INTERLOCK_HOOK_SECRET=hook-secret-1", "INTERLOCK_AIRFLOW_TOKEN=airflow-secret-1",
	}
	srv := start(t, dir, env)

	// Unauthorised requests are refused.
	put := srv.url + "/v1/pipelines/gold/sensors/upstream"
	if code, _ := request(t, "PUT", put, "", `{"n": 1}`); code != 401 {
		t.Fatalf("no token: %d, want 401", code)
	}
	if code, _ := request(t, "PUT", put, "wrong-token", `{"n": 1}`); code != 401 {
		t.Fatalf("unknown token: %d, want 401", code)
	}
	if code, _ := request(t, "PUT", put, "reader-secret-1", `{"n": 1}`); code != 403 {
		t.Fatalf("reader writing a sensor: %d, want 403", code)
	}
	if code, _ := request(t, "POST", srv.url+"/v1/pipelines/gold/pause", "writer-secret-1", `{}`); code != 403 {
		t.Fatalf("writer pausing: %d, want 403", code)
	}

	// Every sink's failure counter exists at zero before any failure, so
	// an alert on its rate works from the start.
	if code, body := request(t, "GET", srv.url+"/metrics", "reader-secret-1", ""); code != 200 ||
		strings.Count(body, "interlock_alert_delivery_failures_total{sink=") != 2 {
		t.Fatalf("/metrics: %d, want a failure counter for each of the two sinks:\n%s", code, body)
	}

	// Ten writers race for the same period: one job.
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body := request(t, "PUT", put, "writer-secret-1", fmt.Sprintf(`{"n": %d}`, i)); code != 200 {
				t.Errorf("sensor write: %d %s", code, body)
			}
		}()
	}
	wg.Wait()
	eventually(t, "the job to start", func() bool { return airflow.count() == 1 })
	eventually(t, "the start alerts to be delivered", func() bool { return len(hook.received()) >= 2 && len(slack.Posts()) >= 2 })
	// A sink may get an alert again when the process dies between the
	// send and the record of it (at least once; the webhook's receiver
	// dedups by X-Interlock-Event-Id). Kill only once both sends of both
	// sinks are recorded, so that "exactly once" below is what is tested.
	eventually(t, "the start alerts to be recorded as delivered", func() bool { return strings.Count(srv.out.String(), "alert delivered") >= 4 })

	// kill -9 while the job runs; restart; the job finishes; no second start.
	srv.kill9(t)
	airflow.set("success")
	srv = start(t, dir, env)
	eventually(t, "JOB_COMPLETED after the restart", func() bool { return eventTypes(t, srv, "reader-secret-1")["JOB_COMPLETED"] == 1 })
	if n := airflow.count(); n != 1 {
		t.Fatalf("the DAG was started %d times, want 1", n)
	}
	types := eventTypes(t, srv, "reader-secret-1")
	if types["JOB_TRIGGERED"] != 1 || types["VALIDATION_PASSED"] != 1 {
		t.Fatalf("events: %v", types)
	}
	for _, a := range airflow.auth {
		if a != "Bearer airflow-secret-1" {
			t.Fatalf("an Airflow call without the job's auth header: %q", a)
		}
	}

	// Alerts: each event exactly once at each sink, across the restart;
	// Slack threads them under the period's first message.
	eventually(t, "all three alerts at both sinks", func() bool { return len(hook.received()) >= 3 && len(slack.Posts()) >= 3 })
	time.Sleep(time.Second) // any duplicate would arrive now
	got := hook.received()
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] || !strings.Contains(id, "sha256=") {
			t.Fatalf("webhook deliveries not once each and signed: %v", got)
		}
		seen[id] = true
	}
	if len(got) != 3 {
		t.Fatalf("webhook got %d deliveries, want 3: %v", len(got), got)
	}
	posts := slack.Posts()
	if len(posts) != 3 || posts[0].ThreadTS != "" || posts[1].ThreadTS != posts[0].TS || posts[2].ThreadTS != posts[0].TS {
		t.Fatalf("slack posts not one thread: %+v", posts)
	}

	// The API and the command line agree; secrets never show.
	cmd := exec.Command(binary, "status", "gold", "--server", srv.url)
	cmd.Env = append(os.Environ(), "INTERLOCK_TOKEN=reader-secret-1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "COMPLETED") {
		t.Fatalf("interlock status: %v\n%s", err, out)
	}
	// --output json is one document: the pipeline and its recent events.
	cmd = exec.Command(binary, "status", "gold", "--server", srv.url, "--output", "json")
	cmd.Env = append(os.Environ(), "INTERLOCK_TOKEN=reader-secret-1")
	out, err = cmd.Output()
	var doc struct {
		Pipeline struct {
			ID string `json:"id"`
		} `json:"pipeline"`
		Events []json.RawMessage `json:"events"`
	}
	if err != nil || json.Unmarshal(out, &doc) != nil || doc.Pipeline.ID != "gold" || len(doc.Events) == 0 {
		t.Fatalf("interlock status --output json: %v\n%s", err, out)
	}
	srv.stop(t)
	for _, secret := range []string{"admin-secret-1", "writer-secret-1", "reader-secret-1", "xoxb-e2e-token", "hook-secret-1", "airflow-secret-1"} {
		if strings.Contains(srv.out.String(), secret) {
			t.Fatalf("the log shows a secret (%s)", secret)
		}
	}

}
