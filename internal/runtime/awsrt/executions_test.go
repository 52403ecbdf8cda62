package awsrt

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
)

// TestExecutionName: names keep Step Functions' rules (at most 80 of
// [A-Za-z0-9-_]) for any key, are the same for the same run, generation
// and instant, and differ when any of them differs — keys that read the
// same once cut or replaced included.
func TestExecutionName(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	key := run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2099-03-07"}
	long := strings.Repeat("p", 200)
	names := map[string]string{}
	for label, n := range map[string]string{
		"base":       ExecutionName(key, 0, t0),
		"generation": ExecutionName(key, 1, t0),
		"instant":    ExecutionName(key, 0, t0.Add(time.Nanosecond)),
		"period":     ExecutionName(run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2099-03-07T06"}, 0, t0),
		"replaced a": ExecutionName(run.Key{PipelineID: "a.b", ScheduleID: "s", Period: "p"}, 0, t0),
		"replaced b": ExecutionName(run.Key{PipelineID: "a/b", ScheduleID: "s", Period: "p"}, 0, t0),
		"long a":     ExecutionName(run.Key{PipelineID: long + "a", ScheduleID: "s", Period: "p"}, 0, t0),
		"long b":     ExecutionName(run.Key{PipelineID: long + "b", ScheduleID: "s", Period: "p"}, 0, t0),
		"unicode":    ExecutionName(run.Key{PipelineID: "commandes-été", ScheduleID: "s", Period: "p"}, 0, t0),
	} {
		if !valid.MatchString(n) {
			t.Errorf("%s: %q breaks Step Functions' name rules", label, n)
		}
		if other, dup := names[n]; dup {
			t.Errorf("%s and %s share the name %q", label, other, n)
		}
		names[n] = label
	}
	if a, b := ExecutionName(key, 2, t0), ExecutionName(key, 2, t0.In(time.FixedZone("x", 3600))); a != b {
		t.Errorf("the same instant in two zones: %q and %q", a, b)
	}
	if n := ExecutionName(key, 0, t0); !strings.HasPrefix(n, "orders-stream-2099-03-07-g0-") {
		t.Errorf("%q does not start with the run's readable key", n)
	}
}

// TestRouterStartsExecutions: on DynamoDB Local's real control stream, the
// stream-router starts one execution, through the real SDK client against
// the Step Functions fake, when a run's step timer is armed; its input is
// the timer as the state machine's Route state takes it. Steps that move
// the timer start nothing; the stream delivered again starts nothing
// twice (the same name), a finished execution's name is refused and taken
// as started, and a start that fails fails its record for redelivery.
func TestRouterStartsExecutions(t *testing.T) {
	env := newRouterEnv(t)
	fake := awsfake.NewStepFunctions(t)
	arn := fake.AddStateMachine("interlock-runs")
	// One attempt a call: a failed start is the record's failure at once.
	client := sfn.NewFromConfig(awsfake.Config(fake.URL), func(o *sfn.Options) { o.RetryMaxAttempts = 1 })
	env.router.Executions = &ExecutionStarter{Client: client, StateMachineARN: arn, Store: env.store}
	ctx := t.Context()

	putItem(t, env.client, env.tables.Control, map[string]types.AttributeValue{
		"PK": s("PIPELINE#orders"), "SK": s("SENSOR#orders-landed"), "status": s("ready"), "count": n("500"), "date": s("2099-03-07")})
	drainAll(t, env.mapping(t, env.tables.Control))
	exs := fake.Executions()
	if len(exs) != 1 {
		t.Fatalf("%d executions started, want 1: %+v", len(exs), exs)
	}
	key := run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2099-03-07"}
	timer, err := env.store.TimerGet(ctx, "step/orders/stream/2099-03-07")
	if err != nil {
		t.Fatalf("the run's step timer: %v", err)
	}
	var in StepOutput
	if err := json.Unmarshal([]byte(exs[0].Input), &in); err != nil {
		t.Fatal(err)
	}
	stamp := run.StampOf(timer.Detail)
	if !stamp.Since.Equal(env.clk.Now()) || stamp.Handoff {
		t.Fatalf("the armed timer's stamp %+v, want since the decision's instant %s", stamp, env.clk.Now())
	}
	want := StepOutput{Run: key, Next: timer.Kind, NextAt: timer.DueAt.UTC().Format(time.RFC3339), Since: stamp.Since.UTC().Format(time.RFC3339Nano)}
	if in != want || exs[0].Name != ExecutionName(key, 0, timer.DueAt) {
		t.Fatalf("execution %s with %+v, want %s with %+v", exs[0].Name, in, ExecutionName(key, 0, timer.DueAt), want)
	}

	// A step moves the timer (MODIFY): the execution has it already.
	eng := engine.New(engine.Options{Store: env.store, Clock: env.clk, Jobs: env.jobs, Passive: true})
	o := &Orchestrator{Engine: eng}
	res, err := o.Step(ctx, StepInput{Mode: in.Next, StepRef: engine.StepRef{Run: key, Due: timer.DueAt}})
	if err != nil || !res.Acted {
		t.Fatalf("the step: %+v %v", res, err)
	}
	drainAll(t, env.mapping(t, env.tables.Control)) // everything again, the move included
	if exs := fake.Executions(); len(exs) != 1 {
		t.Fatalf("%d executions after a step and a redelivery, want 1", len(exs))
	}
	// The execution ended: Step Functions refuses its name, which is
	// taken as started.
	fake.Finish()
	drainAll(t, env.mapping(t, env.tables.Control))
	if exs := fake.Executions(); len(exs) != 1 {
		t.Fatalf("%d executions after the first ended, want 1", len(exs))
	}

	// A start that fails fails its record, which is delivered again.
	ctrl := env.mapping(t, env.tables.Control)
	drainAll(t, ctrl) // the old records, started already
	fake.FailNext("ServiceUnavailable", 1)
	putItem(t, env.client, env.tables.Control, map[string]types.AttributeValue{
		"PK": s("PIPELINE#orders"), "SK": s("SENSOR#orders-landed"), "status": s("ready"), "count": n("500"), "date": s("2099-03-08")})
	results, err := ctrl.Drain(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, r := range results {
		failed += r.Failed
	}
	exs = fake.Executions()
	if failed == 0 || len(exs) != 2 || !strings.HasPrefix(exs[1].Name, "orders-stream-2099-03-08-g0-") {
		t.Fatalf("after a failed start: %d records failed, executions %+v; want a failure, then the second run's execution", failed, exs)
	}
}

// TestRouterStartsAHandedOffExecution: a step moved earlier than the
// instant its execution waits for — a sensor making a waiting run ready —
// starts a fresh execution at once (the timer's MODIFY record stamped as a
// handoff), named for the new due time; the old execution, when it wakes,
// is superseded: its step answers done and takes nothing, and the job is
// started once, by the new one.
func TestRouterStartsAHandedOffExecution(t *testing.T) {
	env := newRouterEnv(t)
	fake := awsfake.NewStepFunctions(t)
	arn := fake.AddStateMachine("interlock-runs")
	env.router.Executions = &ExecutionStarter{Client: sfn.NewFromConfig(awsfake.Config(fake.URL)), StateMachineARN: arn, Store: env.store}
	ctx := t.Context()
	ctrl := env.mapping(t, env.tables.Control)
	key := run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2099-03-07"}

	// Not valid yet: the run waits for its next evaluation.
	putItem(t, env.client, env.tables.Control, map[string]types.AttributeValue{
		"PK": s("PIPELINE#orders"), "SK": s("SENSOR#orders-landed"), "status": s("ready"), "count": n("50"), "date": s("2099-03-07")})
	drainAll(t, ctrl)
	exs := fake.Executions()
	if len(exs) != 1 {
		t.Fatalf("%d executions started, want 1", len(exs))
	}
	var first StepOutput
	if err := json.Unmarshal([]byte(exs[0].Input), &first); err != nil {
		t.Fatal(err)
	}
	if first.Next != ModeEvaluate {
		t.Fatalf("the first execution waits for %+v, want an evaluation", first)
	}
	waitsFor, _ := time.Parse(time.RFC3339, first.NextAt)
	since, _ := time.Parse(time.RFC3339Nano, first.Since)

	// A minute later the data is valid: the sensor's decision moves the
	// run to its trigger step now, long before the first execution wakes.
	env.clk.Advance(time.Minute)
	putItem(t, env.client, env.tables.Control, map[string]types.AttributeValue{
		"PK": s("PIPELINE#orders"), "SK": s("SENSOR#orders-landed"), "status": s("ready"), "count": n("500"), "date": s("2099-03-07")})
	drainAll(t, ctrl)
	exs = fake.Executions()
	if len(exs) != 2 {
		t.Fatalf("%d executions after the step moved earlier, want 2 (a fresh one at once)", len(exs))
	}
	var second StepOutput
	if err := json.Unmarshal([]byte(exs[1].Input), &second); err != nil {
		t.Fatal(err)
	}
	if second.Next != ModeTrigger || second.NextAt != env.clk.Now().Format(time.RFC3339) || exs[1].Name != ExecutionName(key, 0, env.clk.Now()) {
		t.Fatalf("the fresh execution %s: %+v, want the trigger step now, named for it", exs[1].Name, second)
	}
	drainAll(t, ctrl) // delivered again: nothing twice
	if len(fake.Executions()) != 2 {
		t.Fatalf("the handoff delivered again started another execution")
	}

	eng := engine.New(engine.Options{Store: env.store, Clock: env.clk, Jobs: env.jobs, Passive: true})
	o := &Orchestrator{Engine: eng}
	invoke := func(in StepInput) StepOutput { t.Helper(); return handleStep(t, o, in) }
	nextAt, _ := time.Parse(time.RFC3339, second.NextAt)
	secondSince, _ := time.Parse(time.RFC3339Nano, second.Since)
	if out := invoke(StepInput{Mode: second.Next, StepRef: engine.StepRef{Run: key, Due: nextAt, Since: secondSince}}); !out.Acted || out.Done || out.Next != ModePoll {
		t.Fatalf("the fresh execution's trigger: %+v, want the job started and polled next", out)
	}
	// The first execution wakes at the instant it waited for: superseded.
	env.clk.Set(waitsFor)
	if out := invoke(StepInput{Mode: first.Next, StepRef: engine.StepRef{Run: key, Due: waitsFor, Since: since}}); !out.Done || out.Acted {
		t.Fatalf("the first execution at its wake: %+v, want done without a step", out)
	}
	if n := env.jobs.starts.Load(); n != 1 {
		t.Fatalf("%d job starts, want 1", n)
	}
	cur, err := eng.Current(ctx, key)
	if err != nil || cur.Next != run.StepPoll {
		t.Fatalf("the run's step after the first execution ended: %+v %v, want its poll, untouched", cur, err)
	}
}
