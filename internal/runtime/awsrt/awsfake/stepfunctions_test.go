package awsfake

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// TestStepFunctionsStartExecution: through the real SDK client, the fake
// keeps Step Functions' rules: names of [A-Za-z0-9-_] up to 80, known
// state machines only, a running execution's name and input started
// again is that execution, and a name reused with other input or after
// the execution ended is ExecutionAlreadyExists.
func TestStepFunctionsStartExecution(t *testing.T) {
	f := NewStepFunctions(t)
	arn := f.AddStateMachine("runs")
	c := sfn.NewFromConfig(Config(f.URL), func(o *sfn.Options) { o.RetryMaxAttempts = 1 })
	start := func(machine, name, input string) (*sfn.StartExecutionOutput, error) {
		return c.StartExecution(t.Context(), &sfn.StartExecutionInput{StateMachineArn: aws.String(machine), Name: aws.String(name), Input: aws.String(input)})
	}
	out, err := start(arn, "orders-g0-abc", `{"a":1}`)
	if err != nil || !strings.HasSuffix(aws.ToString(out.ExecutionArn), ":runs:orders-g0-abc") {
		t.Fatalf("start: %v %v", out, err)
	}
	if again, err := start(arn, "orders-g0-abc", `{"a":1}`); err != nil || aws.ToString(again.ExecutionArn) != aws.ToString(out.ExecutionArn) {
		t.Fatalf("the same start again: %v %v, want the same execution", again, err)
	}
	var exists *sfntypes.ExecutionAlreadyExists
	if _, err := start(arn, "orders-g0-abc", `{"a":2}`); !errors.As(err, &exists) {
		t.Errorf("the name with other input: %v, want ExecutionAlreadyExists", err)
	}
	f.Finish()
	if _, err := start(arn, "orders-g0-abc", `{"a":1}`); !errors.As(err, &exists) {
		t.Errorf("the name of an ended execution: %v, want ExecutionAlreadyExists", err)
	}
	var invalid *sfntypes.InvalidName
	for _, name := range []string{"", "a.b", strings.Repeat("x", 81)} {
		if _, err := start(arn, name, `{}`); !errors.As(err, &invalid) {
			t.Errorf("name %q: %v, want InvalidName", name, err)
		}
	}
	var missing *sfntypes.StateMachineDoesNotExist
	if _, err := start(arn+"-other", "x", `{}`); !errors.As(err, &missing) {
		t.Errorf("an unknown state machine: %v, want StateMachineDoesNotExist", err)
	}
	if n := len(f.Executions()); n != 1 {
		t.Errorf("%d executions, want 1", n)
	}
}
