package airflow_test

import (
	"encoding/json"
	nethttp "net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/airflow"
	"github.com/interlockhq/interlock/internal/trigger/httpx/httpxtest"
	"github.com/interlockhq/interlock/internal/trigger/triggertest"
)

// secret has characters JSON and URL escaping change, so the contract
// kit checks those forms too. The contract's config also carries user
// info (password), which the Authorization header overrides on the wire
// but which must stay secret all the same.
const (
	secret   = `af-tok "91c2\e7d4/+x`
	auth     = "Bearer " + secret
	password = "pw-af+91;c2=e7"
)

func env(name string) (string, bool) {
	switch name {
	case "INTERLOCK_AIRFLOW_TOKEN":
		return secret, true
	case "INTERLOCK_AIRFLOW_PASS":
		return password, true
	}
	return "", false
}

// fakeAirflow speaks the Airflow 2 stable REST API (/api/v1) for the
// parts Interlock uses: create a DAG run, get a DAG run. Errors are
// application/problem+json as Airflow sends them; their detail echoes the
// request's Authorization header (Airflow does not, a careless proxy
// might), so a runner that passes answers on unredacted is caught.
type fakeAirflow struct {
	mu        sync.Mutex
	dags      map[string]bool
	runs      map[string]string // dag_id/dag_run_id → state
	confs     map[string]json.RawMessage
	start     int    // status for the next create (0: normal)
	state     string // state reported for every run (default "queued")
	getStatus int    // status for gets (0: normal)
	loseReply bool   // create the run, then answer 500 (the answer is lost on the way)
	startAuth []string
	pollAuth  []string
}

func newFake(t *testing.T) (*fakeAirflow, *httptest.Server) {
	f := &fakeAirflow{dags: map[string]bool{"gold_revenue": true, "with space": true}, runs: map[string]string{}, confs: map[string]json.RawMessage{}}
	mux := nethttp.NewServeMux()
	mux.HandleFunc("POST /api/v1/dags/{dag_id}/dagRuns", f.create)
	mux.HandleFunc("GET /api/v1/dags/{dag_id}/dagRuns/{dag_run_id}", f.get)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

func problem(w nethttp.ResponseWriter, r *nethttp.Request, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type":  "https://airflow.apache.org/docs/apache-airflow/2.9.3/stable-rest-api-ref.html#section/Errors/" + strings.ReplaceAll(title, " ", ""),
		"title": title, "status": status, "detail": detail + " (request had Authorization: " + r.Header.Get("Authorization") + ") " + triggertest.Echo(secret, url.UserPassword("etl", password)),
	})
}

func (f *fakeAirflow) authorized(w nethttp.ResponseWriter, r *nethttp.Request) bool {
	if r.Header.Get("Authorization") != auth {
		problem(w, r, nethttp.StatusUnauthorized, "Unauthorized", "No credentials found")
		return false
	}
	return true
}

func (f *fakeAirflow) create(w nethttp.ResponseWriter, r *nethttp.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.startAuth = append(f.startAuth, r.Header.Get("Authorization"))
	if !f.authorized(w, r) {
		return
	}
	switch f.start {
	case nethttp.StatusTooManyRequests:
		problem(w, r, f.start, "Too Many Requests", "rate limit exceeded")
		return
	case nethttp.StatusInternalServerError:
		problem(w, r, f.start, "Internal Server Error", "database is locked")
		return
	}
	dagID := r.PathValue("dag_id")
	if !f.dags[dagID] {
		problem(w, r, nethttp.StatusNotFound, "DAG not found", "DAG with dag_id: '"+dagID+"' not found")
		return
	}
	var body struct {
		DagRunID string          `json:"dag_run_id"`
		Conf     json.RawMessage `json:"conf"`
	}
	if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&body) != nil {
		problem(w, r, nethttp.StatusBadRequest, "Bad Request", "invalid body")
		return
	}
	if body.DagRunID == "" {
		body.DagRunID = "manual__2026-03-10T05:00:00+00:00"
	}
	key := dagID + "/" + body.DagRunID
	if _, dup := f.runs[key]; dup {
		problem(w, r, nethttp.StatusConflict, "Conflict", "DAGRun with DAG ID: '"+dagID+"' and DAGRun ID: '"+body.DagRunID+"' already exists")
		return
	}
	f.runs[key], f.confs[key] = "queued", body.Conf
	if f.loseReply {
		f.loseReply = false
		problem(w, r, nethttp.StatusInternalServerError, "Internal Server Error", "worker lost")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"dag_id": dagID, "dag_run_id": body.DagRunID, "state": "queued", "conf": body.Conf,
		"external_trigger": true, "logical_date": "2026-03-10T05:00:00+00:00", "run_type": "manual",
	})
}

