package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/alert/openlineage"
)

// fakeMarquez takes OpenLineage RunEvents as Marquez does.
type fakeMarquez struct {
	*httptest.Server
	mu     sync.Mutex
	events []openlineage.RunEvent
}

func newFakeMarquez(t *testing.T, key string) *fakeMarquez {
	m := &fakeMarquez{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/lineage" || r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var ev openlineage.RunEvent
		if err := json.Unmarshal(b, &ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.events = append(m.events, ev)
		m.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(m.Close)
	return m
}

// of returns the events of job in arrival order, as "TYPE/interlock event".
func (m *fakeMarquez) of(job string) ([]string, []openlineage.RunEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	var evs []openlineage.RunEvent
	for _, e := range m.events {
		if e.Job.Name == job {
			names = append(names, e.EventType+"/"+string(e.Run.Facets.Interlock.Event))
			evs = append(evs, e)
		}
	}
	return names, evs
}

// TestOpenLineageSinkAgainstServe: a real serve with an openlineage sink
// posts each run of its pipelines to a Marquez stand-in: the orders
// pipeline (started by Airflow's lineage event) and gold (opened by
// orders' success) each get their verdicts, START with the period's
// nominal time and COMPLETE, under one run id per period; gold's START
// names orders' run as its parent.
func TestOpenLineageSinkAgainstServe(t *testing.T) {
	t.Parallel()
	marquez := newFakeMarquez(t, "marquez-key-1")
	orders, gold := newFakeAirflow(t), newFakeAirflow(t)
	orders.set("success")
	gold.set("success")
	dir := t.TempDir()
	write := projectWriter(t, dir)
	write("interlock.yaml", fmt.Sprintf(`store: sqlite:./state.db
pipelines: ./pipelines
triggers: {allowAddresses: [127.0.0.1/32]}
alerts:
  - {type: openlineage, url: %q, tokenEnv: MARQUEZ_API_KEY, namespace: interlock-e2e}
`, marquez.URL))
	write("pipelines/orders.yaml", lineagePipeline("orders", "UTC",
		`{key: orders-loaded, job: {namespace: airflow-prod, name: orders_dag.load_orders}}`,
		`{key: orders-loaded, check: equals, field: eventType, value: COMPLETE}`,
		`[{key: orders-loaded, check: gte, field: rowCount, value: 1000}]`, orders.URL))
	write("pipelines/gold.yaml", fmt.Sprintf(`pipeline: {id: gold, owner: analytics}
validation:
  rules: [{check: upstream, pipeline: orders}]
job:
  type: airflow
  config: {url: %q, dagId: gold}
  pollInterval: 1s
`, gold.URL))
	srv := start(t, dir, []string{"MARQUEZ_API_KEY=marquez-key-1"})
	defer srv.stop(t)
	if code, body := request(t, "POST", srv.url+"/api/v1/lineage", "", olEvent(t, "airflow-complete.json")); code != http.StatusOK {
		t.Fatalf("lineage event: %d %s", code, body)
	}
	eventually(t, "both runs' COMPLETE at Marquez", func() bool {
		o, _ := marquez.of("orders")
		g, _ := marquez.of("gold")
		return len(o) >= 3 && len(g) >= 3 && o[len(o)-1] == "COMPLETE/JOB_COMPLETED" && g[len(g)-1] == "COMPLETE/JOB_COMPLETED"
	})
	for _, job := range []string{"orders", "gold"} {
		names, evs := marquez.of(job)
		if fmt.Sprint(names) != "[OTHER/VALIDATION_PASSED START/JOB_TRIGGERED COMPLETE/JOB_COMPLETED]" {
			t.Fatalf("%s: Marquez got %v", job, names)
		}
		runID := openlineage.RunID("interlock-e2e", job, "2026-11-20")
		for _, e := range evs {
			if e.Run.RunID != runID || e.Job.Namespace != "interlock-e2e" || e.Run.Facets.Interlock.Period != "2026-11-20" || e.Producer != openlineage.Producer {
				t.Fatalf("%s: event %+v, want run %s of period 2026-11-20", job, e, runID)
			}
		}
		nt := evs[1].Run.Facets.NominalTime
		if nt == nil || nt.NominalStartTime != "2026-11-20T00:00:00Z" || nt.NominalEndTime != "2026-11-21T00:00:00Z" {
			t.Fatalf("%s: START's nominalTime %+v", job, nt)
		}
	}
	_, g := marquez.of("gold")
	if p := g[1].Run.Facets.Parent; p == nil || p.Job.Name != "orders" || p.Run.RunID != openlineage.RunID("interlock-e2e", "orders", "2026-11-20") {
		t.Fatalf("gold's START parent %+v, want orders' run of 2026-11-20", p)
	}
	_, o := marquez.of("orders")
	if o[1].Run.Facets.Parent != nil {
		t.Fatalf("orders' START has a parent %+v: a lineage event started it", o[1].Run.Facets.Parent)
	}
}
