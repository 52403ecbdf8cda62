package lineage_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/lineage"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/sensor"
)

func mustParse(t *testing.T, file string) lineage.Event {
	t.Helper()
	body, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := lineage.Parse(body)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return ev
}

func mustPipeline(t *testing.T, doc string) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.ParsePipeline("p.yaml", []byte(doc), pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParseProducers reads the event shapes of Airflow, dbt and Spark:
// the fields Interlock maps, every other facet ignored.
func TestParseProducers(t *testing.T) {
	a := mustParse(t, "airflow-complete.json")
	if a.Type != lineage.Complete || a.RunID != "01936b1e-3a9c-7d1e-9f4b-2c6a1e0d5b01" ||
		a.Job != (lineage.Name{Namespace: "airflow-prod", Name: "orders_dag.load_orders"}) ||
		!a.NominalStart.Equal(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) ||
		!a.Time.Equal(time.Date(2026, 11, 21, 2, 9, 47, 118305000, time.UTC)) ||
		!strings.Contains(a.Producer, "airflow") {
		t.Fatalf("airflow: %+v", a)
	}
	if len(a.Outputs) != 1 || *a.Outputs[0].RowCount != 15230 || *a.Outputs[0].Bytes != 1843200 || len(a.Inputs) != 1 || a.Inputs[0].RowCount != nil {
		t.Fatalf("airflow datasets: %+v", a)
	}
	d := mustParse(t, "dbt-test-complete.json")
	if !d.NominalStart.IsZero() || len(d.Inputs) != 1 || len(d.Inputs[0].Assertions) != 3 || !d.Inputs[0].Assertions[1].Success || d.Inputs[0].Assertions[1].Assertion != "unique" {
		t.Fatalf("dbt: %+v", d)
	}
	s := mustParse(t, "spark-complete.json")
	if s.Outputs[0].Name != (lineage.Name{Namespace: "s3a://warehouse", Name: "/sessions"}) || *s.Outputs[0].RowCount != 48211 {
		t.Fatalf("spark: %+v", s)
	}
	if st := mustParse(t, "airflow-start.json"); st.Type != lineage.Start {
		t.Fatalf("airflow start: %+v", st)
	}
}

// TestParseRefusesNamingTheField: each invalid event is refused with an
// error naming the field at fault.
func TestParseRefusesNamingTheField(t *testing.T) {
	const ok = `"eventTime":"2026-11-21T02:00:00Z","producer":"p","run":{"runId":"r1"},"job":{"namespace":"n","name":"j"}`
	for _, tc := range []struct{ name, body, field string }{
		{"empty", ``, "body is empty"},
		{"not json", `{"eventType":`, "not valid JSON"},
		{"array", `[1]`, "want a JSON object"},
		{"two values", `{` + ok + `} {}`, "more than one JSON value"},
		{"unknown type", `{"eventType":"DONE",` + ok + `}`, "field eventType"},
		{"no time", `{"producer":"p","run":{"runId":"r1"},"job":{"namespace":"n","name":"j"}}`, "field eventTime: missing"},
		{"bad time", `{"eventTime":"2026-11-21 02:00","producer":"p","run":{"runId":"r1"},"job":{"namespace":"n","name":"j"}}`, "field eventTime"},
		{"time without offset", `{"eventTime":"2026-11-21T02:00:00","producer":"p","run":{"runId":"r1"},"job":{"namespace":"n","name":"j"}}`, "field eventTime"},
		{"no run", `{"eventTime":"2026-11-21T02:00:00Z","producer":"p","job":{"namespace":"n","name":"j"}}`, "field run: missing"},
		{"empty run id", `{"eventTime":"2026-11-21T02:00:00Z","producer":"p","run":{"runId":" "},"job":{"namespace":"n","name":"j"}}`, "field run.runId"},
		{"run id a number", `{"eventTime":"2026-11-21T02:00:00Z","producer":"p","run":{"runId":5},"job":{"namespace":"n","name":"j"}}`, "field run.runId: want a string"},
		{"no job name", `{"eventTime":"2026-11-21T02:00:00Z","producer":"p","run":{"runId":"r"},"job":{"namespace":"n"}}`, "field job.name: missing"},
		{"no producer", `{"eventTime":"2026-11-21T02:00:00Z","run":{"runId":"r"},"job":{"namespace":"n","name":"j"}}`, "field producer: missing"},
		{"bad nominal", `{` + ok[:len(ok)-len(`"run":{"runId":"r1"},"job":{"namespace":"n","name":"j"}`)] + `"run":{"runId":"r1","facets":{"nominalTime":{"nominalStartTime":"yesterday"}}},"job":{"namespace":"n","name":"j"}}`, "field run.facets.nominalTime.nominalStartTime"},
		{"negative rows", `{` + ok + `,"outputs":[{"namespace":"d","name":"t","outputFacets":{"outputStatistics":{"rowCount":-1}}}]}`, "field outputs[0].outputFacets.outputStatistics.rowCount"},
		{"fractional rows", `{` + ok + `,"outputs":[{"namespace":"d","name":"t","outputFacets":{"outputStatistics":{"rowCount":1.5}}}]}`, "rowCount: want a whole number"},
		{"output without name", `{` + ok + `,"outputs":[{"namespace":"d"}]}`, "field outputs[0].name: missing"},
		{"assertion without success", `{` + ok + `,"inputs":[{"namespace":"d","name":"t","inputFacets":{"dataQualityAssertions":{"assertions":[{"assertion":"x"}]}}}]}`, "field inputs[0].inputFacets.dataQualityAssertions.assertions[0].success: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lineage.Parse([]byte(tc.body))
			if err == nil || !errors.Is(err, lineage.ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %v, want one naming %q", err, tc.field)
			}
		})
	}
	ev, err := lineage.Parse([]byte(`{` + ok + `}`))
	if err != nil || ev.Type != lineage.Other {
		t.Fatalf("no eventType: %+v %v, want OTHER", ev, err)
	}
}

