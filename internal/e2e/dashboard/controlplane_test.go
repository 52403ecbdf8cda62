package dashboard_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/chromedp/chromedp"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/awsrt"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/sensor"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/testenv/browser"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
	"github.com/interlockhq/interlock/internal/testenv/ddbstream"
	"github.com/interlockhq/interlock/internal/testenv/serveproc"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/command"
)

// TestDashboardOnAWSControlPlane: the dashboard of an AWS deployment's
// control plane (the built `interlock serve --store dynamodb://…` on
// DynamoDB Local tables that `interlock deploy-config` loaded) renders the
// deployment's pipelines in Chromium, and a rerun pressed on a pipeline
// page starts a Step Functions execution: the stream-router, fed the
// control table's stream as its event source mapping feeds it, starts one
// for the reopened run's step timer (against a fake speaking Step
// Functions' StartExecution, through the real SDK).
func TestDashboardOnAWSControlPlane(t *testing.T) {
	ctx := t.Context()
	endpoint := ddblocal.Endpoint(t)
	c := ddblocal.Client(t)
	prefix := ddblocal.Prefix(t)
	tables := ddbstore.TablesFor(prefix)
	if err := ddbstore.CreateTables(ctx, c, tables); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ddbstore.DeleteTables(context.Background(), c, tables) })
	st, err := ddbstore.Open(ctx, ddbstore.Config{Client: c, Tables: tables})
	if err != nil {
		t.Fatal(err)
	}
	deployment := "dynamodb://" + prefix + "?endpoint=" + endpoint
	awsEnv := []string{"AWS_ACCESS_KEY_ID=ddblocal", "AWS_SECRET_ACCESS_KEY=ddblocal", "AWS_REGION=" + ddblocal.Region, "AWS_EC2_METADATA_DISABLED=true"}

	// Deployed as a user deploys: interlock deploy-config.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pipelines"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "pipeline: {id: gold-revenue, owner: analytics}\nschedule: {trigger: {key: upstream, check: exists}}\n" +
		"job: {type: command, config: {command: [\"false\"], timeout: 1m}, maxCodeRetries: 0}\n"
	if err := os.WriteFile(filepath.Join(dir, "pipelines", "gold-revenue.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	deploy := exec.Command(binary, "deploy-config", "pipelines", "--server", deployment)
	deploy.Dir, deploy.Env = dir, append(os.Environ(), awsEnv...)
	if out, err := deploy.CombinedOutput(); err != nil {
		t.Fatalf("deploy-config: %v\n%s", err, out)
	}

	// The stream-router on the control table's stream, starting executions
	// on the fake.
	fake := awsfake.NewStepFunctions(t)
	machine := fake.AddStateMachine("interlock-runs")
	passive := engine.New(engine.Options{Store: st, Clock: clock.Real{}, Passive: true})
	if err := passive.Open(ctx); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	router := &awsrt.Router{Engine: passive, Store: st, Tables: tables, Log: quiet,
		Executions: &awsrt.ExecutionStarter{Client: sfn.NewFromConfig(awsfake.Config(fake.URL)), StateMachineARN: machine, Store: st, Log: quiet}}
	arn, err := ddbstream.StreamARN(ctx, c, tables.Control)
	if err != nil {
		t.Fatal(err)
	}
	mapping := ddbstream.New(ddbstream.FromDynamoDB(c), arn, 10, func(ctx context.Context, payload []byte) ([]byte, error) {
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, err
		}
		resp, err := router.Handle(ctx, ev)
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	})
	drain := func() {
		t.Helper()
		if _, err := mapping.Drain(ctx, 50); err != nil {
			t.Fatal(err)
		}
	}

	// The period's first run, taken to its end as the deployment's
	// orchestrator would: the job fails for good (exit 1, no retries).
	jobs := engine.New(engine.Options{Store: st, Clock: clock.Real{}, Passive: true, Jobs: trigger.Registry{"command": command.Runner{}}})
	if err := jobs.Open(ctx); err != nil {
		t.Fatal(err)
	}
	put, err := jobs.PutSensor(ctx, "gold-revenue", "upstream", sensor.NewObject(map[string]sensor.Value{"ok": sensor.BoolValue(true)}))
	if err != nil {
		t.Fatal(err)
	}
	key := run.Key{PipelineID: "gold-revenue", ScheduleID: "stream", Period: put.Period}
	for deadline := time.Now().Add(time.Minute); ; {
		r, err := st.RunGet(ctx, key)
		if err == nil && r.State.Terminal() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first run did not end: %+v %v", r, err)
		}
		step, err := st.TimerGet(ctx, "step/"+key.PipelineID+"/"+key.ScheduleID+"/"+key.Period)
		if err == nil && !step.DueAt.After(time.Now()) {
			if err := jobs.ProcessTimer(ctx, step); err != nil {
				t.Fatal(err)
			}
			continue
		}
		time.Sleep(20 * time.Millisecond) // its next step is due within moments (its announced second)
	}
	drain() // the first run's records: its execution started then
	started := len(fake.Executions())

	// The control plane's dashboard, in Chromium.
	srv := serveproc.Start(t, binary, t.TempDir(), awsEnv, "--store", deployment)
	b := browser.New(t)
	b.Open(srv.URL + "/")
	b.WaitFor("the deployed pipeline on the overview", `!!document.querySelector('a[href="/ui/pipelines/gold-revenue"]')`)
	b.Open(srv.URL + "/ui/pipelines/gold-revenue")
	b.Do(chromedp.SetValue(chromedp.ID("rerun-reason"), "from the control plane"))
	b.Do(chromedp.Click(chromedp.ID("action-rerun")))
	b.WaitFor("the rerun's answer", `['done', 'refused', 'error'].includes(document.getElementById('action-result').dataset.result)`)
	if r := browser.Eval[string](b, `document.getElementById('action-result').dataset.result + ': ' + document.getElementById('action-result').textContent`); !strings.HasPrefix(r, "done") {
		t.Fatalf("the rerun from the control plane's page: %s", r)
	}

	// The reopened run's step timer reaches the router through the stream:
	// one execution more, of the run's next generation.
	for deadline := time.Now().Add(time.Minute); len(fake.Executions()) <= started; {
		if time.Now().After(deadline) {
			t.Fatalf("no execution started for the rerun (%d before, %d now)", started, len(fake.Executions()))
		}
		drain()
	}
	exs := fake.Executions()
	r, err := st.RunGet(ctx, key)
	if err != nil || r.Generation != 1 {
		t.Fatalf("the rerun's run: %+v %v, want generation 1", r, err)
	}
	if last := exs[len(exs)-1]; !strings.Contains(last.Name, "-g1-") {
		t.Fatalf("the execution started is %s, want one of generation 1", last.Name)
	}
	b.Screenshot("aws-control-plane-pipeline")
}