func (f *fakeAirflow) get(w nethttp.ResponseWriter, r *nethttp.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pollAuth = append(f.pollAuth, r.Header.Get("Authorization"))
	if !f.authorized(w, r) {
		return
	}
	if f.getStatus != 0 {
		problem(w, r, f.getStatus, nethttp.StatusText(f.getStatus), "status as told")
		return
	}
	dagID, runID := r.PathValue("dag_id"), r.PathValue("dag_run_id")
	if _, ok := f.runs[dagID+"/"+runID]; !ok {
		problem(w, r, nethttp.StatusNotFound, "DAGRun not found", "DAGRun with DAG ID: '"+dagID+"' and DagRun ID: '"+runID+"' not found")
		return
	}
	state := f.state
	if state == "" {
		state = "queued"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"dag_id": dagID, "dag_run_id": runID, "state": state})
}

// with changes the fake's behaviour while it may be serving.
func (f *fakeAirflow) with(change func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change()
}

func (f *fakeAirflow) set(start int, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.start, f.state = start, state
}

func runner(t *testing.T, srv *httptest.Server) airflow.Runner {
	return airflow.Runner{Client: httpxtest.Client(t, srv), LookupEnv: env}
}

func config(srv *httptest.Server, extra string) string {
	return `{url: "` + srv.URL + `", dagId: gold_revenue, headers: {Authorization: "Bearer ${env:INTERLOCK_AIRFLOW_TOKEN}"}` + extra + `}`
}

func TestContract(t *testing.T) {
	triggertest.Run(t, func(t *testing.T) *triggertest.Harness {
		f, srv := newFake(t)
		last := func(s *[]string) string {
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(*s) == 0 {
				return ""
			}
			return (*s)[len(*s)-1]
		}
		return &triggertest.Harness{
			Runner:    runner(t, srv),
			NewRunner: func() trigger.Runner { return runner(t, srv) },
			Request:   httpxtest.Request(t, pipeline.JobAirflow, strings.Replace(config(srv, `, body: '{"date": "${DATE}"}'`), "http://", "http://etl:${env:INTERLOCK_AIRFLOW_PASS}@", 1)),
			Set: func(start, status triggertest.Mode) {
				f.set(map[triggertest.Mode]int{
					triggertest.StartThrottled:   nethttp.StatusTooManyRequests,
					triggertest.StartServerError: nethttp.StatusInternalServerError,
				}[start], map[triggertest.Mode]string{
					triggertest.JobRunning: "running", triggertest.JobSucceeded: "success", triggertest.JobFailed: "failed",
				}[status])
				f.with(func() {
					// start-rejected: DAG not found (404)
					f.dags["gold_revenue"] = start != triggertest.StartRejected
					f.runs = map[string]string{} // each start is a new run here
				})
			},
			Secret:    secret,
			Userinfo:  url.UserPassword("etl", password),
			StartAuth: func() string { return last(&f.startAuth) },
			PollAuth: func() []string {
				f.mu.Lock()
				defer f.mu.Unlock()
				return append([]string(nil), f.pollAuth...)
			},
			// A DAG run has no timed-out state: dagrun_timeout marks it failed.
			Supports: func(m triggertest.Mode) bool { return m != triggertest.JobTimedOut },
		}
	})
}

func TestStartOnTheWire(t *testing.T) {
	f, srv := newFake(t)
	req := httpxtest.Request(t, pipeline.JobAirflow, config(srv, `, body: '{"date": "${DATE}", "hour": "${HOUR}"}'`))
	st, err := runner(t, srv).Start(t.Context(), req)
	if err != nil || st.Result != nil {
		t.Fatalf("Start = %+v, %v", st, err)
	}
	want := map[string]string{airflow.MetaURL: srv.URL, airflow.MetaDagID: "gold_revenue", airflow.MetaDagRunID: req.RunID}
	if st.JobRunID != req.RunID || len(st.Meta) != len(want) {
		t.Fatalf("Started = %+v", st)
	}
	for k, v := range want {
		if st.Meta[k] != v {
			t.Errorf("Meta[%s] = %q, want %q", k, st.Meta[k], v)
		}
	}
	var conf string
	f.with(func() { conf = string(f.confs["gold_revenue/"+req.RunID]) })
	if conf != `{"date":"2026-03-10","hour":"05"}` {
		t.Fatalf("conf = %s", conf)
	}
}

