// Package stepfunction runs an AWS Step Functions state machine as a
// pipeline's job: StartExecution, then DescribeExecution until the
// execution ends.
//
// Exactly once: the execution's name is derived from Interlock's run id,
// and Step Functions keeps names unique per state machine (90 days for
// standard workflows). A start call the engine retries after a lost
// answer therefore cannot start a second execution: while the first runs,
// the same name and input return it (the API is idempotent for that); once
// it has ended, the API answers ExecutionAlreadyExists, and Start adopts
// the existing execution if its input is the one Interlock would send.
// Express workflows are not idempotent; use standard ones.
package stepfunction

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
)

// MetaExecutionARN is the Meta key of a started execution (the reference's
// name), besides awsjob.MetaRegion.
const MetaExecutionARN = "sfn_execution_arn"

// maxName is the longest execution name StartExecution accepts.
const maxName = 80

// codeAlreadyExists is the error of a start whose name is taken by an
// ended execution or one with another input.
const codeAlreadyExists = "ExecutionAlreadyExists"

// Runner starts and polls Step Functions executions.
type Runner awsjob.Runner

var _ trigger.Runner = Runner{}

// kind is the job type's calls, its execution's key and its statuses
// (Poll's table). An execution has no parent to name: its ARN is all, and
// its region the default one.
var kind = awsjob.Kind[*sfn.Client, sfn.Options, types.ExecutionStatus]{
	Type:    "step-function",
	Service: awsjob.NewService(sfn.NewFromConfig, func(o *sfn.Options) (*aws.Retryer, **string) { return &o.Retryer, &o.BaseEndpoint }),
	Target:  awsjob.Target{IDMeta: MetaExecutionARN, What: "execution ARN"},
	States: awsjob.States[types.ExecutionStatus]{Noun: "execution status", Prefix: "Step Functions execution", Meanings: map[types.ExecutionStatus]awsjob.Meaning{
		types.ExecutionStatusSucceeded:      awsjob.Succeeded,
		types.ExecutionStatusTimedOut:       awsjob.FailedAs(run.Timeout),
		types.ExecutionStatusFailed:         awsjob.FailedAs(run.Transient),
		types.ExecutionStatusAborted:        awsjob.FailedAs(run.Permanent),
		types.ExecutionStatusRunning:        awsjob.Running,
		types.ExecutionStatusPendingRedrive: awsjob.Running,
	}},
	ARNs: true,
}

// ExecutionName is the execution name of Interlock's run id: the id
// itself when it fits Step Functions' rules, else a sanitised, hashed
// form (awsjob.Name), at most 80 characters.
func ExecutionName(runID string) string { return awsjob.Name(runID, maxName) }

// Start calls StartExecution with job.config.arguments as a JSON object
// (keys sorted, so the same config always gives the same input) and the
// run's execution name. The region defaults to the state machine ARN's.
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	if req.RunID == "" {
		return trigger.Started{}, errors.New("step-function: the request has no run id to name the execution after")
	}
	j := kind.Job(r.AWS, req)
	fields, args, err := j.StartFields("stateMachineArn")
	if err != nil {
		return trigger.Started{}, err
	}
	machine := fields[0]
	input, err := json.Marshal(args)
	if err != nil {
		return trigger.Started{}, fmt.Errorf("step-function: input: %w", err)
	}
	name := ExecutionName(req.RunID)
	client, cfg, err := kind.Service.Client(ctx, j, awsjob.ARNRegion(machine))
	if err != nil {
		return trigger.Started{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	out, err := client.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(machine),
		Name:            aws.String(name),
		Input:           aws.String(string(input)),
	})
	if awsjob.Code(err) == codeAlreadyExists {
		return r.adopt(ctx, j, client, cfg, machine, name, input, err)
	}
	if err != nil {
		return j.StartFailed("StartExecution", err)
	}
	arn := aws.ToString(out.ExecutionArn)
	if arn == "" {
		return trigger.Started{}, errors.New("step-function StartExecution: the answer has no executionArn")
	}
	return trigger.Started{JobRunID: arn, Meta: awsjob.Meta(cfg, MetaExecutionARN, arn)}, nil
}

// adopt handles ExecutionAlreadyExists: the execution of this name is the
// one an earlier call of this same attempt started (its answer was lost)
// if it belongs to the same state machine and has the same input; then it
// is the job. Otherwise the name is taken by something else, and starting
// under another name would break exactly-once: the start is refused.
func (r Runner) adopt(ctx context.Context, j *awsjob.Job, client *sfn.Client, cfg aws.Config, machine, name string, input []byte, startErr error) (trigger.Started, error) {
	arn, ok := executionARN(machine, name)
	if !ok {
		return j.Refused("start refused: " + j.Fail("StartExecution", startErr).Error()), nil
	}
	out, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return j.StartFailed("DescribeExecution", err)
	}
	if aws.ToString(out.StateMachineArn) != unqualified(machine) || !sameJSON(aws.ToString(out.Input), input) {
		return j.Refused(fmt.Sprintf("start refused: an execution named %s already exists with another input; a second one is not started", name)), nil
	}
	return trigger.Started{JobRunID: arn, Meta: awsjob.Meta(cfg, MetaExecutionARN, arn)}, nil
}

// Poll reads the execution's status with DescribeExecution:
//
//	SUCCEEDED                 succeeded
//	TIMED_OUT                 failed, TIMEOUT
//	FAILED                    failed, TRANSIENT
//	ABORTED                   failed, PERMANENT (stopped on purpose)
//	RUNNING, PENDING_REDRIVE  running
//
// Any other status is an error: the adapter does not know it yet.
func (r Runner) Poll(ctx context.Context, req trigger.Request) (trigger.Result, error) {
	return awsjob.Poll(ctx, kind.Job(r.AWS, req), kind, "DescribeExecution",
		func(ctx context.Context, c *sfn.Client, _, arn string) (*sfn.DescribeExecutionOutput, error) {
			return c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		},
		func(out *sfn.DescribeExecutionOutput) (types.ExecutionStatus, string, bool) {
			return out.Status, failure(out), true
		})
}

// failure is what Step Functions says about an execution that ended
// badly: its error and cause.
func failure(out *sfn.DescribeExecutionOutput) string {
	var parts []string
	for _, s := range []string{aws.ToString(out.Error), aws.ToString(out.Cause)} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ": ")
}

// executionARN is the ARN of execution name of the state machine machine
// (which may name a version or an alias): executions are named under the
// state machine itself.
func executionARN(machine, name string) (string, bool) {
	parts := strings.Split(machine, ":")
	if len(parts) < 7 || parts[0] != "arn" || parts[5] != "stateMachine" {
		return "", false
	}
	return strings.Join(append(parts[:5:5], "execution", parts[6], name), ":"), true
}

// unqualified is machine without a version or alias qualifier.
func unqualified(machine string) string {
	parts := strings.Split(machine, ":")
	if len(parts) > 7 {
		parts = parts[:7]
	}
	return strings.Join(parts, ":")
}

func sameJSON(a string, b []byte) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, []byte(a)) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
}
