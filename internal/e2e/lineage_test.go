package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// olEvent reads an OpenLineage RunEvent of internal/lineage/testdata, as
// its producer sends it.
func olEvent(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../lineage/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lineagePipeline runs DAG gold of the Airflow at url when its rules on
// lineage events pass.
func lineagePipeline(id, zone, lineage, trigger, rules, url string) string {
	return fmt.Sprintf(`pipeline: {id: %s, owner: analytics}
schedule:
  timezone: %s
  trigger: %s
validation:
  rules: %s
lineage:
  - %s
job:
  type: airflow
  config: {url: %q, dagId: gold}
  pollInterval: 1s
`, id, zone, trigger, rules, lineage, url)
}

// TestOpenLineageEventsAgainstServe: Airflow, dbt-ol and Spark post their
// RunEvents to a real `interlock serve` at OPENLINEAGE_URL/api/v1/lineage
// with the writer's token as api_key; the runs are those the rules say —
// the orders report and the sessions build start, the quality gate starts
// on a dbt test run with no failed assertion, the big-orders report (its
// rule wants more rows than Airflow wrote) does not. A replay of every
// event changes nothing; invalid and oversized events are refused.
func TestOpenLineageEventsAgainstServe(t *testing.T) {
	t.Parallel()
	report, big, gate, sessions := newFakeAirflow(t), newFakeAirflow(t), newFakeAirflow(t), newFakeAirflow(t)
	dir := t.TempDir()
	write := projectWriter(t, dir)
	write("interlock.yaml", `store: sqlite:./state.db
pipelines: ./pipelines
server:
  maxBodyBytes: 65536
  tokens:
    - {name: lineage, role: writer, tokenEnv: INTERLOCK_WRITER_TOKEN}
    - {name: dash, role: reader, tokenEnv: INTERLOCK_READER_TOKEN}
triggers: {allowAddresses: [127.0.0.1/32]}
`)
	airflowJob := `{key: orders-loaded, job: {namespace: airflow-prod, name: orders_dag.load_orders}}`
	completed := `{key: orders-loaded, check: equals, field: eventType, value: COMPLETE}`
	write("pipelines/report.yaml", lineagePipeline("orders-report", "UTC", airflowJob, completed,
		`[{key: orders-loaded, check: gte, field: rowCount, value: 1000}]`, report.URL))
	write("pipelines/big.yaml", lineagePipeline("big-orders", "UTC", airflowJob, completed,
		`[{key: orders-loaded, check: gte, field: rowCount, value: 100000}]`, big.URL))
	write("pipelines/gate.yaml", lineagePipeline("quality-gate", "America/New_York",
		`{key: orders-tested, job: {namespace: dbt-prod, name: jaffle_shop.test.not_null_orders_order_id}}`,
		`{key: orders-tested, check: equals, field: eventType, value: COMPLETE}`,
		`[{key: orders-tested, check: equals, field: assertionsFailed, value: 0}, {key: orders-tested, check: gte, field: assertions, value: 1}]`, gate.URL))
	write("pipelines/sessions.yaml", lineagePipeline("sessions", "Europe/Berlin",
		`{key: sessions-written, dataset: {namespace: "s3a://warehouse", name: /sessions}}`,
		`{key: sessions-written, check: equals, field: eventType, value: COMPLETE}`,
		`[{key: sessions-written, check: gte, field: rowCount, value: 40000}]`, sessions.URL))
	srv := start(t, dir, []string{"INTERLOCK_WRITER_TOKEN=ol-writer-secret", "INTERLOCK_READER_TOKEN=ol-reader-secret"})
	defer srv.stop(t)
	lineageURL := srv.url + "/api/v1/lineage" // OPENLINEAGE_URL=srv.url, the transport's default endpoint

	if code, body := request(t, "POST", lineageURL, "", olEvent(t, "airflow-start.json")); code != http.StatusUnauthorized {
		t.Fatalf("no api_key: %d %s, want 401", code, body)
	}
	if code, body := request(t, "POST", lineageURL, "ol-reader-secret", olEvent(t, "airflow-start.json")); code != http.StatusForbidden {
		t.Fatalf("a reader's key: %d %s, want 403", code, body)
	}
	events := []struct{ file, wants string }{
		{"airflow-start.json", `"key":"orders-loaded#2026-11-20"`},
		{"airflow-complete.json", `"key":"orders-loaded#2026-11-20"`},
		// dbt-ol sends no nominalTime: the event time, 03:12 UTC on the
		// 21st, is the 20th in New York.
		{"dbt-test-complete.json", `"key":"orders-tested#2026-11-20"`},
		{"spark-complete.json", `"key":"sessions-written#2026-11-21"`},
	}
	for _, e := range events {
		code, body := request(t, "POST", lineageURL, "ol-writer-secret", olEvent(t, e.file))
		if code != http.StatusOK || !strings.Contains(body, e.wants) || !strings.Contains(body, `"changed":true`) {
			t.Fatalf("%s: %d %s, want 200 writing %s", e.file, code, body, e.wants)
		}
	}
	eventually(t, "the orders report, quality gate and sessions jobs to start", func() bool {
		return report.count() == 1 && gate.count() == 1 && sessions.count() == 1
	})
	if big.count() != 0 {
		t.Fatalf("big-orders started with 15230 rows, its rule wants 100000")
	}
	triggered := func() string {
		var out []string
		for _, id := range []string{"orders-report", "big-orders", "quality-gate", "sessions"} {
			code, body := request(t, "GET", srv.url+"/v1/events?pipeline="+id+"&limit=1000", "ol-reader-secret", "")
			if code != http.StatusOK {
				t.Fatalf("events of %s: %d %s", id, code, body)
			}
			out = append(out, fmt.Sprintf("%s:%d:%d", id, strings.Count(body, `"JOB_TRIGGERED"`), strings.Count(body, `"detail-type"`)))
		}
		return strings.Join(out, " ")
	}
	before := triggered()
	if !strings.HasPrefix(before, "orders-report:1:") || !strings.Contains(before, "big-orders:0:") || !strings.Contains(before, "quality-gate:1:") || !strings.Contains(before, "sessions:1:") {
		t.Fatalf("JOB_TRIGGERED per pipeline: %s", before)
	}

	// Every event again, as a producer's retry would: nothing changes.
	for _, e := range events {
		code, body := request(t, "POST", lineageURL, "ol-writer-secret", olEvent(t, e.file))
		if code != http.StatusOK || strings.Contains(body, `"changed":true`) || !strings.Contains(body, `"stale":true`) {
			t.Fatalf("replay of %s: %d %s, want stale and unchanged", e.file, code, body)
		}
	}
	if after := triggered(); after != before {
		t.Fatalf("a replay changed the events: before %s, after %s", before, after)
	}
	if report.count()+gate.count()+sessions.count()+big.count() != 3 {
		t.Fatal("a replay started a job")
	}

	// An event nobody listens to is acknowledged, not stored.
	other := strings.ReplaceAll(olEvent(t, "airflow-complete.json"), "orders_dag.load_orders", "other_dag.task")
	other = strings.ReplaceAll(other, "analytics.public.orders", "analytics.public.other")
	if code, body := request(t, "POST", lineageURL, "ol-writer-secret", other); code != http.StatusAccepted || !strings.Contains(body, `"matched":false`) {
		t.Fatalf("unmatched: %d %s, want 202", code, body)
	}
	// Malformed and oversized.
	bad := strings.Replace(olEvent(t, "spark-complete.json"), `"eventTime": "2026-11-21T04:31:55.902Z"`, `"eventTime": "21/11/2026"`, 1)
	if code, body := request(t, "POST", lineageURL, "ol-writer-secret", bad); code != http.StatusBadRequest || !strings.Contains(body, "eventTime") {
		t.Fatalf("malformed: %d %s, want 400 naming eventTime", code, body)
	}
	huge := strings.Replace(olEvent(t, "spark-complete.json"), `"facets": {}`, `"facets": {"pad": "`+strings.Repeat("x", 70000)+`"}`, 1)
	if code, body := request(t, "POST", lineageURL, "ol-writer-secret", huge); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized: %d %s, want 413", code, body)
	}
	code, metrics := request(t, "GET", srv.url+"/metrics", "ol-reader-secret", "")
	if code != http.StatusOK || !strings.Contains(metrics, `interlock_lineage_events_total{outcome="unmatched"} 1`) || !strings.Contains(metrics, `interlock_lineage_events_total{outcome="written"} 4`) {
		t.Fatalf("/metrics: %d, want 4 written and 1 unmatched lineage events", code)
	}

	// explain names the event behind the quality gate's rules.
	cmd := exec.Command(binary, "explain", "quality-gate", "--period", "2026-11-20", "--server", srv.url)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "INTERLOCK_TOKEN=ol-reader-secret")
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("interlock explain: %v\n%s", err, out)
	}
	t.Logf("explain:\n%s", out)
	if n := strings.Count(out, "from OpenLineage COMPLETE of dbt-prod/jaffle_shop.test.not_null_orders_order_id, run 6a1f0c4e-2b7d-4e39-8a51-93f0d2c7b6e4"); n != 2 {
		t.Fatalf("explain names the dbt event %d times, want twice (the trigger, and once for the two rules on its sensor):\n%s", n, out)
	}
}