func TestPathSegmentsAreEscaped(t *testing.T) {
	_, srv := newFake(t)
	req := httpxtest.Request(t, pipeline.JobAirflow, `{url: "`+srv.URL+`/", dagId: "with space", headers: {Authorization: "Bearer ${env:INTERLOCK_AIRFLOW_TOKEN}"}}`)
	req.RunID = "" // Airflow names the run: manual__…+00:00
	r := runner(t, srv)
	st, err := r.Start(t.Context(), req)
	if err != nil || st.JobRunID != "manual__2026-03-10T05:00:00+00:00" {
		t.Fatalf("Start = %+v, %v", st, err)
	}
	req.JobRunID, req.Meta = st.JobRunID, st.Meta
	if res, err := r.Poll(t.Context(), req); err != nil || res.Status != trigger.StatusRunning {
		t.Fatalf("Poll = %+v, %v", res, err)
	}
}

// TestRetriedStartAdoptsTheRunItCreated: the first call created the DAG
// run but its answer was lost (500); the engine retries with the same run
// id, Airflow answers 409, and the job is started once, not twice.
func TestRetriedStartAdoptsTheRunItCreated(t *testing.T) {
	f, srv := newFake(t)
	f.with(func() { f.loseReply = true })
	req := httpxtest.Request(t, pipeline.JobAirflow, config(srv, ""))
	r := runner(t, srv)
	if _, err := r.Start(t.Context(), req); err == nil {
		t.Fatal("the lost answer was not an error")
	}
	st, err := r.Start(t.Context(), req)
	if err != nil || st.Result != nil || st.JobRunID != req.RunID {
		t.Fatalf("retry: Start = %+v, %v", st, err)
	}
	f.with(func() {
		if len(f.runs) != 1 {
			t.Fatalf("%d DAG runs, want 1", len(f.runs))
		}
	})
	req.JobRunID, req.Meta = st.JobRunID, st.Meta
	if res, err := r.Poll(t.Context(), req); err != nil || res.Status != trigger.StatusRunning {
		t.Fatalf("Poll = %+v, %v", res, err)
	}
}

func TestPollStateMapping(t *testing.T) {
	cases := []struct {
		state    string
		status   trigger.Status
		category run.Category
	}{
		{"queued", trigger.StatusRunning, ""},
		{"running", trigger.StatusRunning, ""},
		{"success", trigger.StatusSucceeded, ""},
		{"failed", trigger.StatusFailed, run.Transient},
		{"restarting", trigger.StatusRunning, ""}, // not a DAG run state in Airflow 2: taken as not finished
	}
	f, srv := newFake(t)
	req := httpxtest.Request(t, pipeline.JobAirflow, config(srv, ""))
	r := runner(t, srv)
	st, err := r.Start(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.JobRunID, req.Meta = st.JobRunID, st.Meta
	for _, c := range cases {
		f.set(0, c.state)
		res, err := r.Poll(t.Context(), req)
		if err != nil || res.Status != c.status || res.Category != c.category {
			t.Errorf("%s: Poll = %+v, %v", c.state, res, err)
		}
		if c.status == trigger.StatusFailed && !strings.Contains(res.Message, "DAG gold_revenue run "+req.RunID+" failed") {
			t.Errorf("%s: message %q", c.state, res.Message)
		}
	}
}

func TestStartClassification(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(f *fakeAirflow)
		config string
		err    bool
		want   string // in the failed PERMANENT message
	}{
		{"unknown DAG is permanent", func(f *fakeAirflow) { delete(f.dags, "gold_revenue") }, "", false, "status 404"},
		{"bad credentials are permanent", nil, `{url: "%s", dagId: gold_revenue, headers: {Authorization: "Bearer wrong-${env:INTERLOCK_AIRFLOW_TOKEN}"}}`, false, "status 401"},
		{"throttling is an error", func(f *fakeAirflow) { f.start = 429 }, "", true, "status 429"},
		{"5xx is an error", func(f *fakeAirflow) { f.start = 500 }, "", true, "status 500"},
		{"conf that is not an object is permanent, nothing sent", nil, `{url: "%s", dagId: gold_revenue, body: '["${DATE}"]'}`, false, "conf must be a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, srv := newFake(t)
			if c.setup != nil {
				f.with(func() { c.setup(f) })
			}
			cfg := config(srv, "")
			if c.config != "" {
				cfg = strings.Replace(c.config, "%s", srv.URL, 1)
			}
			st, err := runner(t, srv).Start(t.Context(), httpxtest.Request(t, pipeline.JobAirflow, cfg))
			if c.err {
				if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), secret) {
					t.Fatalf("Start = %+v, %v; want an error with %q", st, err, c.want)
				}
				return
			}
			if err != nil || st.Result == nil || st.Result.Category != run.Permanent || !strings.Contains(st.Result.Message, c.want) || strings.Contains(st.Result.Message, secret) {
				t.Fatalf("Start = %+v, %v; want failed PERMANENT with %q", st.Result, err, c.want)
			}
		})
	}
}

