package http_test

import (
	"context"
	"encoding/json"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	httpjob "github.com/interlockhq/interlock/internal/trigger/http"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
	"github.com/interlockhq/interlock/internal/trigger/httpx/httpxtest"
	"github.com/interlockhq/interlock/internal/trigger/triggertest"
)

// secret has characters JSON and URL escaping change, so the contract
// kit checks those forms too; password goes in a URL's user info, which
// the client sends as a Basic Authorization header.
const (
	secret   = `tok "7f3a\9c/1e+5b`
	password = "pw-3d9c+e1;a7=b"
)

func env(name string) (string, bool) {
	switch name {
	case "INTERLOCK_ETL_TOKEN":
		return secret, true
	case "INTERLOCK_ETL_PASS":
		return password, true
	}
	return "", false
}

// endpoint is a job endpoint: it records what it got and answers with the
// status it is told to. Error answers echo the secret in every form
// (triggertest.Echo, as plain text, so its control characters arrive raw)
// and the request's headers and body, as careless servers do, so a runner
// that passes them on is caught.
type endpoint struct {
	mu     sync.Mutex
	status int
	got    []*nethttp.Request
	bodies []string
}

func (e *endpoint) ServeHTTP(w nethttp.ResponseWriter, r *nethttp.Request) {
	body, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	e.got = append(e.got, r)
	e.bodies = append(e.bodies, string(body))
	status := e.status
	e.mu.Unlock()
	if status == 0 {
		status = nethttp.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status >= 400 {
		_, _ = w.Write([]byte(triggertest.Echo(secret, url.UserPassword("etl", password)) + "\n"))
		_ = json.NewEncoder(w).Encode(map[string]any{"error": nethttp.StatusText(status), "headers": r.Header, "body": string(body)})
		return
	}
	_, _ = w.Write([]byte(`{"accepted": true}`))
}

func (e *endpoint) last() (*nethttp.Request, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.got) == 0 {
		return nil, ""
	}
	return e.got[len(e.got)-1], e.bodies[len(e.bodies)-1]
}

func newEndpoint(t *testing.T) (*endpoint, *httptest.Server) {
	e := &endpoint{}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return e, srv
}

func runner(t *testing.T, srv *httptest.Server) httpjob.Runner {
	return httpjob.Runner{Client: httpxtest.Client(t, srv), LookupEnv: env}
}

func TestContract(t *testing.T) {
	triggertest.Run(t, func(t *testing.T) *triggertest.Harness {
		e, srv := newEndpoint(t)
		return &triggertest.Harness{
			Runner:  runner(t, srv),
			Request: httpxtest.Request(t, pipeline.JobHTTP, `{url: "`+userinfoURL(srv)+`/run/${PIPELINE}", headers: {X-Api-Key: "${env:INTERLOCK_ETL_TOKEN}"}, body: '{"token": "${env:INTERLOCK_ETL_TOKEN}"}'}`),
			Set: func(start, _ triggertest.Mode) {
				e.mu.Lock()
				defer e.mu.Unlock()
				e.status = map[triggertest.Mode]int{
					triggertest.StartOK:          nethttp.StatusOK,
					triggertest.StartThrottled:   nethttp.StatusTooManyRequests,
					triggertest.StartServerError: nethttp.StatusBadGateway,
					triggertest.StartRejected:    nethttp.StatusBadRequest,
				}[start]
			},
			Secret:      secret,
			Userinfo:    url.UserPassword("etl", password),
			Synchronous: true,
			StartAuth: func() string {
				r, _ := e.last()
				if r == nil {
					return ""
				}
				return r.Header.Get("Authorization")
			},
			// The response is the result: a job cannot report running,
			// failed (a 4xx is start-rejected) or timed out on its own.
			Supports: func(m triggertest.Mode) bool {
				return m != triggertest.JobRunning && m != triggertest.JobFailed && m != triggertest.JobTimedOut
			},
		}
	})
}

// userinfoURL is srv's URL with user info whose password is read from
// the environment.
func userinfoURL(srv *httptest.Server) string {
	return strings.Replace(srv.URL, "http://", "http://etl:${env:INTERLOCK_ETL_PASS}@", 1)
}

