package awsrt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/emf"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

// emfLines parses every line of out as an EMF document, checking what
// CloudWatch requires of it (emf.Parse) and what every line of ours
// has: the namespace, the dimensions Environment and (when a directive
// names it) Function of fn, stamped at the clock's time in milliseconds
// (fn "", at zero: any function, any time).
func emfLines(t *testing.T, out *bytes.Buffer, fn string, at time.Time) []emf.Document {
	t.Helper()
	var docs []emf.Document
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		d, err := emf.Parse([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if f, ok := d.Dimensions["Function"]; (ok && fn != "" && f != fn) || d.Dimensions["Environment"] != "test" {
			t.Fatalf("%s: dimensions %v, want Function %s, Environment test", line, d.Dimensions, fn)
		}
		if !at.IsZero() && d.Timestamp.UnixMilli() != at.UnixMilli() {
			t.Fatalf("%s: timestamp %s, want %s", line, d.Timestamp, at)
		}
		for _, dir := range d.Directives {
			if dir.Namespace != MetricsNamespace {
				t.Fatalf("%s: namespace %s", line, dir.Namespace)
			}
			for _, set := range dir.Dimensions {
				for _, k := range set {
					if k != "Environment" && k != "Function" {
						t.Fatalf("%s: dimension %s: only Environment and Function are dimensions", line, k)
					}
				}
			}
		}
		docs = append(docs, d)
	}
	out.Reset()
	return docs
}

// eventCounts counts the events of pipelineID the store holds, by type.
func eventCounts(t *testing.T, st store.Store, pipelineID string) map[string]float64 {
	t.Helper()
	page, err := st.EventList(t.Context(), store.EventListParams{PipelineID: pipelineID})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, e := range page.Events {
		got[string(e.Type)]++
	}
	return got
}

// eventValues are a document's event-type metrics.
func eventValues(d emf.Document) map[string]float64 {
	got := map[string]float64{}
	for k, v := range d.Values {
		if _, ok := event.Lookup(event.Type(k)); ok {
			got[k] = v
		}
	}
	return got
}

// TestRouterBatchMetrics: a stream batch through the router's Lambda
// entry point writes one EMF line: the record it named for redelivery,
// and every event the batch's decisions committed, by type, as the
// events table holds them.
func TestRouterBatchMetrics(t *testing.T) {
	env := newRouterEnv(t)
	var out bytes.Buffer
	m := NewMeter(FnStreamRouter, "test", &out, env.clk, nil)
	m.Watch(env.eng)
	ctrl := env.tables.Control
	for _, st := range []string{"loading", "ready"} {
		putItem(t, env.client, ctrl, map[string]types.AttributeValue{"PK": s("PIPELINE#orders"), "SK": s("SENSOR#orders-landed"), "status": s(st), "count": n("500"), "date": s("2099-03-07")})
	}
	batch := env.capture(t, ctrl)
	// A record from a table of no deployment's: failed, for redelivery.
	poison := batch.Records[0]
	poison.EventSourceArn = strings.Replace(poison.EventSourceArn, ctrl, "someone-else-control", 1)
	batch.Records = append(batch.Records, poison)
	before := eventCounts(t, env.store, "orders")
	payload, _ := json.Marshal(batch)
	if _, err := lambda.NewHandler(Metered(m, env.router.Handle)).Invoke(t.Context(), payload); err != nil {
		t.Fatal(err)
	}
	docs := emfLines(t, &out, FnStreamRouter, env.clk.Now())
	if len(docs) != 1 {
		t.Fatalf("%d EMF lines for one invocation, want 1", len(docs))
	}
	if docs[0].Values[MetricRecordsFailed] != 1 {
		t.Fatalf("%s = %v, want 1", MetricRecordsFailed, docs[0].Values[MetricRecordsFailed])
	}
	want := eventCounts(t, env.store, "orders")
	for k, v := range before {
		if want[k] -= v; want[k] == 0 {
			delete(want, k)
		}
	}
	if len(want) == 0 {
		t.Fatal("the batch committed no event: the test proves nothing")
	}
	if got := eventValues(docs[0]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("event metrics %v, want what the batch committed %v", got, want)
	}

	// The next invocation counts afresh.
	if _, err := lambda.NewHandler(Metered(m, env.router.Handle)).Invoke(t.Context(), []byte(`{"Records":[]}`)); err != nil {
		t.Fatal(err)
	}
	docs = emfLines(t, &out, FnStreamRouter, env.clk.Now())
	if len(docs) != 1 || docs[0].Values[MetricRecordsFailed] != 0 || len(eventValues(docs[0])) != 0 {
		t.Fatalf("an empty batch: %+v, want RecordsFailed 0 and no event", docs)
	}
}

// TestOrchestratorStepMetrics: the trigger step, through the
// orchestrator's Lambda entry point, writes JOB_TRIGGERED 1; a step that
// commits no event writes no line.
func TestOrchestratorStepMetrics(t *testing.T) {
	sc := agreementScenario{name: "metered", age: "1s"}
	eng, _, clk, _, key := sc.start(t, true)
	o := &Orchestrator{Engine: eng}
	cur := toTriggerStep(t, o, clk, key)
	var out bytes.Buffer
	m := NewMeter(FnOrchestrator, "test", &out, clk, nil)
	m.Watch(eng)
	h := lambda.NewHandler(Metered(m, o.Handle))
	body, _ := json.Marshal(StepInput{Mode: ModeTrigger, StepRef: engine.StepRef{Run: key, Due: cur.NextAt, Since: cur.Since}})
	if _, err := h.Invoke(t.Context(), body); err != nil {
		t.Fatal(err)
	}
	docs := emfLines(t, &out, FnOrchestrator, clk.Now())
	if len(docs) != 1 || docs[0].Values[string(event.JobTriggered)] != 1 {
		t.Fatalf("trigger step: %+v, want one line with %s 1", docs, event.JobTriggered)
	}
	// The same step delivered again (a retried Task) decides nothing.
	if _, err := h.Invoke(t.Context(), body); err != nil {
		t.Fatal(err)
	}
	if docs := emfLines(t, &out, FnOrchestrator, clk.Now()); len(docs) != 0 {
		t.Fatalf("a step that committed nothing wrote %+v", docs)
	}
}

// TestWatchdogPassMetrics: a pass through the watchdog's Lambda entry
// point writes one line: the pass, its findings, no failed check, and
// the SCHEDULE_MISSED it raised.
func TestWatchdogPassMetrics(t *testing.T) {
	env, _ := missedCronTick(t)
	var out bytes.Buffer
	m := NewMeter(FnWatchdog, "test", &out, env.clk, nil)
	m.Watch(env.eng)
	h := lambda.NewHandler(Metered(m, (&Watchdog{Engine: env.eng, StuckRunThreshold: 30 * time.Minute, Clock: env.clk}).Handle))
	raw, err := h.Invoke(t.Context(), []byte(scheduledEvent))
	if err != nil {
		t.Fatal(err)
	}
	var res WatchdogResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	docs := emfLines(t, &out, FnWatchdog, env.clk.Now())
	if len(docs) != 1 {
		t.Fatalf("%d lines", len(docs))
	}
	v := docs[0].Values
	if v[MetricWatchdogPasses] != 1 || v[MetricWatchdogFindings] != float64(res.Findings) || res.Findings == 0 || v[MetricWatchdogChecksFailed] != 0 ||
		v[string(event.ScheduleMissed)] != 1 {
		t.Fatalf("values %v, result %+v", v, res)
	}
}

// TestDispatcherBatchMetrics: through the alert queue's mapping, an alert
// Slack fails once then accepts counts one delivery failure and one
// delivery; an alert Slack refuses for good counts one dead letter.
func TestDispatcherBatchMetrics(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	p := newBusPath(t)
	clk := clock.NewVirtual(t0)
	var out bytes.Buffer
	m := NewMeter(FnAlertDispatcher, "test", &out, clk, nil)
	d, err := NewDispatcher(DispatcherConfig{Store: m.Store(newStore(t)), Channel: channel, Token: StaticToken(slackToken), APIURL: fake.APIURL(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	mapping := awsfake.NewSQSMapping(p.sqs, "alerts", 1, lambda.NewHandler(Metered(m, d.Handle)).Invoke)
	total := func() map[string]float64 {
		sum := map[string]float64{}
		docs := emfLines(t, &out, FnAlertDispatcher, clk.Now())
		for _, d := range docs {
			for _, n := range ownMetrics[FnAlertDispatcher] {
				if _, ok := d.Values[n]; !ok {
					t.Fatalf("%v: %s missing: a function's own metrics are in every line", d.Values, n)
				}
			}
			for k, v := range d.Values {
				sum[k] += v
			}
		}
		sum["lines"] = float64(len(docs))
		return sum
	}
	fake.Script(slacktest.ServerError)
	p.publish(t, slaEvents()[0])
	drain(t, mapping)
	if got := total(); got["lines"] != 2 || got[MetricAlertDeliveryFailures] != 1 || got[MetricAlertsDelivered] != 1 || got[MetricAlertsDeadLettered] != 0 {
		t.Fatalf("a failure then a delivery: %v", got)
	}
	fake.SetMode(slacktest.Rejected)
	p.publish(t, slaEvents()[1])
	drain(t, mapping)
	if got := total(); got["lines"] != 1 || got[MetricAlertDeliveryFailures] != 0 || got[MetricAlertsDelivered] != 0 || got[MetricAlertsDeadLettered] != 1 {
		t.Fatalf("a refusal: %v", got)
	}
}

// TestMeteredCountsFailedChecks: a degraded pass's failed checks are
// counted from its answer, error or not, and an EMF line is written
// even when the handler fails.
func TestMeteredCountsFailedChecks(t *testing.T) {
	var out bytes.Buffer
	clk := clock.NewVirtual(t0)
	m := NewMeter(FnWatchdog, "test", &out, clk, nil)
	h := Metered(m, func(context.Context, json.RawMessage) (WatchdogResult, error) {
		return WatchdogResult{Findings: 2, Failed: []string{"schedules", "stuck"}}, fmt.Errorf("degraded")
	})
	if _, err := h(t.Context(), nil); err == nil {
		t.Fatal("the handler's error was lost")
	}
	m.CountEvents([]event.Event{{Type: event.WatchdogDegraded}})
	m.Flush()
	docs := emfLines(t, &out, FnWatchdog, clk.Now())
	if len(docs) != 2 || docs[0].Values[MetricWatchdogChecksFailed] != 2 || docs[0].Values[MetricWatchdogFindings] != 2 || docs[1].Values[string(event.WatchdogDegraded)] != 1 {
		t.Fatalf("docs %+v", docs)
	}
}

// stdoutTo sends the process's stdout to a file until the test ends (a
// meter made meanwhile writes there) and returns a function reading
// the EMF lines written so far.
func stdoutTo(t *testing.T) func() *bytes.Buffer {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = f
	t.Cleanup(func() { os.Stdout = saved; f.Close() })
	return func() *bytes.Buffer {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if strings.Contains(line, `"_aws"`) {
				out.WriteString(line)
			}
		}
		return &out
	}
}

// TestFunctionsFromEnvWriteMetrics builds the functions as their mains do
// (…FromEnv, INTERLOCK_ENVIRONMENT set) and checks each writes its EMF
// lines to stdout with its engine's events: the wiring, not the counting
// (the tests above).
func TestFunctionsFromEnvWriteMetrics(t *testing.T) {
	env := newDDBEnv(t, 20*365*24*time.Hour)
	fake := slacktest.New(t, slackToken)
	awsEnv(t, map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": ddblocal.Endpoint(t)})
	read := stdoutTo(t)
	vars := EnvOf(map[string]string{
		EnvControlTable: env.tables.Control, EnvJobLogTable: env.tables.JobLog, EnvRerunTable: env.tables.Rerun, EnvEventsTable: env.tables.Events,
		EnvStateMachineARN: "arn:aws:states:us-east-1:123456789012:stateMachine:test", EnvEnvironment: "test",
		EnvSchedulerGroup: "g", EnvSchedulerRole: "arn:aws:iam::123456789012:role/s", EnvSLAMonitorARN: "arn:aws:lambda:us-east-1:123456789012:function:s",
		EnvSLADeadLetterARN: "arn:aws:sqs:us-east-1:123456789012:d",
		EnvSlackChannel:     channel, EnvSlackToken: slackToken, EnvSlackAPIURL: fake.APIURL(),
	})
	ctx := t.Context()
	// fn's lines: those whose Function member is fn (a dimension or, in
	// a line of event metrics alone, a member of the line).
	lines := func(fn string) []emf.Document {
		t.Helper()
		var mine bytes.Buffer
		for _, line := range strings.SplitAfter(read().String(), "\n") {
			var root struct{ Function string }
			if json.Unmarshal([]byte(line), &root) == nil && root.Function == fn {
				mine.WriteString(line)
			}
		}
		return emfLines(t, &mine, fn, time.Time{})
	}

	// The engines of the router and the orchestrator count what they
	// commit; the mains flush with Metered.
	rt, err := RouterFromEnv(ctx, vars)
	if err != nil {
		t.Fatal(err)
	}
	o, err := OrchestratorFromEnv(ctx, vars)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Engine.ApplyConfig(ctx, "orders.yaml", []byte(routerPipeline)); err != nil {
		t.Fatal(err)
	}
	// The functions' clock is the real one: today's periods.
	now := clock.Real{}.Now().UTC()
	if _, err := rt.Engine.PutSensor(ctx, "orders", "orders-landed", run.Detail("status", "ready", "count", 500, "date", now.Format(time.DateOnly))); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Engine.ApplyConfig(ctx, "returns.yaml", []byte(strings.Replace(routerPipeline, "id: orders", "id: returns", 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Engine.PutSensor(ctx, "returns", "orders-landed", run.Detail("status", "ready", "count", 500, "date", now.Format(time.DateOnly))); err != nil {
		t.Fatal(err)
	}
	rt.Meter.Flush()
	o.Meter.Flush()
	for _, fn := range []string{FnStreamRouter, FnOrchestrator} {
		docs := lines(fn)
		if len(docs) != 1 || len(eventValues(docs[0])) == 0 {
			t.Fatalf("%s: %+v, want one line with the events its engine committed", fn, docs)
		}
	}

	// The others are their Metered handlers.
	wd, err := WatchdogFromEnv(ctx, vars)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lambda.NewHandler(wd).Invoke(ctx, []byte(scheduledEvent)); err != nil {
		t.Fatal(err)
	}
	if docs := lines(FnWatchdog); len(docs) != 1 || docs[0].Values[MetricWatchdogPasses] != 1 {
		t.Fatalf("watchdog: %+v", docs)
	}
	sla, err := SLAMonitorFromEnv(ctx, vars)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lambda.NewHandler(sla).Invoke(ctx, []byte(`{"Records":[]}`)); err != nil {
		t.Fatal(err)
	}
	if docs := lines(FnSLAMonitor); len(docs) != 1 || docs[0].Values[MetricRecordsFailed] != 0 {
		t.Fatalf("sla-monitor: %+v", docs)
	}
	d, err := DispatcherFromEnv(ctx, vars)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-1", Body: string(busJSON(t, slaEvents()[0])), EventSource: "aws:sqs"}}})
	if _, err := lambda.NewHandler(d).Invoke(ctx, msg); err != nil {
		t.Fatal(err)
	}
	if docs := lines(FnAlertDispatcher); len(docs) != 1 || docs[0].Values[MetricAlertsDelivered] != 1 {
		t.Fatalf("alert-dispatcher: %+v", docs)
	}
}
