package databricks_test

import (
	"encoding/json"
	nethttp "net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/databricks"
	"github.com/interlockhq/interlock/internal/trigger/httpx/httpxtest"
	"github.com/interlockhq/interlock/internal/trigger/triggertest"
)

// secret has characters JSON and URL escaping change, so the contract
// kit checks those forms too. The contract's config also carries user
// info (password), which the Authorization header overrides on the wire
// but which must stay secret all the same.
const (
	secret   = `dapi0123 "4567\89ab/+cdef`
	auth     = "Bearer " + secret
	password = "pw-dapi+01;23=45"
)

func env(name string) (string, bool) {
	switch name {
	case "INTERLOCK_DATABRICKS_TOKEN":
		return secret, true
	case "INTERLOCK_DATABRICKS_PASS":
		return password, true
	}
	return "", false
}

// fakeWorkspace speaks the Databricks Jobs API 2.1 for the parts
// Interlock uses: jobs/run-now and jobs/runs/get. Errors are
// {"error_code", "message"} as Databricks sends them; the message echoes
// the request's Authorization header (Databricks does not, a careless
// proxy might), so a runner that passes answers on unredacted is caught.
type fakeWorkspace struct {
	mu        sync.Mutex
	jobs      map[int64]bool
	runs      map[int64]runState
	tokens    map[string]int64 // idempotency_token → run_id
	params    map[int64]map[string]string
	nextRun   int64
	start     int      // status for the next run-now (0: normal)
	state     runState // state reported for every run
	getStatus int      // status for runs/get (0: normal)
	startAuth []string
	pollAuth  []string
}

type runState struct{ life, result, message string }