func TestRequestOnTheWire(t *testing.T) {
	cases := []struct {
		name, config                 string
		method, path, body, ctype    string
		header, headerVal, wantQuery string
	}{
		{"defaults: POST, JSON, the period as body", `{url: "%s/run/${PIPELINE}?date=${DATE}"}`,
			"POST", "/run/orders", `{"par_day":"20260310","par_hour":"05"}`, "application/json", "", "", "date=2026-03-10"},
		{"templates in headers and body", `{url: "%s/run", method: put, headers: {Authorization: "Bearer ${env:INTERLOCK_ETL_TOKEN}", X-Run-Id: "${RUN_ID}"}, body: '{"schedule": "${SCHEDULE}", "hour": "${HOUR}"}'}`,
			"PUT", "/run", `{"schedule": "stream", "hour": "05"}`, "application/json", "X-Run-Id", httpxtest.Vars.RunID, ""},
		{"a configured Content-Type wins", `{url: "%s/run", headers: {content-type: text/plain}, body: "day=${DATE}"}`,
			"POST", "/run", "day=2026-03-10", "text/plain", "", "", ""},
		{"GET sends no default body", `{url: "%s/run", method: GET}`,
			"GET", "/run", "", "application/json", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, srv := newEndpoint(t)
			req := httpxtest.Request(t, pipeline.JobHTTP, strings.Replace(c.config, "%s", srv.URL, 1))
			st, err := runner(t, srv).Start(t.Context(), req)
			if err != nil || st.Result == nil || st.Result.Status != trigger.StatusSucceeded {
				t.Fatalf("Start = %+v, %v", st, err)
			}
			r, body := e.last()
			if r.Method != c.method || r.URL.Path != c.path || body != c.body || r.Header.Get("Content-Type") != c.ctype || r.URL.RawQuery != c.wantQuery {
				t.Fatalf("got %s %s?%s %q (Content-Type %q)", r.Method, r.URL.Path, r.URL.RawQuery, body, r.Header.Get("Content-Type"))
			}
			if c.header != "" && r.Header.Get(c.header) != c.headerVal {
				t.Fatalf("%s = %q", c.header, r.Header.Get(c.header))
			}
		})
	}
}

