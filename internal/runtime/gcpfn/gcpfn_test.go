package gcpfn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/lease"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/gcpfn"
	"github.com/interlockhq/interlock/internal/runtime/local"
	"github.com/interlockhq/interlock/internal/testenv/pglocal"
	"github.com/interlockhq/interlock/internal/watchdog"
)

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	pglocal.Stop()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// function builds cmd/gcp-watchdog once, starts it on a free loopback port
// with env, waits until it listens and returns its /watchdog URL; the
// process is killed when t ends.
func function(t *testing.T, env ...string) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "gcp-watchdog")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "gcp-watchdog")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/interlockhq/interlock/cmd/gcp-watchdog").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(binPath)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), fmt.Sprintf("PORT=%d", port)}, env...)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("function's output:\n%s", logs.String())
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			break
		}
		select {
		case <-done:
			t.Fatalf("the function exited: %s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the function did not listen on %s within 20s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "http://" + addr + "/watchdog"
}

// call calls the function and decodes its summary.
func call(t *testing.T, url string) (int, gcpfn.Summary, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var s gcpfn.Summary
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("answer %d is not a JSON summary: %v\n%s", resp.StatusCode, err, body)
	}
	return resp.StatusCode, s, string(body)
}

// hook is a webhook alert sink: it records each delivery's body.
type hook struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, string(b))
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// count is how many deliveries mention event type typ.
func (h *hook) count(typ string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, b := range h.bodies {
		if strings.Contains(b, `"`+typ+`"`) {
			n++
		}
	}
	return n
}

