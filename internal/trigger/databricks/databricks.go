// Package databricks runs an existing Databricks job as a pipeline's job,
// through the Jobs API 2.1: POST /api/2.1/jobs/run-now starts a run of the
// job, GET /api/2.1/jobs/runs/get?run_id=… reads its state. Every call goes
// through httpx (SSRF guard, timeout, redaction) and sends the configured
// headers, status polls included.
//
// The reference called runs/submit with run_name set to the job id. That
// endpoint submits a one-time run of the tasks in the request: it sent
// none, so it never ran the configured job. run-now runs the job by id with
// its own tasks, clusters and permissions, and it takes an idempotency
// token, which makes a retried call safe.
package databricks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
)

// Meta keys of a started run. Together with the JobRunID (the run_id)
// they are all a poll needs, in any process.
const (
	MetaWorkspaceURL = "databricks_workspace_url" // without credentials
	MetaJobID        = "databricks_job_id"
	MetaRunID        = "databricks_run_id"
)

// Runner starts and polls job runs (its fields: httpx.JobClient).
type Runner httpx.JobClient

var _ trigger.Runner = Runner{}

// Start runs the job now. The idempotency token is Interlock's run id (its
// SHA-256 when longer than the 64 characters Databricks accepts), which
// stays the same when the engine retries a failed call: if the first call
// did start a run, Databricks answers the retry with that run instead of
// starting another.
//
//	2xx                  started; the answer must carry run_id
//	408, 429, 5xx        error (infrastructure, retried)
//	network error, timeout error (retried)
//	other 3xx and 4xx    failed PERMANENT: unknown job, bad parameters, no permission
//	refused address      failed PERMANENT (SSRF guard)
//	jobId not an integer failed PERMANENT, nothing sent
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	x := httpx.NewJobExpander(req, r.LookupEnv)
	api, jobID, body, err := startCall(req, x)
	if err != nil {
		return rejected("databricks: request not sent: " + x.Secrets.Line(err.Error(), secret.MaxError)), nil
	}
	call := api.Call(http.MethodPost, nil, body, "api", "2.1", "jobs", "run-now")
	resp, refused, err := httpx.Start(ctx, r.Client, call, x.Secrets, "databricks", "run not started: ")
	switch {
	case refused != nil:
		return trigger.Started{Result: refused}, nil
	case err != nil:
		return trigger.Started{}, err
	}
	var started struct {
		RunID int64 `json:"run_id"`
	}
	if json.Unmarshal(resp.Body, &started) != nil || started.RunID <= 0 {
		return trigger.Started{}, fmt.Errorf("databricks: unexpected answer, no run_id: %s", httpx.Describe(call, resp, x.Secrets))
	}
	id := strconv.FormatInt(started.RunID, 10)
	return trigger.Started{JobRunID: id, Meta: map[string]string{
		MetaWorkspaceURL: api.Stored(), MetaJobID: strconv.FormatInt(jobID, 10), MetaRunID: id,
	}}, nil
}

// runState is the part of runs/get's answer Interlock reads.
type runState struct {
	State struct {
		LifeCycleState string `json:"life_cycle_state"`
		ResultState    string `json:"result_state"`
		StateMessage   string `json:"state_message"`
	} `json:"state"`
}

// lifeCycle maps state.life_cycle_state. TERMINATED is judged by
// result_state (results); a life cycle not listed is taken as not
// finished, as Databricks adds waiting states over time.
var lifeCycle = map[string]trigger.Result{
	"PENDING":           {Status: trigger.StatusRunning},
	"QUEUED":            {Status: trigger.StatusRunning},
	"RUNNING":           {Status: trigger.StatusRunning},
	"TERMINATING":       {Status: trigger.StatusRunning},
	"BLOCKED":           {Status: trigger.StatusRunning},
	"WAITING_FOR_RETRY": {Status: trigger.StatusRunning},
	// The run was never started (e.g. the job's maximum of concurrent
	// runs was reached): run again, the same thing is expected to happen.
	"SKIPPED": {Status: trigger.StatusFailed, Category: run.Permanent},
	// Databricks failed, not the job: worth another try.
	"INTERNAL_ERROR": {Status: trigger.StatusFailed, Category: run.Transient},
}

// results maps state.result_state of a TERMINATED run. A result not
// listed (or none) is a poll error: the run has ended but how is unknown,
// so it is not retried automatically; the poll window closes and a person
// decides (product spec §3b).
var results = map[string]trigger.Result{
	"SUCCESS": {Status: trigger.StatusSucceeded},
	"FAILED":  {Status: trigger.StatusFailed, Category: run.Transient},
	// Some tasks failed and the job allowed it: for the data downstream
	// this is not a clean success.
	"SUCCESS_WITH_FAILURES": {Status: trigger.StatusFailed, Category: run.Transient},
	"UPSTREAM_FAILED":       {Status: trigger.StatusFailed, Category: run.Transient},
	"TIMEDOUT":              {Status: trigger.StatusFailed, Category: run.Timeout},
	// Someone cancelled the run: retrying on our own would overrule them.
	"CANCELED":                        {Status: trigger.StatusFailed, Category: run.Permanent},
	"CANCELLED":                       {Status: trigger.StatusFailed, Category: run.Permanent},
	"UPSTREAM_CANCELED":               {Status: trigger.StatusFailed, Category: run.Permanent},
	"MAXIMUM_CONCURRENT_RUNS_REACHED": {Status: trigger.StatusFailed, Category: run.Permanent},
}