func TestDailyPeriodDefaultBodyHasNoHour(t *testing.T) {
	e, srv := newEndpoint(t)
	req := httpxtest.Request(t, pipeline.JobHTTP, `{url: "`+srv.URL+`"}`)
	req.Vars.Hour = ""
	if _, err := runner(t, srv).Start(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if _, body := e.last(); body != `{"par_day":"20260310"}` {
		t.Fatalf("body = %s", body)
	}
}

// TestStatusClassification pins what every status means, explicitly.
func TestStatusClassification(t *testing.T) {
	cases := []struct {
		status   int
		err      bool
		result   trigger.Status
		category run.Category
	}{
		{200, false, trigger.StatusSucceeded, ""},
		{201, false, trigger.StatusSucceeded, ""},
		{202, false, trigger.StatusSucceeded, ""},
		{204, false, trigger.StatusSucceeded, ""},
		{304, false, trigger.StatusFailed, run.Permanent},
		{400, false, trigger.StatusFailed, run.Permanent},
		{401, false, trigger.StatusFailed, run.Permanent},
		{403, false, trigger.StatusFailed, run.Permanent},
		{404, false, trigger.StatusFailed, run.Permanent},
		{409, false, trigger.StatusFailed, run.Permanent},
		{422, false, trigger.StatusFailed, run.Permanent},
		{408, true, "", ""},
		{429, true, "", ""},
		{500, true, "", ""},
		{502, true, "", ""},
		{503, true, "", ""},
		{504, true, "", ""},
	}
	e, srv := newEndpoint(t)
	req := httpxtest.Request(t, pipeline.JobHTTP, `{url: "`+srv.URL+`/run", headers: {Authorization: "Bearer ${env:INTERLOCK_ETL_TOKEN}"}}`)
	for _, c := range cases {
		e.mu.Lock()
		e.status = c.status
		e.mu.Unlock()
		st, err := runner(t, srv).Start(t.Context(), req)
		if c.err {
			if err == nil || !strings.Contains(err.Error(), "status "+strconv.Itoa(c.status)) {
				t.Errorf("%d: Start = %+v, %v; want an error naming the status", c.status, st, err)
			}
			continue
		}
		if err != nil || st.Result == nil || st.Result.Status != c.result || st.Result.Category != c.category {
			t.Errorf("%d: Start = %+v, %v; want %s %s", c.status, st.Result, err, c.result, c.category)
			continue
		}
		if c.result == trigger.StatusFailed && (!strings.Contains(st.Result.Message, "status "+strconv.Itoa(c.status)) || strings.Contains(st.Result.Message, secret)) {
			t.Errorf("%d: message %q", c.status, st.Result.Message)
		}
	}
}

func TestTimeoutIsAnError(t *testing.T) {
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the server notices a closed connection only once the body is read
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	req := httpxtest.Request(t, pipeline.JobHTTP, `{url: "`+srv.URL+`", timeout: 50ms}`)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	st, err := runner(t, srv).Start(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "no complete response within 50ms") {
		t.Fatalf("Start = %+v, %v; want a timeout error (retried)", st, err)
	}
}

func TestNetworkErrorIsAnError(t *testing.T) {
	_, srv := newEndpoint(t)
	req := httpxtest.Request(t, pipeline.JobHTTP, `{url: "`+srv.URL+`"}`)
	r := runner(t, srv)
	srv.Close()
	if st, err := r.Start(t.Context(), req); err == nil {
		t.Fatalf("Start = %+v against a closed server, want an error", st)
	}
}

func TestGuardRefusalIsAPermanentFailure(t *testing.T) {
	e, srv := newEndpoint(t)
	req := httpxtest.Request(t, pipeline.JobHTTP, `{url: "`+srv.URL+`/run"}`)
	// No allow-list: the loopback test server is refused.
	st, err := httpjob.Runner{Client: httpx.NewClient(nil), LookupEnv: env}.Start(t.Context(), req)
	if err != nil || st.Result == nil || st.Result.Category != run.Permanent || !strings.Contains(st.Result.Message, "SSRF guard") {
		t.Fatalf("Start = %+v, %v", st.Result, err)
	}
	if r, _ := e.last(); r != nil {
		t.Fatal("the refused address was called")
	}
}

func TestUnsetVariableSendsNothing(t *testing.T) {
	e, srv := newEndpoint(t)
	req := httpxtest.Request(t, pipeline.JobHTTP, `{url: "`+srv.URL+`", headers: {X-Api-Key: "${env:INTERLOCK_MISSING}"}}`)
	st, err := runner(t, srv).Start(t.Context(), req)
	if err != nil || st.Result == nil || st.Result.Category != run.Permanent || !strings.Contains(st.Result.Message, "INTERLOCK_MISSING is not set") {
		t.Fatalf("Start = %+v, %v", st.Result, err)
	}
	if r, _ := e.last(); r != nil {
		t.Fatal("a request with a hole in it was sent")
	}
}

func TestPollIsNotUsed(t *testing.T) {
	if _, err := (httpjob.Runner{}).Poll(t.Context(), trigger.Request{}); err == nil {
		t.Fatal("Poll of a synchronous type succeeded")
	}
}

// Issue 10 defect 3: a value read from the environment that only says
// where the job is (its host and port) is shown in messages; the token
// sent in a header is not, even where the answer echoes it.
func TestHostFromTheEnvironmentIsShown(t *testing.T) {
	e, srv := newEndpoint(t)
	e.status = nethttp.StatusBadRequest
	u, _ := url.Parse(srv.URL)
	lookup := func(name string) (string, bool) {
		switch name {
		case "INTERLOCK_HOST":
			return u.Hostname(), true
		case "INTERLOCK_PORT":
			return u.Port(), true
		}
		return env(name)
	}
	req := httpxtest.Request(t, pipeline.JobHTTP, `{url: "http://${env:INTERLOCK_HOST}:${env:INTERLOCK_PORT}/run", headers: {X-Api-Key: "${env:INTERLOCK_ETL_TOKEN}"}}`)
	st, err := httpjob.Runner{Client: httpxtest.Client(t, srv), LookupEnv: lookup}.Start(t.Context(), req)
	if err != nil || st.Result == nil {
		t.Fatalf("Start = %+v, %v", st, err)
	}
	msg := st.Result.Message
	if !strings.HasPrefix(msg, "http: POST http://"+u.Host+"/run: status 400: ") {
		t.Errorf("the host is hidden: %q", msg)
	}
	if strings.Contains(msg, secret) || !strings.Contains(msg, "[redacted]") {
		t.Errorf("the token shows, or nothing was redacted: %q", msg)
	}
}