const berlin = `pipeline: {id: orders}
schedule:
  timezone: Europe/Berlin
  trigger: {key: orders-loaded, check: equals, field: eventType, value: COMPLETE}
lineage:
  - {key: orders-loaded, job: {namespace: airflow-prod, name: orders_dag.load_orders}}
  - {key: orders-table, dataset: {namespace: "postgres://warehouse:5432", name: analytics.public.orders}}
  - {key: orders-tested, dataset: {namespace: "postgres://warehouse:5432", name: analytics.public.customers}}
job: {type: glue, config: {jobName: x}}
`

// TestPeriod: the nominal start time when the event has one, else the
// event time; on the pipeline's wall clock; hours for an hourly pipeline.
func TestPeriod(t *testing.T) {
	p := mustPipeline(t, berlin)
	a := mustParse(t, "airflow-complete.json") // nominal 2026-11-20T00:00Z
	if got := lineage.Period(p, a).String(); got != "2026-11-20" {
		t.Fatalf("airflow: period %s, want the nominal date 2026-11-20", got)
	}
	a.NominalStart = time.Date(2026, 11, 20, 23, 30, 0, 0, time.UTC) // 00:30 on the 21st in Berlin
	if got := lineage.Period(p, a).String(); got != "2026-11-21" {
		t.Fatalf("nominal start late on the 20th UTC: period %s, want Berlin's 2026-11-21", got)
	}
	a.NominalStart = time.Time{}
	a.Time = time.Date(2026, 11, 21, 23, 10, 0, 0, time.UTC) // 00:10 on the 22nd in Berlin
	if got := lineage.Period(p, a).String(); got != "2026-11-22" {
		t.Fatalf("no nominal time: period %s, want the event time's Berlin date 2026-11-22", got)
	}
	hourly := mustPipeline(t, `pipeline: {id: h}
schedule: {cron: "15 * * * *", timezone: Europe/Berlin}
lineage: [{key: k, job: {namespace: a, name: b}}]
job: {type: glue, config: {jobName: x}}
`)
	if got := lineage.Period(hourly, a).String(); got != "2026-11-22T00" {
		t.Fatalf("hourly: period %s, want 2026-11-22T00", got)
	}
	if k := lineage.SensorKey(p.Lineage[0], lineage.Period(hourly, a)); k != "orders-loaded#2026-11-22T00" {
		t.Fatalf("key %s", k)
	}
}

