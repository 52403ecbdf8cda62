package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The dashboard's server side through the built binary: sign in with a
// token for a session cookie, use the API with it (a state change without
// the CSRF token is refused), follow a sensor write's events on the event
// stream, read /v1/health.
func TestSessionStreamAndHealthAgainstServe(t *testing.T) {
	t.Parallel()
	airflow := newFakeAirflow(t)
	airflow.set("success")
	dir := t.TempDir()
	write := projectWriter(t, dir)
	write("interlock.yaml", `store: sqlite:./state.db
pipelines: ./pipelines
server:
  tokens:
    - {name: ops, role: admin, tokenEnv: INTERLOCK_ADMIN_TOKEN}
    - {name: etl, role: writer, tokenEnv: INTERLOCK_WRITER_TOKEN}
    - {name: dash, role: reader, tokenEnv: INTERLOCK_READER_TOKEN}
triggers: {allowAddresses: [127.0.0.1/32]}
alerts: [{type: console}]
`)
	write("pipelines/gold.yaml", airflowPipeline("gold", airflow.URL))
	write("pipelines/broken.yaml", "pipeline: {id: broken}\nschedule: {trigger: {key: k, check: exists}}\nvalidation: {rules: [{key: k, check: nosuch}]}\njob: {type: glue, config: {jobName: b}}\n")
	env := []string{"INTERLOCK_ADMIN_TOKEN=admin-secret-2", "INTERLOCK_WRITER_TOKEN=writer-secret-2", "INTERLOCK_READER_TOKEN=reader-secret-2"}
	srv := start(t, dir, env)
	defer srv.stop(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	origin := srv.url
	send := func(method, path string, header http.Header, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	signIn := func(token string) string {
		t.Helper()
		resp, body := send("POST", "/sign-in", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Origin": {origin}},
			url.Values{"token": {token}, "next": {"/ui/events"}}.Encode())
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/events" {
			t.Fatalf("sign-in: %d to %q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
		}
		for _, c := range resp.Cookies() {
			if c.Name == "interlock_session" && c.HttpOnly && c.SameSite == http.SameSiteStrictMode {
				return c.Name + "=" + c.Value
			}
		}
		t.Fatalf("no HttpOnly SameSite=Strict session cookie: %v", resp.Header["Set-Cookie"])
		return ""
	}

	resp, body := send("GET", "/sign-in", nil, "")
	if resp.StatusCode != 200 || !strings.Contains(body, `<form method="post" action="/sign-in"`) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("sign-in form: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if resp, _ := send("POST", "/sign-in", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, "token=guess"); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("a wrong token: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	reader, admin := signIn("reader-secret-2"), signIn("admin-secret-2")
	if resp, body := send("GET", "/v1/pipelines/gold", http.Header{"Cookie": {reader}}, ""); resp.StatusCode != 200 || !strings.Contains(body, `"id":"gold"`) {
		t.Fatalf("GET with the session: %d %s", resp.StatusCode, body)
	}
	if resp, body := send("POST", "/v1/pipelines/gold/pause", http.Header{"Cookie": {admin}, "Origin": {origin}, "Content-Type": {"application/json"}}, `{}`); resp.StatusCode != 403 || !strings.Contains(body, "X-CSRF-Token") {
		t.Fatalf("pause with the session and no CSRF token: %d %s", resp.StatusCode, body)
	}
	// The dashboard: without a session, to the sign-in page; with one, the
	// page carries the session's CSRF token, which makes the action go.
	if resp, _ := send("GET", "/ui/health", nil, ""); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/sign-in?next=%2Fui%2Fhealth" {
		t.Fatalf("a page without a session: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body = send("GET", "/", http.Header{"Cookie": {admin}}, "")
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindStringSubmatch(body)
	if resp.StatusCode != 200 || m == nil || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("the overview with the admin's session: %d, CSRF meta %v\n%s", resp.StatusCode, m, body)
	}
	action := http.Header{"Cookie": {admin}, "Origin": {origin}, "Content-Type": {"application/json"}, "X-CSRF-Token": {m[1]}}
	if resp, body := send("POST", "/v1/pipelines/gold/pause", action, `{}`); resp.StatusCode != 200 || !strings.Contains(body, `"paused":true`) {
		t.Fatalf("pause with the session and its CSRF token: %d %s", resp.StatusCode, body)
	}
	action.Set("Origin", "http://evil.example")
	if resp, _ := send("POST", "/v1/pipelines/gold/resume", action, ""); resp.StatusCode != 403 {
		t.Fatalf("resume from another origin: %d", resp.StatusCode)
	}
	action.Set("Origin", origin)
	if resp, _ := send("POST", "/v1/pipelines/gold/resume", action, ""); resp.StatusCode != 200 {
		t.Fatalf("resume: %d", resp.StatusCode)
	}

	// The stream, with the reader's session, of gold's events.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.url+"/v1/events/stream?pipeline=gold", nil)
	req.Header.Set("Cookie", reader)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != 200 || stream.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", stream.StatusCode, stream.Header.Get("Content-Type"))
	}
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	await := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case l, open := <-lines:
				if !open {
					t.Fatalf("stream ended waiting for %s", what)
				}
				if ok(l) {
					return l
				}
			case <-deadline:
				t.Fatalf("no %s on the stream in time", what)
			}
		}
	}
	await("caught up", func(l string) bool { return l == ": caught up" })
	if code, body := request(t, "PUT", srv.url+"/v1/pipelines/gold/sensors/upstream", "writer-secret-2", `{"rows": 1}`); code != 200 {
		t.Fatalf("sensor write: %d %s", code, body)
	}
	data := await("JOB_TRIGGERED", func(l string) bool {
		return strings.HasPrefix(l, "data: ") && strings.Contains(l, `"detail-type":"JOB_TRIGGERED"`)
	})
	var ev struct {
		Detail struct {
			PipelineID string `json:"pipelineId"`
		} `json:"detail"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &ev); err != nil || ev.Detail.PipelineID != "gold" {
		t.Fatalf("streamed %s (%v)", data, err)
	}

	code, body := request(t, "GET", srv.url+"/v1/health", "reader-secret-2", "")
	var health struct {
		Watchdog struct {
			LastPass *time.Time `json:"lastPass"`
		} `json:"watchdog"`
		Sinks          []struct{ Sink string } `json:"sinks"`
		RefusedConfigs []struct {
			File   string
			Errors []struct{ Line int }
		} `json:"refusedConfigs"`
	}
	if err := json.Unmarshal([]byte(body), &health); code != 200 || err != nil {
		t.Fatalf("health: %d %s", code, body)
	}
	if len(health.Sinks) != 1 || health.Sinks[0].Sink != "console" || len(health.RefusedConfigs) != 1 ||
		!strings.HasSuffix(health.RefusedConfigs[0].File, "broken.yaml") || health.RefusedConfigs[0].Errors[0].Line != 3 {
		t.Fatalf("health: %s", body)
	}
	cancel()
}
