package airflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
)

var _ trigger.Finder = Runner{}

// Find looks up the DAG run an interrupted trigger call may have created:
// Start names the DAG run after Interlock's run id (dag_run_id), so
// GET /api/v1/dags/{dag_id}/dagRuns/{run id} reads exactly the run this
// attempt's call created, if it did, and nothing else.
//
//	2xx with that dag_run_id  found: the DAG run is adopted and polled
//	404                       not found: the call created nothing (an
//	                          unknown DAG answers 404 too; the retried
//	                          start then fails as Start says)
//	any other answer, network error, timeout   error: ask again later
//
// A not-found that was wrong (a proxy's 404) cannot run the DAG twice:
// the retried start reuses the dag_run_id, which Airflow answers with 409.
func (r Runner) Find(ctx context.Context, req trigger.Request) (trigger.Started, bool, error) {
	if req.RunID == "" {
		return trigger.Started{}, false, errors.New("airflow: the request has no run id, so no dag_run_id to look up")
	}
	x := httpx.NewJobExpander(req, r.LookupEnv)
	api, err := httpx.NewAPI(x, req.Config, "url", "")
	if err != nil {
		return trigger.Started{}, false, x.Secrets.Err(fmt.Errorf("airflow: %w", err))
	}
	dagID, err := x.Str("dagId", req.Config.Str("dagId"))
	if err != nil {
		return trigger.Started{}, false, x.Secrets.Err(fmt.Errorf("airflow: %w", err))
	}
	call := api.Call(http.MethodGet, nil, nil, "api", "v1", "dags", dagID, "dagRuns", req.RunID)
	resp, err := r.Client.Do(ctx, call, x.Secrets)
	if err != nil {
		return trigger.Started{}, false, fmt.Errorf("airflow: %w", err)
	}
	switch s := resp.Status; {
	case s >= 200 && s <= 299:
	case s == http.StatusNotFound:
		return trigger.Started{}, false, nil
	default:
		return trigger.Started{}, false, fmt.Errorf("airflow: %s", httpx.Describe(call, resp, x.Secrets))
	}
	var dr dagRun
	if json.Unmarshal(resp.Body, &dr) != nil || dr.DagRunID != req.RunID {
		return trigger.Started{}, false, fmt.Errorf("airflow: unexpected answer, not DAG run %s: %s", req.RunID, httpx.Describe(call, resp, x.Secrets))
	}
	return trigger.Started{JobRunID: dr.DagRunID, Meta: map[string]string{
		MetaURL: api.Stored(), MetaDagID: dagID, MetaDagRunID: dr.DagRunID,
	}}, true, nil
}