// TestMatchesAndSensorData: a job source matches its job; a dataset
// source an event that writes the dataset. The sensor carries the
// documented fields, counts from the selected datasets only.
func TestMatchesAndSensorData(t *testing.T) {
	p := mustPipeline(t, berlin)
	a := mustParse(t, "airflow-complete.json")
	m := lineage.Matches(p, a)
	if len(m) != 2 || m[0].Key != "orders-loaded" || m[1].Key != "orders-table" {
		t.Fatalf("airflow matches %+v, want orders-loaded and orders-table", m)
	}
	elsewhere := a
	elsewhere.Job.Namespace = "airflow-staging"
	elsewhere.Outputs = nil
	if m := lineage.Matches(p, elsewhere); len(m) != 0 {
		t.Fatalf("the same job name in another namespace matched %+v", m)
	}
	data := lineage.SensorData(m[0], a)
	for field, want := range map[string]sensor.Value{
		"eventType":        sensor.StringValue("COMPLETE"),
		"eventTime":        sensor.StringValue("2026-11-21T02:09:47.118305Z"),
		"runId":            sensor.StringValue("01936b1e-3a9c-7d1e-9f4b-2c6a1e0d5b01"),
		"jobNamespace":     sensor.StringValue("airflow-prod"),
		"jobName":          sensor.StringValue("orders_dag.load_orders"),
		"producer":         sensor.StringValue("https://github.com/apache/airflow/tree/providers-openlineage/1.14.0"),
		"nominalStartTime": sensor.StringValue("2026-11-20T00:00:00Z"),
		"rowCount":         sensor.IntValue(15230),
		"bytes":            sensor.IntValue(1843200),
	} {
		if got, ok := data.Get(field); !ok || !got.Equal(want) {
			t.Errorf("field %s = %v (present %v), want %v", field, got, ok, want)
		}
	}
	if _, ok := data.Get("assertions"); ok {
		t.Error("assertions present without a dataQualityAssertions facet: a rule on it would pass on nothing")
	}
	// The dbt test reads the orders table: no dataset source matches an
	// input, and no job source names it.
	d := mustParse(t, "dbt-test-complete.json")
	if m := lineage.Matches(p, d); len(m) != 0 {
		t.Fatalf("dbt test matched %+v: a dataset source matches outputs only", m)
	}
	d.Inputs[0].Assertions[2].Success = false
	data = lineage.SensorData(pipeline.LineageSource{Key: "q", Job: &pipeline.LineageName{Namespace: "dbt-prod", Name: d.Job.Name}}, d)
	if n, _ := data.Get("assertions"); !n.Equal(sensor.IntValue(3)) {
		t.Errorf("assertions %v, want 3", n)
	}
	if n, _ := data.Get("assertionsFailed"); !n.Equal(sensor.IntValue(1)) {
		t.Errorf("assertionsFailed %v, want 1", n)
	}
	if _, ok := data.Get("rowCount"); ok {
		t.Error("rowCount present though no dataset reports one")
	}
	// A dataset source counts its own dataset only.
	a.Outputs = append(a.Outputs, lineage.Dataset{Name: lineage.Name{Namespace: "postgres://warehouse:5432", Name: "other"}, RowCount: ptr(7)})
	if n, _ := lineage.SensorData(m[1], a).Get("rowCount"); !n.Equal(sensor.IntValue(15230)) {
		t.Errorf("dataset source rowCount %v, want its own 15230", n)
	}
	if n, _ := lineage.SensorData(m[0], a).Get("rowCount"); !n.Equal(sensor.IntValue(15237)) {
		t.Errorf("job source rowCount %v, want the sum 15237", n)
	}
}

