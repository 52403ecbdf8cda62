package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/testenv/sfnlocal"
)

// aslState is the part of a state the structure test reads.
type aslState struct {
	Type           string
	Resource       string
	TimeoutSeconds int
	Parameters     map[string]any
	TimestampPath  string
	Next           string
	Default        string
	Choices        []map[string]any
	Retry          []struct {
		ErrorEquals []string
		MaxAttempts int
		BackoffRate float64
	}
	Catch []struct {
		ErrorEquals []string
		Next        string
	}
}

// TestStateMachineStructure: the rendered state machine decides nothing —
// every Task calls the orchestrator with one of its modes and the run and
// due time it was handed, every Choice routes on the returned next or done
// only, every Wait waits until the returned nextAt — its Tasks retry
// exactly the orchestrator's RetryableErrors (the trigger's up to
// trigger_max_attempts times, with exponential backoff) and catch the rest
// into InfraFailure, and its global timeout is Terraform's.
func TestStateMachineStructure(t *testing.T) {
	var def struct {
		StartAt        string
		TimeoutSeconds int
		States         map[string]aslState
	}
	if err := json.Unmarshal(renderedASL(t), &def); err != nil {
		t.Fatal(err)
	}
	if def.TimeoutSeconds != 14400 {
		t.Errorf("TimeoutSeconds %d, want the rendered 14400", def.TimeoutSeconds)
	}
	for _, name := range []string{"Evaluate", "Trigger", "CheckJob", "InfraFailure", "Done", "WaitInterval", "WaitForJob", "IsReady", "IsJobDone", "HasTriggerResult", "ContinueAsNew"} {
		if _, ok := def.States[name]; !ok {
			t.Errorf("no state %s (the seed's phases)", name)
		}
	}
	modes := map[string]bool{}
	for name, st := range def.States {
		switch st.Type {
		case "Task":
			if st.Resource != aslTestARN {
				t.Errorf("%s calls %q, not the orchestrator", name, st.Resource)
			}
			mode, _ := st.Parameters["mode"].(string)
			modes[mode] = true
			want := map[string]any{"mode": mode, "run.$": "$.run", "due.$": "$.nextAt", "since.$": "$.since", "steps.$": "$.steps",
				"started.$": "$$.Execution.StartTime", "limitSeconds": float64(14400)}
			if !reflect.DeepEqual(st.Parameters, want) {
				t.Errorf("%s passes %v, want mode, run, due (the returned nextAt), since, steps, the execution's start and its TimeoutSeconds only", name, st.Parameters)
			}
			if st.TimeoutSeconds != aslTestTaskTimeout {
				t.Errorf("%s times out after %d s, want the rendered task_timeout_seconds (%d): below the Lambda's timeout", name, st.TimeoutSeconds, aslTestTaskTimeout)
			}
			if !slices.Contains(RetryableErrors, "States.Timeout") {
				t.Errorf("RetryableErrors %v: a Task's own timeout (States.Timeout) must be retried", RetryableErrors)
			}
			if len(st.Retry) != 1 || !slices.Equal(st.Retry[0].ErrorEquals, RetryableErrors) || st.Retry[0].BackoffRate != 2 {
				t.Errorf("%s retries %+v, want RetryableErrors %v with backoff rate 2", name, st.Retry, RetryableErrors)
			}
			if mode == ModeTrigger && (len(st.Retry) != 1 || st.Retry[0].MaxAttempts != 3) {
				t.Errorf("%s retries %+v, want trigger_max_attempts (3)", name, st.Retry)
			}
			if len(st.Catch) != 1 || !slices.Equal(st.Catch[0].ErrorEquals, []string{"States.ALL"}) || st.Catch[0].Next != "InfraFailure" {
				t.Errorf("%s catches %+v, want States.ALL into InfraFailure", name, st.Catch)
			}
		case "Choice":
			for _, c := range st.Choices {
				v, _ := c["Variable"].(string)
				ok := ((v == "$.done" || v == "$.continue") && c["BooleanEquals"] == true) || (v == "$.next" && len(c) == 3 && c["StringEquals"] != nil)
				if !ok {
					t.Errorf("%s routes on %v: only next (StringEquals), done and continue (BooleanEquals true) may be tested", name, c)
				}
				if i := slices.IndexFunc(st.Choices, func(c map[string]any) bool { return c["Variable"] == "$.continue" }); i >= 0 && (i != 1 || st.Choices[0]["Variable"] != "$.done" || st.Choices[i]["Next"] != "ContinueAsNew") {
					t.Errorf("%s: continue must be tested right after done, and go to ContinueAsNew", name)
				}
			}
		case "Wait":
			if st.TimestampPath != "$.nextAt" {
				t.Errorf("%s waits on %q, want TimestampPath $.nextAt", name, st.TimestampPath)
			}
		case "Succeed", "Fail":
		default:
			t.Errorf("%s is a %s state: the machine has Task, Choice, Wait, Succeed and Fail states only (no Pass arithmetic)", name, st.Type)
		}
	}
	for _, m := range []string{ModeEvaluate, ModeTrigger, ModePoll, ModeContinue} {
		if !modes[m] {
			t.Errorf("no Task calls the orchestrator's %s mode", m)
		}
	}
}

