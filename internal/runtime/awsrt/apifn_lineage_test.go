package awsrt

import (
	"net/http"
	"strings"
	"testing"
)

// TestAPIFunctionTakesLineageEvents: on AWS the api function serves
// POST /api/v1/lineage, the path OpenLineage's HTTP transport posts to:
// the event is written to the deployment's tables as the pipeline's
// per-period sensor, and its replay is stale.
func TestAPIFunctionTakesLineageEvents(t *testing.T) {
	f := newAPIFn(t)
	const loads = `
pipeline: {id: loads, owner: sales}
schedule:
  trigger: {key: orders-loaded, check: equals, field: eventType, value: COMPLETE}
lineage:
  - {key: orders-loaded, job: {namespace: airflow-prod, name: orders_dag.load_orders}}
job: {type: glue, config: {jobName: loads}}
`
	if _, err := f.reader.ApplyConfig(t.Context(), "loads.yaml", []byte(loads)); err != nil {
		t.Fatal(err)
	}
	post := func(token string) (int, string) {
		req := bearerOf(signed("POST", "/api/v1/lineage", ""), token)
		req.Headers["content-type"] = "application/json"
		req.Body = `{"eventType":"COMPLETE","eventTime":"2026-11-21T02:09:47Z","producer":"https://github.com/apache/airflow/tree/providers-openlineage/1.14.0",` +
			`"run":{"runId":"01936b1e-3a9c-7d1e-9f4b-2c6a1e0d5b01","facets":{"nominalTime":{"nominalStartTime":"2026-11-20T00:00:00Z"}}},` +
			`"job":{"namespace":"airflow-prod","name":"orders_dag.load_orders"}}`
		res := f.invoke(t, req)
		return res.StatusCode, res.Body
	}
	if code, body := post(apiReaderToken); code != http.StatusForbidden {
		t.Fatalf("a reader's lineage event: %d %s, want 403", code, body)
	}
	if code, body := post(apiOperatorToken); code != http.StatusOK || !strings.Contains(body, `"key":"orders-loaded#2026-11-20"`) || !strings.Contains(body, `"changed":true`) {
		t.Fatalf("POST /api/v1/lineage: %d %s, want 200 writing orders-loaded#2026-11-20", code, body)
	}
	s, err := f.reader.Store().SensorGet(t.Context(), "loads", "orders-loaded#2026-11-20")
	if err != nil {
		t.Fatalf("the event is not in the tables: %v", err)
	}
	if v, _ := s.Data.Get("eventType"); v.String() != `"COMPLETE"` && v.String() != "COMPLETE" {
		t.Fatalf("stored eventType %v", v)
	}
	if code, body := post(apiOperatorToken); code != http.StatusOK || !strings.Contains(body, `"stale":true`) {
		t.Fatalf("replay: %d %s, want stale", code, body)
	}
}
