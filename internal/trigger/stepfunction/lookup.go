package stepfunction

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
)

var _ trigger.Finder = Runner{}

// codeNoExecution is DescribeExecution's answer for a name no execution
// of the state machine has.
const codeNoExecution = "ExecutionDoesNotExist"

// Find looks up the execution an interrupted trigger call may have
// started: Start names it after Interlock's run id (ExecutionName), and an
// execution's ARN is the state machine's ARN with "execution" and that
// name, so DescribeExecution reads exactly the execution of this attempt,
// if it started, and nothing else.
//
//	found                   the execution is adopted and polled
//	ExecutionDoesNotExist   not found: the call started nothing
//	any other error         error: ask again later
//
// Standard workflows only: express executions cannot be described, and
// their start is not idempotent (see the package comment).
func (r Runner) Find(ctx context.Context, req trigger.Request) (trigger.Started, bool, error) {
	if req.RunID == "" {
		return trigger.Started{}, false, errors.New("step-function: the request has no run id, so no execution name to look up")
	}
	j := kind.Job(r.AWS, req)
	machine, err := j.Required("stateMachineArn")
	if err != nil {
		return trigger.Started{}, false, err
	}
	arn, ok := executionARN(machine, ExecutionName(req.RunID))
	if !ok {
		return trigger.Started{}, false, fmt.Errorf("step-function: job.config.stateMachineArn %q is not a state machine ARN, so no execution to look up", j.Line(machine, 200))
	}
	client, cfg, err := kind.Service.Client(ctx, j, awsjob.ARNRegion(machine))
	if err != nil {
		return trigger.Started{}, false, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	out, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if awsjob.Code(err) == codeNoExecution {
		return trigger.Started{}, false, nil
	}
	if err != nil {
		return trigger.Started{}, false, j.Fail("DescribeExecution", err)
	}
	if got := aws.ToString(out.ExecutionArn); got != "" {
		arn = got
	}
	return trigger.Started{JobRunID: arn, Meta: awsjob.Meta(cfg, MetaExecutionARN, arn)}, true, nil
}
