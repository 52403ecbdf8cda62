// Package dashboard_test drives the dashboard of a real `interlock serve`
// (the binary, built once) in a real headless Chromium
// (internal/testenv/browser): a scaffolded project on loopback whose
// pipelines are in every state the overview shows, each reached through
// the API and real jobs (commands that succeed, fail or sleep; a polled
// job against a local server speaking Airflow's REST API).
package dashboard_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
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
	ddblocal.Stop() // the DynamoDB Local the control-plane test started, if any
	remove()
	os.Exit(code)
}

// Tokens of the fixture with tokens.
const (
	adminToken  = "admin-secret-dash-1"
	readerToken = "reader-secret-dash-1"
	// operatorToken is the person on call's: the actions, not everything.
	operatorToken = "operator-secret-dash-1"
)

// xssSensor is a sensor value and xssJob a job's output that would run
// script if a page put them into HTML unescaped.
const (
	xssSensor = `<script>alert(document.title)</script>`
	xssJob    = `<img src=x onerror=alert(1)>`
	xssDesc   = `<b onmouseover=alert("xss-desc")>desc</b><script>alert("xss-desc")</script>`
)

// fixture is a running serve and the facts the tests check against.
type fixture struct {
	srv    *serveproc.Server
	token  string // the admin token; "" without tokens
	zone   string // the pipelines' time zone: local noon-ish now, so no deadline crosses midnight
	period string // today in zone: every pipeline's current period
	// slaAt is when the sla-breached pipeline breaches and the
	// sla-at-risk one's warning passes: the next whole minute after the
	// pipelines' first load (SLA states are forward-only: an instant
	// before the first load is never reported).
	slaAt time.Time
}

// wantStates are the overview states the fixture's pipelines reach (the
// SLA ones from slaAt on).
var wantStates = map[string]string{
	"waiting-data":     "waiting",
	"evaluating-rules": "evaluating",
	"triggering-job":   "triggering",
	"running-job":      "running",
	// A command runs inside its trigger call: the run is TRIGGERING with
	// the call in flight, and the job is running.
	"running-command":  "running",
	"succeeded-job":    "succeeded",
	"failed-job":       "failed",
	"sla-breached":     "breached",
	"sla-at-risk":      "at-risk",
	"paused-ops":       "paused",
	"excluded-today":   "excluded",
	"dry-run-observer": "dry-run",
}

// noonZone is a fixed-offset zone (Etc/GMT±N) where it is around noon
// now, with the offset it has.
func noonZone(now time.Time) (string, *time.Location) {
	n := 12 - now.UTC().Hour() // local = UTC + n hours; -11..12
	name := "UTC"
	switch {
	case n > 0:
		name = fmt.Sprintf("Etc/GMT-%d", n) // POSIX sign: Etc/GMT-3 is UTC+3
	case n < 0:
		name = fmt.Sprintf("Etc/GMT+%d", -n)
	}
	return name, time.FixedZone(name, n*3600)
}