// project writes the function's interlock.yaml (a webhook alert route to
// h) and, as a serve or a deploy step would, loads pipelines into the
// store at u with the clock at loadedAt. It returns the settings path.
func project(t *testing.T, u string, h *hook, loadedAt time.Time, pipelines map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	settings := filepath.Join(dir, "interlock.yaml")
	yaml := fmt.Sprintf("pipelines: ./pipelines\nalerts:\n  - {type: webhook, url: %q, secretEnv: HOOK_SECRET}\n", h.URL)
	if err := os.WriteFile(settings, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "pipelines"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range pipelines {
		if err := os.WriteFile(filepath.Join(dir, "pipelines", name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a, err := app.Open(t.Context(), settings, app.Options{Clock: clock.NewVirtual(loadedAt), Passive: true,
		Store: &pipeline.Store{Driver: pipeline.StorePostgres, DSN: u}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if refused := local.LoadOnce(t.Context(), a); len(refused) > 0 {
		t.Fatal(refused)
	}
	// A serve replica holds the watchdog's lease: the function passes
	// anyway (it takes no lease; the dedup markers keep events once).
	if _, ok, err := lease.Acquire(t.Context(), a.Store, app.WatchdogLease, "replica-1/127.0.0.1:7070", time.Now(), time.Hour); err != nil || !ok {
		t.Fatalf("a replica's watchdog lease: %v %v", ok, err)
	}
	return settings
}

func env(u, settings string) []string {
	return []string{gcpfn.EnvStoreURL + "=" + u, gcpfn.EnvConfig + "=" + settings, "HOOK_SECRET=s3cret-hook"}
}

// A healthy pass over a store with an event pipeline: 200 and a summary
// naming every check.
func TestHealthyPassOnPostgres(t *testing.T) {
	u := pglocal.URL(t)
	h := newHook(t)
	settings := project(t, u, h, time.Now().Add(-time.Hour), map[string]string{"orders.yaml": `pipeline: {id: orders}
schedule: {trigger: {key: upstream, check: exists}}
validation: {rules: [{key: upstream, check: exists}]}
job: {type: glue, config: {jobName: j}}
`})
	url := function(t, env(u, settings)...)
	code, s, body := call(t, url)
	if code != http.StatusOK || !s.Healthy || len(s.Degraded) != 0 || s.Error != "" {
		t.Fatalf("healthy pass answered %d:\n%s", code, body)
	}
	if len(s.Checks) != len(watchdog.Checks()) || s.At == "" {
		t.Errorf("summary: checks %v, at %q", s.Checks, s.At)
	}
	code, s, body = call(t, url)
	if code != http.StatusOK || s.Previous == "" {
		t.Errorf("second pass: %d, previousPass %q:\n%s", code, s.Previous, body)
	}
}

// A cron pipeline whose tick passed with no run: the function raises
// SCHEDULE_MISSED and delivers it to the webhook once; the next call
// raises and delivers nothing more.
func TestMissedScheduleDeliveredOnceOnPostgres(t *testing.T) {
	u := pglocal.URL(t)
	h := newHook(t)
	now := time.Now().UTC()
	hour := now.Add(-2 * time.Hour).Hour() // a daily tick 2–3 hours ago
	settings := project(t, u, h, now.Add(-25*time.Hour), map[string]string{"nightly.yaml": fmt.Sprintf(`pipeline: {id: nightly}
schedule: {cron: "0 %d * * *"}
validation: {rules: [{key: x, check: exists}]}
job: {type: glue, config: {jobName: j}}
`, hour)})
	url := function(t, env(u, settings)...)
	code, s, body := call(t, url)
	if code != http.StatusOK {
		t.Fatalf("pass answered %d:\n%s", code, body)
	}
	missed := 0
	for _, f := range s.Findings {
		if f.Event == "SCHEDULE_MISSED" && f.Pipeline == "nightly" {
			missed++
		}
	}
	if missed != 1 || s.Events != len(s.Findings) {
		t.Fatalf("findings %+v (eventsRaised %d), want one SCHEDULE_MISSED for nightly", s.Findings, s.Events)
	}
	if n := h.count("SCHEDULE_MISSED"); n != 1 {
		t.Fatalf("webhook got SCHEDULE_MISSED %d times after the pass, want 1", n)
	}
	code, s, body = call(t, url)
	if code != http.StatusOK || len(s.Findings) != 0 {
		t.Fatalf("second pass answered %d:\n%s", code, body)
	}
	if n := h.count("SCHEDULE_MISSED"); n != 1 {
		t.Fatalf("webhook got SCHEDULE_MISSED %d times after two passes, want 1", n)
	}
}

// A check whose data cannot be read (the timers table gone): 503 naming
// the check and why, and WATCHDOG_DEGRADED delivered once over two calls.
func TestDegradedPassOnPostgres(t *testing.T) {
	u := pglocal.URL(t)
	h := newHook(t)
	settings := project(t, u, h, time.Now().Add(-time.Hour), nil)
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(t.Context(), "ALTER TABLE timers RENAME TO timers_gone")
	_ = conn.Close(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	url := function(t, env(u, settings)...)
	for i := range 2 {
		code, s, body := call(t, url)
		if code != http.StatusServiceUnavailable || s.Healthy {
			t.Fatalf("pass %d over a missing table answered %d:\n%s", i, code, body)
		}
		named := false
		for _, d := range s.Degraded {
			if d.Check == watchdog.CheckSLAScheduling && d.Reason != "" {
				named = true
			}
		}
		if !named {
			t.Fatalf("pass %d: degraded checks %+v, want %s with a reason", i, s.Degraded, watchdog.CheckSLAScheduling)
		}
	}
	if n := h.count("WATCHDOG_DEGRADED"); n != 1 {
		t.Fatalf("webhook got WATCHDOG_DEGRADED %d times over two degraded passes, want 1", n)
	}
}

// A store that cannot be reached: 503, and the answer never shows the
// URL's password.
func TestStoreUnreachableOnPostgres(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	const pw = "Sup3rS3cretPW"
	u := fmt.Sprintf("postgres://interlock:%s@127.0.0.1:%d/interlock?connect_timeout=2", pw, port)
	settings := filepath.Join(t.TempDir(), "interlock.yaml")
	if err := os.WriteFile(settings, []byte("alerts: [{type: console}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := function(t, env(u, settings)...)
	code, s, body := call(t, url)
	if code != http.StatusServiceUnavailable || s.Healthy || s.Error == "" {
		t.Fatalf("unreachable store answered %d:\n%s", code, body)
	}
	if strings.Contains(body, pw) {
		t.Fatalf("the answer shows the store's password:\n%s", body)
	}
}
