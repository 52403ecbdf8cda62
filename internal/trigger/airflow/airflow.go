// Package airflow runs an Airflow 2 DAG as a pipeline's job, through the
// stable REST API: POST /api/v1/dags/{dag_id}/dagRuns starts a DAG run,
// GET /api/v1/dags/{dag_id}/dagRuns/{dag_run_id} reads its state. Every
// call goes through httpx (SSRF guard, timeout, redaction) and sends the
// configured headers, status polls included.
package airflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
)

// Meta keys of a started DAG run. Together with the JobRunID (the
// dag_run_id) they are all a poll needs, in any process.
const (
	MetaURL      = "airflow_url" // base URL without credentials
	MetaDagID    = "airflow_dag_id"
	MetaDagRunID = "airflow_dag_run_id"
)

// Runner starts and polls DAG runs (its fields: httpx.JobClient).
type Runner httpx.JobClient

var _ trigger.Runner = Runner{}

// dagRun is the part of Airflow's DAGRun object Interlock reads.
type dagRun struct {
	DagRunID string `json:"dag_run_id"`
	State    string `json:"state"`
}

// Start creates a DAG run whose dag_run_id is Interlock's run id, so the
// call is idempotent: the engine retries a call that failed on the way
// (timeout, 5xx), and when the first one did create the run Airflow
// answers the retry with 409 Conflict, which is taken as "started" instead
// of running the DAG twice. The body's JSON object is the run's conf.
//
//	2xx                  started; the answer must carry dag_run_id
//	409                  started: the run with this id exists
//	408, 429, 5xx        error (infrastructure, retried)
//	network error, timeout error (retried)
//	other 3xx and 4xx    failed PERMANENT: bad conf, unknown DAG, no permission
//	refused address      failed PERMANENT (SSRF guard)
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	x := httpx.NewJobExpander(req, r.LookupEnv)
	api, dagID, body, err := startCall(req, x)
	if err != nil {
		return rejected("airflow: request not sent: " + x.Secrets.Line(err.Error(), secret.MaxError)), nil
	}
	call := api.Call(http.MethodPost, nil, body, "api", "v1", "dags", dagID, "dagRuns")
	id := req.RunID
	var exists []int // 409: the run with this id exists, so the call started it
	if id != "" {
		exists = []int{http.StatusConflict}
	}
	resp, refused, err := httpx.Start(ctx, r.Client, call, x.Secrets, "airflow", "DAG run not created: ", exists...)
	switch {
	case refused != nil:
		return trigger.Started{Result: refused}, nil
	case err != nil:
		return trigger.Started{}, err
	case resp.Status != http.StatusConflict:
		var dr dagRun
		if json.Unmarshal(resp.Body, &dr) != nil || dr.DagRunID == "" {
			return trigger.Started{}, fmt.Errorf("airflow: unexpected answer, no dag_run_id: %s", httpx.Describe(call, resp, x.Secrets))
		}
		id = dr.DagRunID
	}
	return trigger.Started{JobRunID: id, Meta: map[string]string{
		MetaURL: api.Stored(), MetaDagID: dagID, MetaDagRunID: id,
	}}, nil
}

// Poll reads the DAG run's state:
//
//	queued, running      running
//	success              succeeded
//	failed               failed TRANSIENT: the DAG run's state says no more,
//	                     so a failure is not known to be permanent
//	any other state      running (Airflow 2 has no other DAG run state)
//	404                  failed PERMANENT: the DAG run disappeared (deleted,
//	                     or the URL now points at another Airflow)
//	other status, network error, timeout   error: status unknown, poll again
func (r Runner) Poll(ctx context.Context, req trigger.Request) (trigger.Result, error) {
	if req.JobRunID == "" || req.Meta[MetaURL] == "" || req.Meta[MetaDagID] == "" {
		return trigger.Result{}, fmt.Errorf("airflow: the job has no dag_run_id, %s or %s to poll", MetaURL, MetaDagID)
	}
	x := httpx.NewJobExpander(req, r.LookupEnv)
	api, err := httpx.NewAPI(x, req.Config, "url", req.Meta[MetaURL])
	if err != nil {
		return trigger.Result{}, x.Secrets.Err(fmt.Errorf("airflow: %w", err))
	}
	dagID := req.Meta[MetaDagID]
	call := api.Call(http.MethodGet, nil, nil, "api", "v1", "dags", dagID, "dagRuns", req.JobRunID)
	resp, err := r.Client.Do(ctx, call, x.Secrets)
	if err != nil {
		return trigger.Result{}, fmt.Errorf("airflow: %w", err)
	}
	switch s := resp.Status; {
	case s >= 200 && s <= 299:
	case s == http.StatusNotFound:
		return trigger.Result{Status: trigger.StatusFailed, Category: run.Permanent,
			Message: "airflow: the DAG run disappeared: " + httpx.Describe(call, resp, x.Secrets)}, nil
	default:
		return trigger.Result{}, fmt.Errorf("airflow: %s", httpx.Describe(call, resp, x.Secrets))
	}
	var dr dagRun
	if json.Unmarshal(resp.Body, &dr) != nil || dr.State == "" {
		return trigger.Result{}, fmt.Errorf("airflow: unexpected answer, no state: %s", httpx.Describe(call, resp, x.Secrets))
	}
	switch dr.State {
	case "success":
		return trigger.Result{Status: trigger.StatusSucceeded}, nil
	case "failed":
		return trigger.Result{Status: trigger.StatusFailed, Category: run.Transient,
			Message: x.Secrets.Line(fmt.Sprintf("airflow: DAG %s run %s failed", dagID, req.JobRunID), httpx.MaxSnippet)}, nil
	default: // queued, running
		return trigger.Result{Status: trigger.StatusRunning}, nil
	}
}

// startCall expands the config: the API, the DAG id and the request body
// {"dag_run_id": …, "conf": …}.
func startCall(req trigger.Request, x *httpx.Expander) (httpx.API, string, []byte, error) {
	api, err := httpx.NewAPI(x, req.Config, "url", "")
	if err != nil {
		return httpx.API{}, "", nil, err
	}
	dagID, err := x.Str("dagId", req.Config.Str("dagId"))
	if err != nil {
		return httpx.API{}, "", nil, err
	}
	var conf json.RawMessage
	if req.Config.Has("body") {
		b, err := x.Str("body", req.Config.Str("body"))
		if err != nil {
			return httpx.API{}, "", nil, err
		}
		if b = strings.TrimSpace(b); !json.Valid([]byte(b)) || b[0] != '{' {
			return httpx.API{}, "", nil, errors.New("job.config.body: the DAG run's conf must be a JSON object once variables are replaced")
		}
		conf = json.RawMessage(b)
	}
	body, err := json.Marshal(struct {
		DagRunID string          `json:"dag_run_id,omitempty"`
		Conf     json.RawMessage `json:"conf,omitempty"`
	}{req.RunID, conf})
	return api, dagID, body, err
}

func rejected(msg string) trigger.Started {
	return trigger.Started{Result: &trigger.Result{Status: trigger.StatusFailed, Category: run.Permanent, Message: msg}}
}