// TestRenderASL: every variable is substituted, and a template that uses
// a variable nobody passes, or renders to something that is not JSON, is
// refused.
func TestRenderASL(t *testing.T) {
	tmpl, err := os.ReadFile(filepath.Join(sfnlocal.RepoRoot(t), "deploy", "statemachine.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range ASLVariables {
		if !strings.Contains(string(tmpl), "${"+v+"}") {
			t.Errorf("the template does not use ${%s}", v)
		}
	}
	out := renderedASL(t)
	if strings.Contains(string(out), "${") {
		t.Errorf("rendered state machine still has a template variable")
	}
	vars := ASLVars{OrchestratorARN: aslTestARN, TimeoutSeconds: 60, TriggerMaxAttempts: 3}
	if _, err := RenderASL([]byte(`{"A": "${sla_monitor_arn}"}`), vars); err == nil || !strings.Contains(err.Error(), "sla_monitor_arn") {
		t.Errorf("an unknown variable: %v, want an error naming it", err)
	}
	if _, err := RenderASL([]byte(`{"A": ${orchestrator_arn}}`), vars); err == nil {
		t.Errorf("a rendering that is not JSON was accepted")
	}
	if _, err := RenderASL(tmpl, ASLVars{TimeoutSeconds: 60}); err == nil {
		t.Errorf("no orchestrator ARN was accepted")
	}
	if _, err := RenderASL(tmpl, ASLVars{OrchestratorARN: aslTestARN, TimeoutSeconds: 60, TaskTimeoutSeconds: -1}); err == nil {
		t.Errorf("a negative Task timeout was accepted")
	}
	def, err := RenderASL([]byte(`{"T": ${task_timeout_seconds}}`), vars)
	if err != nil || string(def) != fmt.Sprintf(`{"T": %d}`, DefaultTaskTimeoutSeconds) {
		t.Errorf("no Task timeout given: %s %v, want the default %d", def, err, DefaultTaskTimeoutSeconds)
	}
}

// TestOrchestratorRefusesBadInput: through the Lambda entry point, input
// that is no step is an InputError (not retried by the state machine),
// never a panic and never a step taken.
func TestOrchestratorRefusesBadInput(t *testing.T) {
	o := &Orchestrator{} // no engine: nothing may reach it
	h := lambda.NewHandler(o.Handle)
	// Not JSON is refused by the Lambda library before the handler (a
	// *json.SyntaxError: errorType SyntaxError, which is not retried
	// either); Step Functions sends JSON only.
	if _, err := h.Invoke(context.Background(), []byte(`not json`)); err == nil || slices.Contains(RetryableErrors, errorTypeOf(err)) {
		t.Errorf("not JSON: %v (%s), want an error that is not retried", err, errorTypeOf(err))
	}
	for _, in := range []string{
		`[]`, `"x"`, `{}`, `{"mode":"complete","run":{"PipelineID":"a","ScheduleID":"s","Period":"p"}}`,
		`{"mode":"evaluate","run":{"PipelineID":"a","ScheduleID":"s"}}`,
		`{"mode":"poll","run":{"PipelineID":"a","ScheduleID":"s","Period":"p"},"due":"yesterday"}`,
	} {
		_, err := h.Invoke(context.Background(), []byte(in))
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: %v, want an InputError", in, err)
		}
	}
}

// errorTypeOf is the errorType Lambda reports for err.
func errorTypeOf(err error) string {
	if err == nil {
		return ""
	}
	typ := reflect.TypeOf(err)
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	return typ.Name()
}

// FuzzDecodeStepInput: any payload decodes to a complete step or an
// InputError, never a panic.
func FuzzDecodeStepInput(f *testing.F) {
	f.Add([]byte(`{"mode":"trigger","run":{"PipelineID":"a","ScheduleID":"s","Period":"p"},"due":"2099-03-07T06:00:00Z"}`))
	f.Add([]byte(`{"mode":"evaluate"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := DecodeStepInput(b)
		var ie *InputError
		if err != nil && !errors.As(err, &ie) {
			t.Fatalf("%v is not an InputError", err)
		}
		if err == nil && (in.Run.PipelineID == "" || in.Run.ScheduleID == "" || in.Run.Period == "") {
			t.Fatalf("incomplete step %+v accepted", in)
		}
	})
}

// TestStepInputWire: the step a Task sends — its run, due time and stamp
// are the engine's StepRef, encoded inline — decodes whole and encodes
// back to the same keys the state machine's paths name.
func TestStepInputWire(t *testing.T) {
	const payload = `{"mode":"poll","run":{"PipelineID":"a","ScheduleID":"s","Period":"p"},"due":"2099-03-07T06:00:00Z","since":"2099-03-07T05:00:00Z","steps":3,"started":"2099-03-07T04:00:00Z","limitSeconds":60}`
	in, err := DecodeStepInput([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	due := time.Date(2099, 3, 7, 6, 0, 0, 0, time.UTC)
	if in.Run != (run.Key{PipelineID: "a", ScheduleID: "s", Period: "p"}) || !in.Due.Equal(due) || !in.Since.Equal(due.Add(-time.Hour)) || in.Steps != 3 || in.LimitSeconds != 60 {
		t.Fatalf("decoded %+v", in)
	}
	b, err := json.Marshal(in)
	if err != nil || string(b) != payload {
		t.Fatalf("encoded %s %v, want %s", b, err, payload)
	}
}
