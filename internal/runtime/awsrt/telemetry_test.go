package awsrt

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
	"github.com/interlockhq/interlock/internal/testenv/otlptest"
)

// TestFunctionSendsItsSpansWithEachInvocation: a function whose OTEL_*
// environment names a collector traces its decisions — here the api
// function, run as its own process on a local Runtime API, pausing a
// pipeline: the operator action's span, its decision and the DynamoDB
// store's commit under it — and has sent them when the invocation
// returns, although the batch would wait ten minutes (Lambda may freeze
// the process once it has answered). Without the environment it sends
// nothing.
func TestFunctionSendsItsSpansWithEachInvocation(t *testing.T) {
	env, _, sm, arn := apiDeployment(t)
	otlp := otlptest.New(t)
	function := func(tracing bool) *awsfake.Function {
		return awsfake.NewFunction(t, 30*time.Second, func() *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+FnAPI,
				EnvControlTable+"="+env.tables.Control, EnvJobLogTable+"="+env.tables.JobLog, EnvRerunTable+"="+env.tables.Rerun,
				EnvEventsTable+"="+env.tables.Events, EnvAPITokensSecretARN+"="+arn,
				"AWS_ENDPOINT_URL_DYNAMODB="+ddblocal.Endpoint(t), "AWS_ENDPOINT_URL_SECRETS_MANAGER="+sm.URL, "AWS_REGION="+awsfake.Region,
				"AWS_ACCESS_KEY_ID=AKIDFAKE", "AWS_SECRET_ACCESS_KEY=fake-secret", "AWS_EC2_METADATA_DISABLED=true",
				"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
				"OTEL_BSP_SCHEDULE_DELAY=600000", "OTEL_EXPORTER_OTLP_ENDPOINT=")
			if tracing {
				cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.URL, "OTEL_SERVICE_NAME=interlock-api")
			}
			return cmd
		})
	}
	invoke := func(fn *awsfake.Function, path string) {
		t.Helper()
		payload, err := json.Marshal(bearerOf(signed("POST", path, ""), apiOperatorToken))
		if err != nil {
			t.Fatal(err)
		}
		out, err := fn.Invoke(context.Background(), payload)
		if err != nil {
			t.Fatalf("invoke: %v\n%s", err, fn.Logs())
		}
		var res events.LambdaFunctionURLResponse
		if err := json.Unmarshal(out, &res); err != nil || res.StatusCode != 200 {
			t.Fatalf("%s: %s (%v)\n%s", path, out, err, fn.Logs())
		}
	}

	off := function(false)
	off.Start()
	invoke(off, "/v1/pipelines/orders/pause")
	off.Kill()
	if n := len(otlp.Spans()); n != 0 {
		t.Fatalf("without OTEL_EXPORTER_OTLP_ENDPOINT the function exported %d spans", n)
	}

	on := function(true)
	on.Start()
	invoke(on, "/v1/pipelines/orders/resume")
	// No waiting: the spans are there when the invocation has returned.
	spans := otlp.Spans()
	actions := otlptest.Find(spans, "interlock.operator.resume", map[string]string{"interlock.pipeline": "orders"})
	if len(actions) != 1 {
		t.Fatalf("spans at the invocation's return: %v; want the resume's\n%s", otlptest.Names(spans), on.Logs())
	}
	decides := otlptest.Children(spans, actions[0])
	if len(decides) == 0 || decides[0].GetName() != "interlock.decide" {
		t.Fatalf("under the resume: %v", otlptest.Names(decides))
	}
	var commit bool
	for _, s := range otlptest.Children(spans, decides[0]) {
		if s.GetName() == "store.Commit" && otlptest.Attr(s, "db.system.name") == "dynamodb" {
			commit = true
		}
	}
	if !commit {
		t.Errorf("under the decision: %v; want the DynamoDB store's commit", otlptest.Names(otlptest.Children(spans, decides[0])))
	}
	if s := otlp.Services(); len(s) == 0 || s[0] != "interlock-api" {
		t.Errorf("service names %v, want OTEL_SERVICE_NAME's", s)
	}
}