// airflow answers Airflow's stable REST API for DAG runs: every run
// created stays "running".
func airflow(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/dagRuns"):
			var body struct {
				ID string `json:"dag_run_id"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			fmt.Fprintf(w, `{"dag_id":"load","dag_run_id":%q,"state":"queued"}`, body.ID)
		case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/dagRuns/"):
			fmt.Fprintf(w, `{"dag_id":"load","dag_run_id":%q,"state":"running"}`, r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newFixture starts serve on a project with a pipeline in each state (and
// the pipelines the other tests act on), with an admin and a reader token
// when withTokens, and brings them into their states. The SLA states come
// at slaAt; the rest hold on return.
func newFixture(t *testing.T, withTokens bool) *fixture {
	t.Helper()
	dir := t.TempDir()
	zone, loc := noonZone(time.Now())
	now := time.Now().In(loc)
	// The SLA instant: a whole minute (deadlines are HH:MM) at least 10 s
	// after now, so serve has loaded the pipelines before it.
	slaAt := now.Add(10 * time.Second).Truncate(time.Minute).Add(time.Minute)
	f := &fixture{zone: zone, period: now.Format("2006-01-02"), slaAt: slaAt}
	af := airflow(t)

	var tokens string
	var env []string
	if withTokens {
		f.token = adminToken
		tokens = `  tokens:
    - {name: ops, role: admin, tokenEnv: DASH_ADMIN_TOKEN}
    - {name: viewer, role: reader, tokenEnv: DASH_READER_TOKEN}
    - {name: oncall, role: operator, tokenEnv: DASH_OPERATOR_TOKEN}
`
		env = []string{"DASH_ADMIN_TOKEN=" + adminToken, "DASH_READER_TOKEN=" + readerToken, "DASH_OPERATOR_TOKEN=" + operatorToken}
	}
	write(t, dir, "interlock.yaml", `store: sqlite:./state.db
pipelines: ./pipelines
server:
  addr: 127.0.0.1:0
`+tokens+`triggers: {allowAddresses: [127.0.0.1/32]}
`)
	sched := func(extra string) string {
		return fmt.Sprintf("schedule:\n  timezone: %s\n  trigger: {key: landed, check: exists}\n%s", zone, extra)
	}
	cmd := func(args string, extra string) string {
		return fmt.Sprintf("job:\n  type: command\n  config: {command: %s, timeout: 10m}\n  maxCodeRetries: 0\n%s", args, extra)
	}
	pipelines := map[string]string{
		"waiting-data": sched("") + cmd(`["true"]`, ""),
		"evaluating-rules": sched("  evaluation: {interval: 1m, window: 6h}\n") +
			"validation:\n  rules: [{key: quality, check: exists}]\n" + cmd(`["true"]`, ""),
		// A program that cannot be started is an infrastructure error: the
		// call waits to be retried (30 s, 1 min, …).
		"triggering-job":  sched("") + cmd(`["/nonexistent/interlock-no-such-program"]`, "  triggerRetries: 10\n"),
		"running-command": sched("") + cmd(`["sleep", "600"]`, ""),
		"running-job":     sched("") + fmt.Sprintf("job:\n  type: airflow\n  config: {url: %q, dagId: load}\n  pollInterval: 1s\n  pollWindow: 6h\n", af.URL),
		"succeeded-job":   sched("") + cmd(`["true"]`, ""),
		"failed-job":      sched("") + cmd(`["/bin/sh", "-c", "echo 'load failed: 3 rows rejected' >&2; exit 3"]`, ""),
		"sla-breached": sched("") + cmd(`["true"]`, "") +
			fmt.Sprintf("sla: {deadline: %q}\n", slaAt.Format("15:04")),
		"sla-at-risk": sched("") + cmd(`["true"]`, "") +
			fmt.Sprintf("sla: {deadline: %q, expectedDuration: 1h}\n", slaAt.Add(time.Hour).Format("15:04")),
		"paused-ops": sched("") + cmd(`["true"]`, ""),
		"excluded-today": fmt.Sprintf("schedule:\n  timezone: %s\n  trigger: {key: landed, check: exists}\n  exclude: {dates: [%q]}\n", zone, f.period) +
			cmd(`["true"]`, ""),
		"dry-run-observer": sched("") + cmd(`["true"]`, "") + "dryRun: true\n",
		// Acted on by the tests.
		"live-feed": sched("") + cmd(`["true"]`, ""),
		"rerun-me":  sched("") + cmd(`["false"]`, ""), // failed: a rerun is accepted
		"xss-sensor": fmt.Sprintf("schedule:\n  timezone: %s\n  trigger: {key: landed, check: equals, field: status, value: ready}\n", zone) +
			cmd(`["true"]`, ""),
		"xss-job": sched("") + cmd(fmt.Sprintf(`["/bin/sh", "-c", "echo '%s' >&2; exit 1"]`, xssJob), ""),
		// Started by succeeded-job's success: an edge of /ui/graph.
		"after-success": fmt.Sprintf("schedule: {timezone: %s}\nvalidation:\n  rules: [{check: upstream, pipeline: succeeded-job}]\n", zone) + cmd(`["true"]`, ""),
	}
	for id, body := range pipelines {
		owner, desc := "data-eng", "the "+id+" pipeline"
		switch id {
		case "running-job", "failed-job":
			owner = "analytics"
		case "xss-sensor":
			desc = xssDesc
		}
		write(t, dir, "pipelines/"+id+".yaml", fmt.Sprintf("pipeline: {id: %s, owner: %s, description: %q}\n", id, owner, desc)+body)
	}
	// A file serve refuses: the health banner heads every page.
	write(t, dir, "pipelines/refused-file.yaml", "pipeline: {id: refused-file, owner: data-eng}\njob: {type: no-such-job}\n")
	f.srv = serveproc.Start(t, binary, dir, env)
	// The sleeping command is in its trigger call, which a graceful stop
	// would wait 30 s for: end the server as a crash would.
	t.Cleanup(func() { f.srv.Kill(t) })

	for _, id := range []string{"evaluating-rules", "triggering-job", "running-command", "running-job", "succeeded-job", "failed-job", "excluded-today", "dry-run-observer", "rerun-me", "xss-job"} {
		f.sensor(t, id, "landed", `{"rows": 10}`)
	}
	f.sensor(t, "xss-sensor", "landed", fmt.Sprintf(`{"status": %q}`, xssSensor))
	f.call(t, "POST", "/v1/pipelines/paused-ops/pause", `{}`, 200)
	wantRun := map[string]string{
		"evaluating-rules": "EVALUATING", "triggering-job": "TRIGGERING", "running-command": "TRIGGERING", "running-job": "RUNNING",
		"succeeded-job": "COMPLETED", "failed-job": "FAILED_FINAL", "rerun-me": "FAILED_FINAL", "xss-job": "FAILED_FINAL",
	}
	for id, state := range wantRun {
		f.waitRun(t, id, state)
	}
	return f
}

// call sends a request with the fixture's admin token and checks its
// status; it returns the body.
func (f *fixture) call(t *testing.T, method, path, body string, want int) string {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	return string(b)
}

func (f *fixture) sensor(t *testing.T, id, key, body string) {
	t.Helper()
	f.call(t, "PUT", "/v1/pipelines/"+id+"/sensors/"+key, body, 200)
}

// runState is the state of the current period's run ("" without one).
func (f *fixture) runState(t *testing.T, id string) string {
	t.Helper()
	var v struct {
		Run *struct {
			State string `json:"state"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(f.call(t, "GET", "/v1/pipelines/"+id, "", 200)), &v); err != nil {
		t.Fatal(err)
	}
	if v.Run == nil {
		return ""
	}
	return v.Run.State
}

func (f *fixture) waitRun(t *testing.T, id, state string) {
	t.Helper()
	eventually(t, id+"'s run to be "+state, func() bool { return f.runState(t, id) == state })
}

// eventTypes counts the pipeline's events by type.
func (f *fixture) eventTypes(t *testing.T, id string) map[string]int {
	t.Helper()
	var page struct {
		Events []struct {
			Type string `json:"detail-type"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(f.call(t, "GET", "/v1/events?limit=1000&pipeline="+id, "", 200)), &page); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range page.Events {
		out[e.Type]++
	}
	return out
}

// eventIDs are the ids of the pipeline's events, in log order.
func (f *fixture) eventIDs(t *testing.T, id string) []string {
	t.Helper()
	var page struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(f.call(t, "GET", "/v1/events?limit=1000&pipeline="+id, "", 200)), &page); err != nil || len(page.Events) == 0 {
		t.Fatalf("the events of %s: %v %+v", id, err, page)
	}
	var out []string
	for _, e := range page.Events {
		out = append(out, e.ID)
	}
	return out
}

// eventually polls cond until it holds, bounded.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