func newFake(t *testing.T) (*fakeWorkspace, *httptest.Server) {
	f := &fakeWorkspace{jobs: map[int64]bool{42: true}, runs: map[int64]runState{}, tokens: map[string]int64{},
		params: map[int64]map[string]string{}, nextRun: 1000, state: runState{life: "PENDING"}}
	mux := nethttp.NewServeMux()
	mux.HandleFunc("POST /api/2.1/jobs/run-now", f.runNow)
	mux.HandleFunc("GET /api/2.1/jobs/runs/get", f.get)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

func apiError(w nethttp.ResponseWriter, r *nethttp.Request, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error_code": code, "message": msg + " (request had Authorization: " + r.Header.Get("Authorization") + ") " + triggertest.Echo(secret, url.UserPassword("etl", password))})
}

func (f *fakeWorkspace) authorized(w nethttp.ResponseWriter, r *nethttp.Request) bool {
	if r.Header.Get("Authorization") != auth {
		apiError(w, r, nethttp.StatusUnauthorized, "UNAUTHENTICATED", "Invalid access token.")
		return false
	}
	return true
}

func (f *fakeWorkspace) runNow(w nethttp.ResponseWriter, r *nethttp.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.startAuth = append(f.startAuth, r.Header.Get("Authorization"))
	if !f.authorized(w, r) {
		return
	}
	switch f.start {
	case nethttp.StatusTooManyRequests:
		apiError(w, r, f.start, "REQUEST_LIMIT_EXCEEDED", "Too many requests.")
		return
	case nethttp.StatusInternalServerError:
		apiError(w, r, f.start, "INTERNAL_ERROR", "Internal error.")
		return
	}
	var body struct {
		JobID            *int64            `json:"job_id"`
		NotebookParams   map[string]string `json:"notebook_params"`
		IdempotencyToken string            `json:"idempotency_token"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if r.Header.Get("Content-Type") != "application/json" || dec.Decode(&body) != nil || body.JobID == nil {
		apiError(w, r, nethttp.StatusBadRequest, "MALFORMED_REQUEST", "Invalid JSON given in the body of the request.")
		return
	}
	if len(body.IdempotencyToken) > 64 {
		apiError(w, r, nethttp.StatusBadRequest, "INVALID_PARAMETER_VALUE", "idempotency_token is longer than 64 characters.")
		return
	}
	if !f.jobs[*body.JobID] {
		apiError(w, r, nethttp.StatusBadRequest, "INVALID_PARAMETER_VALUE", "Job "+strconv.FormatInt(*body.JobID, 10)+" does not exist.")
		return
	}
	id, dup := f.tokens[body.IdempotencyToken]
	if !dup || body.IdempotencyToken == "" {
		f.nextRun++
		id = f.nextRun
		f.runs[id] = runState{life: "PENDING"}
		f.params[id] = body.NotebookParams
		if body.IdempotencyToken != "" {
			f.tokens[body.IdempotencyToken] = id
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]int64{"run_id": id, "number_in_job": id})
}

func (f *fakeWorkspace) get(w nethttp.ResponseWriter, r *nethttp.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pollAuth = append(f.pollAuth, r.Header.Get("Authorization"))
	if !f.authorized(w, r) {
		return
	}
	if f.getStatus != 0 {
		apiError(w, r, f.getStatus, "TEMPORARILY_UNAVAILABLE", "as told")
		return
	}
	id, err := strconv.ParseInt(r.URL.Query().Get("run_id"), 10, 64)
	if _, ok := f.runs[id]; err != nil || !ok {
		apiError(w, r, nethttp.StatusBadRequest, "INVALID_PARAMETER_VALUE", "Run "+r.URL.Query().Get("run_id")+" does not exist.")
		return
	}
	st := map[string]any{"life_cycle_state": f.state.life, "state_message": f.state.message, "user_cancelled_or_timedout": false}
	if f.state.result != "" {
		st["result_state"] = f.state.result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"job_id": 42, "run_id": id, "number_in_job": id, "state": st,
		"run_page_url": "https://dbc.example.cloud.databricks.com/#job/42/run/" + strconv.FormatInt(id, 10)})
}

func (f *fakeWorkspace) with(change func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change()
}

func runner(t *testing.T, srv *httptest.Server) databricks.Runner {
	return databricks.Runner{Client: httpxtest.Client(t, srv), LookupEnv: env}
}

func config(srv *httptest.Server, extra string) string {
	return `{workspaceUrl: "` + srv.URL + `", jobId: 42, headers: {Authorization: "Bearer ${env:INTERLOCK_DATABRICKS_TOKEN}"}` + extra + `}`
}

func TestContract(t *testing.T) {
	triggertest.Run(t, func(t *testing.T) *triggertest.Harness {
		f, srv := newFake(t)
		return &triggertest.Harness{
			Runner:    runner(t, srv),
			NewRunner: func() trigger.Runner { return runner(t, srv) },
			Request:   httpxtest.Request(t, pipeline.JobDatabricks, strings.Replace(config(srv, `, arguments: {date: "${DATE}"}`), "http://", "http://etl:${env:INTERLOCK_DATABRICKS_PASS}@", 1)),
			Set: func(start, status triggertest.Mode) {
				f.with(func() {
					f.start = map[triggertest.Mode]int{
						triggertest.StartThrottled:   nethttp.StatusTooManyRequests,
						triggertest.StartServerError: nethttp.StatusInternalServerError,
					}[start]
					f.jobs[42] = start != triggertest.StartRejected // start-rejected: the job does not exist
					f.tokens = map[string]int64{}                   // each start is a new run here
					f.state = map[triggertest.Mode]runState{
						triggertest.JobRunning:   {life: "RUNNING", message: "In run"},
						triggertest.JobSucceeded: {life: "TERMINATED", result: "SUCCESS"},
						triggertest.JobFailed:    {life: "TERMINATED", result: "FAILED", message: "Task etl failed with message: boom."},
						triggertest.JobTimedOut:  {life: "TERMINATED", result: "TIMEDOUT", message: "Run timed out"},
					}[status]
				})
			},
			Secret:   secret,
			Userinfo: url.UserPassword("etl", password),
			StartAuth: func() string {
				f.mu.Lock()
				defer f.mu.Unlock()
				if len(f.startAuth) == 0 {
					return ""
				}
				return f.startAuth[len(f.startAuth)-1]
			},
			PollAuth: func() []string {
				f.mu.Lock()
				defer f.mu.Unlock()
				return append([]string(nil), f.pollAuth...)
			},
		}
	})
}

func TestRunNowOnTheWire(t *testing.T) {
	f, srv := newFake(t)
	req := httpxtest.Request(t, pipeline.JobDatabricks, config(srv, `, arguments: {date: "${DATE}", hour: "${HOUR}"}`))
	st, err := runner(t, srv).Start(t.Context(), req)
	if err != nil || st.Result != nil || st.JobRunID != "1001" {
		t.Fatalf("Start = %+v, %v", st, err)
	}
	want := map[string]string{databricks.MetaWorkspaceURL: srv.URL, databricks.MetaJobID: "42", databricks.MetaRunID: "1001"}
	for k, v := range want {
		if st.Meta[k] != v {
			t.Errorf("Meta[%s] = %q, want %q", k, st.Meta[k], v)
		}
	}
	f.with(func() {
		if p := f.params[1001]; p["date"] != "2026-03-10" || p["hour"] != "05" || len(p) != 2 {
			t.Errorf("notebook_params = %v", p)
		}
	})
}

// TestRetriedStartStartsOneRun: the engine retries a start with the same
// run id; the idempotency token makes Databricks answer with the first run.
func TestRetriedStartStartsOneRun(t *testing.T) {
	f, srv := newFake(t)
	req := httpxtest.Request(t, pipeline.JobDatabricks, config(srv, ""))
	r := runner(t, srv)
	a, err1 := r.Start(t.Context(), req)
	b, err2 := r.Start(t.Context(), req)
	if err1 != nil || err2 != nil || a.JobRunID != b.JobRunID {
		t.Fatalf("starts: %+v %v / %+v %v", a, err1, b, err2)
	}
	// A run id longer than Databricks' 64-character limit still works,
	// and stays idempotent.
	req.RunID = strings.Repeat("p", 128) + "-stream-2026-03-10-g0-a1"
	c, err1 := r.Start(t.Context(), req)
	d, err2 := r.Start(t.Context(), req)
	if err1 != nil || err2 != nil || c.JobRunID != d.JobRunID || c.JobRunID == a.JobRunID {
		t.Fatalf("long run id: %+v %v / %+v %v", c, err1, d, err2)
	}
	f.with(func() {
		if len(f.runs) != 2 {
			t.Fatalf("%d runs, want 2", len(f.runs))
		}
	})
}

func TestPollStateMapping(t *testing.T) {
	cases := []struct {
		state    runState
		status   trigger.Status
		category run.Category
		message  string
	}{
		{runState{life: "PENDING"}, trigger.StatusRunning, "", ""},
		{runState{life: "QUEUED"}, trigger.StatusRunning, "", ""},
		{runState{life: "RUNNING"}, trigger.StatusRunning, "", ""},
		{runState{life: "TERMINATING", result: "SUCCESS"}, trigger.StatusRunning, "", ""},
		{runState{life: "BLOCKED"}, trigger.StatusRunning, "", ""},
		{runState{life: "WAITING_FOR_RETRY"}, trigger.StatusRunning, "", ""},
		{runState{life: "SOME_NEW_WAITING_STATE"}, trigger.StatusRunning, "", ""},
		{runState{life: "TERMINATED", result: "SUCCESS"}, trigger.StatusSucceeded, "", ""},
		{runState{life: "TERMINATED", result: "FAILED", message: "Task etl failed"}, trigger.StatusFailed, run.Transient, "databricks: TERMINATED/FAILED: Task etl failed"},
		{runState{life: "TERMINATED", result: "SUCCESS_WITH_FAILURES"}, trigger.StatusFailed, run.Transient, "databricks: TERMINATED/SUCCESS_WITH_FAILURES"},
		{runState{life: "TERMINATED", result: "TIMEDOUT", message: "Run timed out"}, trigger.StatusFailed, run.Timeout, "databricks: TERMINATED/TIMEDOUT: Run timed out"},
		{runState{life: "TERMINATED", result: "CANCELED", message: "Run cancelled by alice"}, trigger.StatusFailed, run.Permanent, "databricks: TERMINATED/CANCELED: Run cancelled by alice"},
		{runState{life: "TERMINATED", result: "CANCELLED"}, trigger.StatusFailed, run.Permanent, "databricks: TERMINATED/CANCELLED"},
		{runState{life: "SKIPPED", message: "An active run already exists"}, trigger.StatusFailed, run.Permanent, "databricks: SKIPPED: An active run already exists"},
		{runState{life: "INTERNAL_ERROR", result: "FAILED", message: "Cluster terminated\n\x1b[31munexpectedly"}, trigger.StatusFailed, run.Transient, "databricks: INTERNAL_ERROR/FAILED: Cluster terminated [31munexpectedly"},
	}
	f, srv := newFake(t)
	req := httpxtest.Request(t, pipeline.JobDatabricks, config(srv, ""))
	r := runner(t, srv)
	st, err := r.Start(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.JobRunID, req.Meta = st.JobRunID, st.Meta
	for _, c := range cases {
		f.with(func() { f.state = c.state })
		res, err := r.Poll(t.Context(), req)
		if err != nil || res.Status != c.status || res.Category != c.category || res.Message != c.message {
			t.Errorf("%+v: Poll = %+v, %v", c.state, res, err)
		}
	}
	// A finished run whose result Interlock does not know is not guessed:
	// the status is unknown, the poll window decides (no automatic retry).
	for _, s := range []runState{{life: "TERMINATED"}, {life: "TERMINATED", result: "SOMETHING_NEW"}} {
		f.with(func() { f.state = s })
		if res, err := r.Poll(t.Context(), req); err == nil {
			t.Errorf("%+v: Poll = %+v, want an error", s, res)
		}
	}
}

func TestStartClassification(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(f *fakeWorkspace)
		config string
		err    bool
		want   string
	}{
		{"unknown job is permanent", func(f *fakeWorkspace) { delete(f.jobs, 42) }, "", false, "Job 42 does not exist"},
		{"bad token is permanent", nil, `{workspaceUrl: "%s", jobId: 42, headers: {Authorization: "Bearer x${env:INTERLOCK_DATABRICKS_TOKEN}"}}`, false, "status 401"},
		{"throttling is an error", func(f *fakeWorkspace) { f.start = 429 }, "", true, "REQUEST_LIMIT_EXCEEDED"},
		{"5xx is an error", func(f *fakeWorkspace) { f.start = 500 }, "", true, "status 500"},
		{"a job id that is not a number is permanent, nothing sent", nil, `{workspaceUrl: "%s", jobId: "nightly-${DATE}"}`, false, `"nightly-2026-03-10" is not a job id`},
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
			st, err := runner(t, srv).Start(t.Context(), httpxtest.Request(t, pipeline.JobDatabricks, cfg))
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
	req := httpxtest.Request(t, pipeline.JobDatabricks, config(srv, ""))
	r := runner(t, srv)
	st, err := r.Start(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.JobRunID, req.Meta = st.JobRunID, st.Meta
	for _, status := range []int{401, 403, 429, 500, 503} {
		f.with(func() { f.getStatus = status })
		if res, err := r.Poll(t.Context(), req); err == nil {
			t.Errorf("runs/get answered %d: %+v, want an error (status unknown, poll again)", status, res)
		}
	}
	f.with(func() { f.getStatus, f.runs = 0, map[int64]runState{} }) // the run was deleted
	res, err := r.Poll(t.Context(), req)
	if err != nil || res.Status != trigger.StatusFailed || res.Category != run.Permanent || !strings.Contains(res.Message, "Run 1001 does not exist") {
		t.Fatalf("deleted run: %+v, %v", res, err)
	}
	if _, err := r.Poll(t.Context(), trigger.Request{Config: req.Config, JobRunID: "abc", Meta: req.Meta}); err == nil {
		t.Fatal("a poll with a run id that is not a number succeeded")
	}
}