func TestPollClassification(t *testing.T) {
	f, srv := newFake(t)
	req := httpxtest.Request(t, pipeline.JobAirflow, config(srv, ""))
	r := runner(t, srv)
	st, err := r.Start(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.JobRunID, req.Meta = st.JobRunID, st.Meta
	for _, status := range []int{401, 403, 429, 500, 503} {
		f.with(func() { f.getStatus = status })
		if res, err := r.Poll(t.Context(), req); err == nil {
			t.Errorf("poll answered %d: %+v, want an error (status unknown, poll again)", status, res)
		}
	}
	f.with(func() { f.getStatus, f.runs = 0, map[string]string{} }) // the DAG run was deleted
	res, err := r.Poll(t.Context(), req)
	if err != nil || res.Status != trigger.StatusFailed || res.Category != run.Permanent || !strings.Contains(res.Message, "disappeared") {
		t.Fatalf("deleted run: %+v, %v", res, err)
	}
	if _, err := r.Poll(t.Context(), trigger.Request{Config: req.Config, JobRunID: "x"}); err == nil {
		t.Fatal("a poll without Meta succeeded")
	}
}

// TestPollGoesWhereTheRunStarted: the config's URL changed after the
// start; the run is still polled on the Airflow that has it.
func TestPollGoesWhereTheRunStarted(t *testing.T) {
	_, srv := newFake(t)
	_, other := newFake(t)
	req := httpxtest.Request(t, pipeline.JobAirflow, config(srv, ""))
	st, err := runner(t, srv).Start(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	moved := httpxtest.Request(t, pipeline.JobAirflow, config(other, ""))
	moved.JobRunID, moved.Meta = st.JobRunID, st.Meta
	if res, err := runner(t, srv).Poll(t.Context(), moved); err != nil || res.Status != trigger.StatusRunning {
		t.Fatalf("Poll = %+v, %v", res, err)
	}
}

// TestBasicAuthInTheURL: user info in the URL authenticates start and
// polls; the stored Meta has no password.
func TestBasicAuthInTheURL(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		u, p, _ := r.BasicAuth()
		mu.Lock()
		seen = append(seen, u+":"+p)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"dag_run_id": "r1", "state": "running"}`))
	}))
	t.Cleanup(srv.Close)
	req := httpxtest.Request(t, pipeline.JobAirflow, `{url: "http://etl:${env:INTERLOCK_AIRFLOW_PASS}@`+strings.TrimPrefix(srv.URL, "http://")+`", dagId: d}`)
	r := runner(t, srv)
	st, err := r.Start(t.Context(), req)
	if err != nil || strings.Contains(st.Meta[airflow.MetaURL], password) || strings.Contains(st.Meta[airflow.MetaURL], "etl") {
		t.Fatalf("Start = %+v, %v", st, err)
	}
	req.JobRunID, req.Meta = st.JobRunID, st.Meta
	if _, err := r.Poll(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != "etl:"+password || seen[1] != seen[0] {
		t.Fatalf("basic auth seen: %q", seen)
	}
}
