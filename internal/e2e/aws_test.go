package e2e_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/awsrt"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
	"github.com/interlockhq/interlock/internal/testenv/ddbstream"
)

// TestSensorPutIntoAnAWSDeployment: `interlock sensor put` pointed at an
// AWS deployment (--server dynamodb://<prefix>) writes the sensor item a
// user's own PutItem would, and the stream-router decides it like any
// other; a bad body or URL is refused before anything is written.
func TestSensorPutIntoAnAWSDeployment(t *testing.T) {
	endpoint := ddblocal.Endpoint(t)
	ctx := t.Context()
	c := ddblocal.Client(t)
	tables := ddbstore.TablesFor(ddblocal.Prefix(t))
	if err := ddbstore.CreateTables(ctx, c, tables); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ddbstore.DeleteTables(ctx, c, tables) })
	st, err := ddbstore.Open(ctx, ddbstore.Config{Client: c, Tables: tables})
	if err != nil {
		t.Fatal(err)
	}
	// The deployment's router and its pipeline.
	eng := engine.New(engine.Options{Store: st, Clock: clock.Real{}, Passive: true})
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	const orders = "pipeline: {id: orders}\nschedule:\n  trigger: {key: orders-landed, check: equals, field: status, value: ready}\njob: {type: command, config: {command: [\"true\"]}}\n"
	if _, err := eng.ApplyConfig(ctx, "orders.yaml", []byte(orders)); err != nil {
		t.Fatal(err)
	}
	router := &awsrt.Router{Engine: eng, Store: st, Tables: tables}

	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "ddblocal", "AWS_SECRET_ACCESS_KEY": "ddblocal", "AWS_REGION": ddblocal.Region, "AWS_EC2_METADATA_DISABLED": "true"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	server := "dynamodb://" + tables.Control[:len(tables.Control)-len("-control")] + "?endpoint=" + endpoint
	out := mustCLI(t, dir, 0, "sensor", "put", "orders", "orders-landed", `{"status": "ready", "count": 15432}`, "--server", server)
	if !strings.Contains(out, "wrote PIPELINE#orders / SENSOR#orders-landed to table "+tables.Control) {
		t.Fatalf("output: %s", out)
	}
	data, err := st.SensorItemGet(ctx, "orders", "orders-landed")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := data.Get("count"); v.String() != "15432" {
		t.Fatalf("the item holds %v", data)
	}
	js := mustCLI(t, dir, 0, "sensor", "put", "orders", "other", `{"n": 1}`, "--server", server, "--output", "json")
	if doc := decode[map[string]any](t, "sensor put --output json", js); doc["table"] != tables.Control || doc["written"] != true {
		t.Fatalf("json output: %s", js)
	}

	// Refused before writing: a body that is no sensor, a bad key, a bad URL.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sensor", "put", "orders", "bad", `[1, 2]`, "--server", server}, "the sensor body"},
		{[]string{"sensor", "put", "orders", "bad", `{"a": 1, "a": 2}`, "--server", server}, "the sensor body"},
		{[]string{"sensor", "put", "orders", "", `{}`, "--server", server}, "sensor key is empty"},
		{[]string{"sensor", "put", "orders", "bad", `{}`, "--server", "dynamodb://bad prefix"}, "--server"},
		{[]string{"sensor", "put", "orders", "bad", `{}`, "--server", "dynamodb://p?color=red"}, "unknown parameter"},
	} {
		code, _, errOut := cli(t, dir, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("interlock %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
	if _, err := st.SensorItemGet(ctx, "orders", "bad"); err == nil {
		t.Fatal("a refused sensor was written")
	}

	// The router decides it like any other write: the ready sensor starts
	// the period's run.
	arn, err := ddbstream.StreamARN(ctx, c, tables.Control)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ddbstream.New(ddbstream.FromDynamoDB(c), arn, 10, lambda.NewHandler(router.Handle).Invoke).Drain(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Failed > 0 || r.Error != nil {
			t.Fatalf("router: %d failed, %v", r.Failed, r.Error)
		}
	}
	runs, err := st.RunList(ctx, store.RunListParams{PipelineID: "orders"})
	if err != nil || len(runs) != 1 || runs[0].State == run.FailedFinal {
		t.Fatalf("runs after the CLI's sensor: %+v %v", runs, err)
	}
	page, err := st.EventList(ctx, store.EventListParams{PipelineID: "orders", Types: []event.Type{event.SensorRejected}})
	if err != nil || len(page.Events) != 0 {
		t.Fatalf("rejections: %+v %v", page.Events, err)
	}
}
