package awsrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

func TestRequireNamesEveryMissingVariableInOrder(t *testing.T) {
	env := EnvOf(map[string]string{EnvJobLogTable: "j", EnvRerunTable: "  "})
	err := env.Require(FnEventSink, TableVars...)
	var missing *MissingEnvError
	if !errors.As(err, &missing) || err.Error() != "event-sink: missing required env vars: CONTROL_TABLE, RERUN_TABLE, EVENTS_TABLE" {
		t.Fatalf("err %v", err)
	}
	if err := env.Require(FnEventSink, EnvJobLogTable); err != nil {
		t.Fatal(err)
	}
}

func TestEventsRetention(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 90 * 24 * time.Hour, "0": 90 * 24 * time.Hour, "-3": 90 * 24 * time.Hour, " 7 ": 7 * 24 * time.Hour} {
		got, err := EnvOf(map[string]string{EnvEventsTTLDays: in}).EventsRetention(FnEventSink)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"7d", "1e3", "99999999"} {
		if _, err := EnvOf(map[string]string{EnvEventsTTLDays: in}).EventsRetention(FnEventSink); err == nil || !strings.Contains(err.Error(), "EVENTS_TTL_DAYS") {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// TestFunctionsExitAtStartWithoutTheirVariables starts each function's
// process (the test binary running its Main) with an empty environment.
func TestFunctionsExitAtStartWithoutTheirVariables(t *testing.T) {
	for fn, want := range map[string]string{
		FnEventPublisher:  "event-publisher: missing required env vars: EVENT_BUS_NAME, EVENTS_TABLE",
		FnEventSink:       "event-sink: missing required env vars: CONTROL_TABLE, JOBLOG_TABLE, RERUN_TABLE, EVENTS_TABLE",
		FnAlertDispatcher: "alert-dispatcher: missing required env vars: CONTROL_TABLE, JOBLOG_TABLE, RERUN_TABLE, EVENTS_TABLE",
		FnStreamRouter:    "stream-router: missing required env vars: CONTROL_TABLE, JOBLOG_TABLE, RERUN_TABLE, EVENTS_TABLE, STATE_MACHINE_ARN",
		FnAPI:             "api: missing required env vars: CONTROL_TABLE, JOBLOG_TABLE, RERUN_TABLE, EVENTS_TABLE, API_TOKENS_SECRET_ARN",
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = []string{helperEnv + "=" + fn, "PATH=" + os.Getenv("PATH")}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || strings.TrimSpace(stderr.String()) != want {
			t.Errorf("%s: %v, stderr %q; want exit 1 and %q", fn, err, stderr.String(), want)
		}
	}
}

// TestDispatcherFromEnvPrefersTheSecret builds the alert-dispatcher as its
// main does, with both SLACK_SECRET_ARN and SLACK_BOT_TOKEN set: the
// secret's token is the one Slack sees.
func TestDispatcherFromEnvPrefersTheSecret(t *testing.T) {
	env := newDDBEnv(t, 0)
	sm := awsfake.NewSecretsManager(t)
	arn := sm.Put("prod/slack", "xoxb-secret-token\n")
	fake := slacktest.New(t, "xoxb-secret-token")
	awsEnv(t, map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": ddblocal.Endpoint(t), "AWS_ENDPOINT_URL_SECRETS_MANAGER": sm.URL})
	h, err := DispatcherFromEnv(context.Background(), EnvOf(map[string]string{
		EnvControlTable: env.tables.Control, EnvJobLogTable: env.tables.JobLog, EnvRerunTable: env.tables.Rerun, EnvEventsTable: env.tables.Events,
		EnvSlackChannel: channel, EnvSlackToken: "xoxb-env-token", EnvSlackSecretARN: arn, EnvSlackAPIURL: fake.APIURL(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	msg := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-1", Body: string(busJSON(t, slaEvents()[0])), EventSource: "aws:sqs"}}}
	payload, _ := json.Marshal(msg)
	out, err := lambda.NewHandler(h).Invoke(context.Background(), payload)
	if err != nil || string(out) != `{"batchItemFailures":[]}` {
		t.Fatalf("answer %s, %v", out, err)
	}
	if a := fake.Auths(); len(a) != 1 || a[0] != "Bearer xoxb-secret-token" || len(fake.Posts()) != 1 {
		t.Fatalf("auths %q, posts %d", a, len(fake.Posts()))
	}
}

// TestOrchestratorJobSettings: TRIGGER_ALLOW_ADDRESSES and ENV_ALLOW are
// read as interlock.yaml's triggers.allowAddresses and server.envAllow; an
// invalid entry stops the function at its start, naming the variable and
// the entry (the allow-list reaching a job is the end-to-end test's).
func TestOrchestratorJobSettings(t *testing.T) {
	st := sqliteStore(t)
	for _, ok := range []map[string]string{
		{},
		{EnvTriggerAllowAddresses: "127.0.0.1/32, 10.0.0.0/8:443,", EnvEnvAllow: "AIRFLOW_TOKEN, DBX_HOST"},
	} {
		if _, err := NewOrchestrator(t.Context(), st, clock.NewVirtual(t0), EnvOf(ok), nil); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	_, err := NewOrchestrator(t.Context(), st, clock.NewVirtual(t0), EnvOf(map[string]string{EnvTriggerAllowAddresses: "127.0.0.1/32,not-an-address"}), nil)
	if err == nil || !strings.Contains(err.Error(), "orchestrator: TRIGGER_ALLOW_ADDRESSES") || !strings.Contains(err.Error(), `"not-an-address"`) {
		t.Errorf("an invalid entry: %v, want an error naming TRIGGER_ALLOW_ADDRESSES and the entry", err)
	}
}

// TestDispatcherFromEnvRoutesByALERTSCONFIG builds the alert-dispatcher as
// its main does with routes and no SLACK_CHANNEL_ID: the route's tokenEnv
// is a secret SECRETS_FROM reads at start, and the alert goes to the
// route's channel with it.
func TestDispatcherFromEnvRoutesByALERTSCONFIG(t *testing.T) {
	env := newDDBEnv(t, 0)
	sm := awsfake.NewSecretsManager(t)
	arn := sm.Put("prod/ops-slack", "xoxb-ops-token")
	fake := slacktest.New(t, "xoxb-ops-token")
	awsEnv(t, map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": ddblocal.Endpoint(t), "AWS_ENDPOINT_URL_SECRETS_MANAGER": sm.URL})
	h, err := DispatcherFromEnv(context.Background(), EnvOf(map[string]string{
		EnvControlTable: env.tables.Control, EnvJobLogTable: env.tables.JobLog, EnvRerunTable: env.tables.Rerun, EnvEventsTable: env.tables.Events,
		EnvAlertsConfig: "alerts:\n  - {type: slack, channel: C0OPS, tokenEnv: OPS_SLACK_TOKEN, match: {levels: [warning]}}\n",
		EnvSecretsFrom:  "OPS_SLACK_TOKEN=" + arn, EnvSlackAPIURL: fake.APIURL(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	msg := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-1", Body: string(busJSON(t, slaEvents()[0])), EventSource: "aws:sqs"}}}
	payload, _ := json.Marshal(msg)
	out, err := lambda.NewHandler(h).Invoke(context.Background(), payload)
	if err != nil || string(out) != `{"batchItemFailures":[]}` {
		t.Fatalf("answer %s, %v", out, err)
	}
	if p := fake.Posts(); len(p) != 1 || p[0].Channel != "C0OPS" || fake.Auths()[0] != "Bearer xoxb-ops-token" {
		t.Fatalf("posts %+v, auths %q", p, fake.Auths())
	}
	// A bad config stops the start, naming the variable and the field.
	_, err = DispatcherFromEnv(context.Background(), EnvOf(map[string]string{
		EnvControlTable: env.tables.Control, EnvJobLogTable: env.tables.JobLog, EnvRerunTable: env.tables.Rerun, EnvEventsTable: env.tables.Events,
		EnvAlertsConfig: "alerts:\n  - {type: slack, channel: C0OPS, tokenEnv: OPS_SLACK_TOKEN, match: {levels: [loud]}}\n",
	}))
	if err == nil || !strings.Contains(err.Error(), EnvAlertsConfig) || !strings.Contains(err.Error(), "levels") {
		t.Fatalf("a bad level: %v", err)
	}
}