// Poll reads the run's state (tables lifeCycle and results); a failed
// run's message is "databricks: LIFE_CYCLE/RESULT: state_message".
//
//	400, 404             failed PERMANENT: the run disappeared. Databricks
//	                     answers 400 INVALID_PARAMETER_VALUE "Run N does not
//	                     exist." for an unknown run, and run_id — a number
//	                     Databricks gave us — is the only parameter.
//	other status, network error, timeout   error: status unknown, poll again
func (r Runner) Poll(ctx context.Context, req trigger.Request) (trigger.Result, error) {
	if _, err := strconv.ParseInt(req.JobRunID, 10, 64); err != nil || req.Meta[MetaWorkspaceURL] == "" {
		return trigger.Result{}, fmt.Errorf("databricks: the job has no numeric run_id or no %s to poll", MetaWorkspaceURL)
	}
	x := httpx.NewJobExpander(req, r.LookupEnv)
	api, err := httpx.NewAPI(x, req.Config, "workspaceUrl", req.Meta[MetaWorkspaceURL])
	if err != nil {
		return trigger.Result{}, x.Secrets.Err(fmt.Errorf("databricks: %w", err))
	}
	call := api.Call(http.MethodGet, url.Values{"run_id": {req.JobRunID}}, nil, "api", "2.1", "jobs", "runs", "get")
	resp, err := r.Client.Do(ctx, call, x.Secrets)
	if err != nil {
		return trigger.Result{}, fmt.Errorf("databricks: %w", err)
	}
	switch s := resp.Status; {
	case s >= 200 && s <= 299:
	case s == http.StatusBadRequest || s == http.StatusNotFound:
		return trigger.Result{Status: trigger.StatusFailed, Category: run.Permanent,
			Message: "databricks: the run disappeared: " + httpx.Describe(call, resp, x.Secrets)}, nil
	default:
		return trigger.Result{}, fmt.Errorf("databricks: %s", httpx.Describe(call, resp, x.Secrets))
	}
	var rs runState
	if json.Unmarshal(resp.Body, &rs) != nil || rs.State.LifeCycleState == "" {
		return trigger.Result{}, fmt.Errorf("databricks: unexpected answer, no state: %s", httpx.Describe(call, resp, x.Secrets))
	}
	st := rs.State
	res, listed := lifeCycle[st.LifeCycleState]
	if !listed {
		res = trigger.Result{Status: trigger.StatusRunning}
	}
	known := true
	if st.LifeCycleState == "TERMINATED" {
		res, known = results[st.ResultState]
	}
	state := st.LifeCycleState
	if st.ResultState != "" {
		state += "/" + st.ResultState
	}
	if st.StateMessage != "" {
		state += ": " + st.StateMessage
	}
	state = httpx.Snippet([]byte(state), x.Secrets)
	if !known {
		return trigger.Result{}, fmt.Errorf("databricks: run %s ended with a result Interlock does not know: %s", req.JobRunID, state)
	}
	if res.Status == trigger.StatusFailed {
		res.Message = "databricks: " + state
	}
	return res, nil
}

// startCall expands the config: the API, the job id and the request body
// {"job_id": …, "notebook_params": …, "idempotency_token": …}.
func startCall(req trigger.Request, x *httpx.Expander) (httpx.API, int64, []byte, error) {
	api, err := httpx.NewAPI(x, req.Config, "workspaceUrl", "")
	if err != nil {
		return httpx.API{}, 0, nil, err
	}
	raw, err := x.Str("jobId", req.Config.Str("jobId"))
	if err != nil {
		return httpx.API{}, 0, nil, err
	}
	jobID, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || jobID <= 0 {
		return httpx.API{}, 0, nil, fmt.Errorf("job.config.jobId: %q is not a job id (a positive integer)", raw)
	}
	params, err := x.Map("arguments", req.Config.Map("arguments"))
	if err != nil {
		return httpx.API{}, 0, nil, err
	}
	body, err := json.Marshal(struct {
		JobID            int64             `json:"job_id"`
		NotebookParams   map[string]string `json:"notebook_params,omitempty"`
		IdempotencyToken string            `json:"idempotency_token,omitempty"`
	}{jobID, params, idempotencyToken(req.RunID)})
	return api, jobID, body, err
}

// idempotencyToken is runID, or its SHA-256 when longer than Databricks'
// limit of 64 characters.
func idempotencyToken(runID string) string {
	if len(runID) <= 64 {
		return runID
	}
	sum := sha256.Sum256([]byte(runID))
	return hex.EncodeToString(sum[:])
}

func rejected(msg string) trigger.Started {
	return trigger.Started{Result: &trigger.Result{Status: trigger.StatusFailed, Category: run.Permanent, Message: msg}}
}
