package e2e_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cli runs the built binary in dir, as a user at a shell would.
func cli(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "INTERLOCK_TOKEN=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("interlock %v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// mustCLI runs a command that must exit with want.
func mustCLI(t *testing.T, dir string, want int, args ...string) string {
	t.Helper()
	code, out, errOut := cli(t, dir, args...)
	if code != want {
		t.Fatalf("interlock %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out
}

func decode[T any](t *testing.T, what, doc string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%s is not the JSON expected: %v\n%s", what, err, doc)
	}
	return v
}

type eventLine struct {
	Type   string `json:"detail-type"`
	Detail struct {
		PipelineID string `json:"pipelineId"`
		Date       string `json:"date"`
	} `json:"detail"`
}

// jsonEvents reads `events --output json`: one JSON event per line.
func jsonEvents(t *testing.T, out string) []eventLine {
	t.Helper()
	var evs []eventLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		evs = append(evs, decode[eventLine](t, "an events --output json line", l))
	}
	return evs
}

type pipelineDoc struct {
	ID            string `json:"id"`
	Paused        bool   `json:"paused"`
	CurrentPeriod string `json:"currentPeriod"`
	Run           *struct {
		State   string `json:"state"`
		Outcome string `json:"outcome"`
	} `json:"run"`
}

// TestEveryAPICommandAgainstServe runs each command of the command line
// that talks to a project — sensor put, status, explain, events, rerun,
// pause, resume, watchdog --once — through the built binary against a real
// `interlock serve`, and checks what each did, not only its exit code.
func TestEveryAPICommandAgainstServe(t *testing.T) {
	t.Parallel()
	airflow := newFakeAirflow(t)
	airflow.set("success")
	dir := t.TempDir()
	write := projectWriter(t, dir)
	// No tokens: serve binds to loopback only and the CLI sends none.
	// The watchdog interval is long so that serve's own passes (one at
	// start) do not come between the two `watchdog --once` below.
	write("interlock.yaml", `store: sqlite:./state.db
pipelines: ./pipelines
watchdog: {interval: 1h}
triggers: {allowAddresses: [127.0.0.1/32]}
`)
	job := fmt.Sprintf(`job:
  type: airflow
  config: {url: %q, dagId: gold}
  pollInterval: 1s
`, airflow.URL)
	write("pipelines/gold.yaml", `pipeline: {id: gold, owner: analytics}
schedule:
  trigger: {key: upstream, check: equals, field: status, value: ready}
validation:
  rules:
    - {key: upstream, check: equals, field: status, value: ready}
    - {key: row-count, check: gte, field: count, value: 1000}
`+job)
	write("pipelines/silver.yaml", `pipeline: {id: silver, owner: analytics}
schedule:
  trigger: {key: upstream, check: exists}
validation:
  rules: [{key: upstream, check: exists}]
`+job)
	srv := start(t, dir, nil)
	defer srv.stop(t)
	api := []string{"--server", srv.url}
	run := func(want int, args ...string) string {
		t.Helper()
		return mustCLI(t, dir, want, append(args, api...)...)
	}
	gold := func() pipelineDoc {
		t.Helper()
		doc := decode[struct {
			Pipeline pipelineDoc      `json:"pipeline"`
			Events   []map[string]any `json:"events"`
		}](t, "status gold --output json", run(0, "status", "gold", "--output", "json"))
		if doc.Pipeline.ID != "gold" {
			t.Fatalf("status gold --output json: pipeline %+v", doc.Pipeline)
		}
		return doc.Pipeline
	}
	events := func(args ...string) []eventLine {
		t.Helper()
		return jsonEvents(t, run(0, append([]string{"events", "--output", "json"}, args...)...))
	}

	// status lists both pipelines, neither paused.
	list := decode[struct{ Pipelines []pipelineDoc }](t, "status --output json", run(0, "status", "--output", "json"))
	if len(list.Pipelines) != 2 || list.Pipelines[0].ID != "gold" || list.Pipelines[1].ID != "silver" || list.Pipelines[0].Paused || list.Pipelines[0].Run != nil {
		t.Fatalf("status --output json: %+v", list.Pipelines)
	}
	period := list.Pipelines[0].CurrentPeriod

	// pause: the pipeline shows paused, in both outputs, and the log has
	// PIPELINE_PAUSED for it (and, below, only for it).
	if out := run(0, "pause", "gold"); strings.TrimSpace(out) != "gold paused" {
		t.Fatalf("pause gold printed %q", out)
	}
	if out := run(0, "pause", "silver", "--until", "2h", "--output", "json"); !decode[pipelineDoc](t, "pause --output json", out).Paused {
		t.Fatalf("pause silver --output json: not paused:\n%s", out)
	}
	if !gold().Paused {
		t.Fatal("status gold: not paused after pause")
	}
	table := run(0, "status")
	if !regexpLine(table, `^gold\s.*\strue$`) || !regexpLine(table, `^silver\s.*\strue$`) {
		t.Fatalf("status does not show both paused:\n%s", table)
	}

	// sensor put while paused: stored (the API lists it), nothing starts.
	out := run(0, "sensor", "put", "gold", "upstream", `{"status": "ready"}`)
	if !strings.Contains(out, "stored gold/upstream for period "+period) || !strings.Contains(out, "new data") {
		t.Fatalf("sensor put printed %q", out)
	}
	written := decode[struct {
		Key     string `json:"key"`
		Changed bool   `json:"changed"`
		Period  string `json:"period"`
	}](t, "sensor put --output json", run(0, "sensor", "put", "gold", "row-count", `{"count": 15432}`, "--output", "json"))
	if written.Key != "row-count" || !written.Changed || written.Period != period {
		t.Fatalf("sensor put --output json: %+v", written)
	}
	code, body := request(t, "GET", srv.url+"/v1/pipelines/gold/sensors", "", "")
	sensors := decode[struct {
		Sensors []struct {
			Key  string         `json:"key"`
			Data map[string]any `json:"data"`
		} `json:"sensors"`
	}](t, "GET /v1/pipelines/gold/sensors", body)
	got := map[string]any{}
	for _, s := range sensors.Sensors {
		got[s.Key] = s.Data
	}
	if code != 200 || len(got) != 2 || fmt.Sprint(got["upstream"]) != "map[status:ready]" || fmt.Sprint(got["row-count"]) != "map[count:15432]" {
		t.Fatalf("sensors after sensor put: %d %v", code, got)
	}

	// explain prints each rule with the value it saw and its verdict, and
	// that the pipeline is paused.
	out = run(0, "explain", "gold")
	for _, want := range []string{"gold, period " + period, "paused ", "upstream equals status", "row-count gte count", "15432"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain gold does not show %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAIL") {
		t.Errorf("explain gold: a rule fails with both sensors in:\n%s", out)
	}
	x := decode[struct {
		Paused     bool `json:"paused"`
		Validation struct {
			Passed bool `json:"passed"`
			Rules  []struct {
				Key string `json:"key"`
			} `json:"rules"`
		} `json:"validation"`
	}](t, "explain --output json", run(0, "explain", "gold", "--period", period, "--output", "json"))
	if !x.Paused || !x.Validation.Passed || len(x.Validation.Rules) != 2 {
		t.Fatalf("explain --output json: %+v", x)
	}
	time.Sleep(time.Second) // a paused pipeline must not start, even given time
	if n := airflow.count(); n != 0 {
		t.Fatalf("the job was started %d time(s) while the pipeline was paused", n)
	}

	// resume: not paused any more, PIPELINE_RESUMED logged, and the data
	// that came during the pause now runs the job.
	if out := run(0, "resume", "gold"); strings.TrimSpace(out) != "gold resumed" {
		t.Fatalf("resume gold printed %q", out)
	}
	if gold().Paused {
		t.Fatal("status gold: still paused after resume")
	}
	eventually(t, "the job of the resumed pipeline to complete", func() bool {
		p := gold()
		return p.Run != nil && p.Run.State == "COMPLETED"
	})
	if n := airflow.count(); n != 1 {
		t.Fatalf("the job was started %d times, want 1", n)
	}
	if out := run(0, "status", "gold"); !strings.Contains(out, "COMPLETED") || regexpLine(out, `^paused\s`) {
		t.Fatalf("status gold after resume:\n%s", out)
	}

	// events filters by pipeline and by type.
	paused := events("--type", "PIPELINE_PAUSED")
	if len(paused) != 2 {
		t.Fatalf("events --type PIPELINE_PAUSED: %+v", paused)
	}
	paused = events("--pipeline", "gold", "--type", "PIPELINE_PAUSED")
	if len(paused) != 1 || paused[0].Type != "PIPELINE_PAUSED" || paused[0].Detail.PipelineID != "gold" {
		t.Fatalf("events --pipeline gold --type PIPELINE_PAUSED: %+v", paused)
	}
	resumed := events("--pipeline", "gold", "--type", "PIPELINE_RESUMED")
	if len(resumed) != 1 || resumed[0].Detail.PipelineID != "gold" {
		t.Fatalf("events --pipeline gold --type PIPELINE_RESUMED: %+v", resumed)
	}
	if evs := events("--pipeline", "silver", "--type", "PIPELINE_RESUMED"); len(evs) != 0 {
		t.Fatalf("silver was never resumed, yet: %+v", evs)
	}
	all := events("--pipeline", "gold")
	seen := map[string]bool{}
	for _, e := range all {
		if e.Detail.PipelineID != "gold" {
			t.Fatalf("events --pipeline gold returned an event of %q", e.Detail.PipelineID)
		}
		seen[e.Type] = true
	}
	for _, want := range []string{"PIPELINE_PAUSED", "PIPELINE_RESUMED", "JOB_TRIGGERED", "JOB_COMPLETED"} {
		if !seen[want] {
			t.Errorf("events --pipeline gold has no %s: %v", want, seen)
		}
	}
	table = run(0, "events", "--pipeline", "gold", "--type", "JOB_COMPLETED")
	if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 1 || !regexpLine(table, `\sJOB_COMPLETED\s+gold\s+`+period+`\s`) {
		t.Fatalf("events --pipeline gold --type JOB_COMPLETED (table):\n%s", table)
	}

	// rerun: the completed period with no new data is refused by the
	// circuit breaker (exit 1); the previous day, which never ran, is
	// accepted. Each verdict is logged.
	out = run(1, "rerun", "gold", "--period", period)
	if !strings.HasPrefix(out, "rerun of "+period+" rejected: ") || !strings.Contains(out, "previous run succeeded and no sensor data has changed since") {
		t.Fatalf("rerun of the completed period printed %q", out)
	}
	day, err := time.Parse("2006-01-02", period)
	if err != nil {
		t.Fatalf("current period %q: %v", period, err)
	}
	yesterday := day.AddDate(0, 0, -1).Format("2006-01-02")
	ans := decode[struct {
		Accepted bool   `json:"accepted"`
		Period   string `json:"period"`
	}](t, "rerun --output json", run(0, "rerun", "gold", "--period", yesterday, "--reason", "reprocess", "--output", "json"))
	if !ans.Accepted || ans.Period != yesterday {
		t.Fatalf("rerun of %s: %+v", yesterday, ans)
	}
	reruns := events("--pipeline", "gold", "--type", "RERUN_REJECTED", "--type", "RERUN_ACCEPTED")
	if len(reruns) != 2 || reruns[0].Type != "RERUN_REJECTED" || reruns[0].Detail.Date != period || reruns[1].Type != "RERUN_ACCEPTED" || reruns[1].Detail.Date != yesterday {
		t.Fatalf("events of the reruns: %+v", reruns)
	}

	// watchdog --once shares the SQLite store with the running serve
	// (--alerts=false: serve delivers). Each pass is recorded, so the
	// second one names the first as its previous pass.
	out = mustCLI(t, dir, 0, "watchdog", "--once", "--alerts=false")
	m := regexp.MustCompile(`(?m)^watchdog pass at (\S+) \(.*\): healthy, `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("watchdog --once printed:\n%s", out)
	}
	first := m[1]
	pass := decode[struct {
		At       string `json:"at"`
		Degraded bool   `json:"degraded"`
		Previous string `json:"previousPass"`
	}](t, "watchdog --once --output json", mustCLI(t, dir, 0, "watchdog", "--once", "--alerts=false", "--output", "json"))
	if pass.Degraded || pass.Previous != first || pass.At < first {
		t.Fatalf("second watchdog pass: %+v, want previousPass %s", pass, first)
	}
	// serve carries on over the shared store.
	if p := gold(); p.Paused || p.Run == nil {
		t.Fatalf("status gold after the watchdog passes: %+v", p)
	}
}

// regexpLine reports whether a line of out matches the expression.
func regexpLine(out, expr string) bool {
	re := regexp.MustCompile(expr)
	for _, l := range strings.Split(out, "\n") {
		if re.MatchString(strings.TrimRight(l, " ")) {
			return true
		}
	}
	return false
}