func ptr(n int64) *int64 { return &n }

// TestStale: idempotent by run id and event type; a run's start after its
// end, and an event older than the stored one, change nothing.
func TestStale(t *testing.T) {
	ev := func(run string, typ lineage.EventType, at string) sensor.Object {
		tm, _ := time.Parse(time.RFC3339, at)
		return lineage.SensorData(pipeline.LineageSource{Key: "k", Job: &pipeline.LineageName{Namespace: "n", Name: "j"}},
			lineage.Event{Type: typ, Time: tm, RunID: run, Job: lineage.Name{Namespace: "n", Name: "j"}, Producer: "p"})
	}
	stored := ev("r1", lineage.Complete, "2026-11-21T02:00:00Z")
	for _, tc := range []struct {
		name   string
		stored *sensor.Object
		in     sensor.Object
		stale  bool
	}{
		{"nothing stored", nil, ev("r1", lineage.Start, "2026-11-21T01:00:00Z"), false},
		{"replay", &stored, ev("r1", lineage.Complete, "2026-11-21T02:00:00Z"), true},
		{"same run and type, later", &stored, ev("r1", lineage.Complete, "2026-11-21T03:00:00Z"), true},
		{"start after complete", &stored, ev("r1", lineage.Start, "2026-11-21T02:30:00Z"), true},
		{"fail after complete, later", &stored, ev("r1", lineage.Fail, "2026-11-21T02:30:00Z"), false},
		{"new run", &stored, ev("r2", lineage.Start, "2026-11-21T05:00:00Z"), false},
		{"older run replayed", &stored, ev("r0", lineage.Complete, "2026-11-20T02:00:00Z"), true},
		{"stored by a PUT", ptrObj(sensor.NewObject(map[string]sensor.Value{"count": sensor.IntValue(1)})), ev("r0", lineage.Complete, "2026-11-20T02:00:00Z"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lineage.Stale(tc.stored, tc.in); got != tc.stale {
				t.Fatalf("Stale = %v, want %v", got, tc.stale)
			}
		})
	}
	running := ev("r1", lineage.Running, "2026-11-21T01:30:00Z")
	if lineage.Stale(&running, ev("r1", lineage.Complete, "2026-11-21T02:00:00Z")) {
		t.Fatal("COMPLETE after RUNNING of the same run judged stale")
	}
}

func ptrObj(o sensor.Object) *sensor.Object { return &o }

// TestEventOf: explain names the event of a lineage source's sensor
// only: not one under another key, not a plain key, not other data.
func TestEventOf(t *testing.T) {
	p := mustPipeline(t, berlin)
	a := mustParse(t, "airflow-complete.json")
	data := lineage.SensorData(p.Lineage[0], a)
	ref, ok := lineage.EventOf(p, "orders-loaded#2026-11-20", data)
	if !ok || ref.RunID != a.RunID || ref.EventType != "COMPLETE" || ref.Job != "airflow-prod/orders_dag.load_orders" || ref.Producer != a.Producer || ref.EventTime != "2026-11-21T02:09:47.118305Z" {
		t.Fatalf("EventOf = %+v, %v", ref, ok)
	}
	for _, key := range []string{"orders-landed#2026-11-20", "orders-loaded", "orders-loaded#eu"} {
		if _, ok := lineage.EventOf(p, key, data); ok {
			t.Errorf("key %s: named a lineage event", key)
		}
	}
	if _, ok := lineage.EventOf(p, "orders-loaded#2026-11-20", sensor.NewObject(map[string]sensor.Value{"eventType": sensor.StringValue("COMPLETE")})); ok {
		t.Error("a sensor without the event's fields named a lineage event")
	}
}
