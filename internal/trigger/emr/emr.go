// Package emr runs a step on an existing Amazon EMR cluster as a
// pipeline's job: AddJobFlowSteps with one JAR step, then DescribeStep
// until the step ends.
package emr

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsemr "github.com/aws/aws-sdk-go-v2/service/emr"
	"github.com/aws/aws-sdk-go-v2/service/emr/types"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
)

// Meta keys of a started step (the reference's names), besides
// awsjob.MetaRegion.
const (
	MetaClusterID = "emr_cluster_id"
	MetaStepID    = "emr_step_id"
)

// Runner adds and polls EMR steps.
type Runner awsjob.Runner

var _ trigger.Runner = Runner{}

// kind is the job type's calls, its step's keys and its states (Poll's table).
var kind = awsjob.Kind[*awsemr.Client, awsemr.Options, types.StepState]{
	Type:    "emr",
	Service: awsjob.NewService(awsemr.NewFromConfig, func(o *awsemr.Options) (*aws.Retryer, **string) { return &o.Retryer, &o.BaseEndpoint }),
	Target:  awsjob.Target{ParentMeta: MetaClusterID, ParentField: "clusterId", IDMeta: MetaStepID, What: "step id"},
	RunID:   "single step id",
	Status:  "step status",
	States: awsjob.States[types.StepState]{Noun: "step state", Prefix: "EMR step", Meanings: map[types.StepState]awsjob.Meaning{
		types.StepStateCompleted:     awsjob.Succeeded,
		types.StepStateFailed:        awsjob.FailedAs(run.Transient),
		types.StepStateCancelled:     awsjob.FailedAs(run.Permanent),
		types.StepStateInterrupted:   awsjob.FailedAs(run.Permanent),
		types.StepStatePending:       awsjob.Running,
		types.StepStateRunning:       awsjob.Running,
		types.StepStateCancelPending: awsjob.Running,
	}},
}

// Start adds one step: the JAR job.config.command with job.config.arguments
// as "k=v" arguments sorted by key (the same config always gives the same
// command line), and ActionOnFailure CONTINUE, so a failed step leaves the
// cluster running for the next one. AddJobFlowSteps has no idempotency
// token: a call whose answer was lost and that the engine retries may add
// a second step.
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	j := kind.Job(r.AWS, req)
	fields, args, err := j.StartFields("clusterId", "stepName", "command")
	if err != nil {
		return trigger.Started{}, err
	}
	cluster, step, jar := fields[0], fields[1], fields[2]
	return awsjob.Start(ctx, j, kind, cluster, "AddJobFlowSteps",
		func(ctx context.Context, c *awsemr.Client) (*awsemr.AddJobFlowStepsOutput, error) {
			return c.AddJobFlowSteps(ctx, &awsemr.AddJobFlowStepsInput{
				JobFlowId: aws.String(cluster),
				Steps: []types.StepConfig{{
					Name:            aws.String(step),
					ActionOnFailure: types.ActionOnFailureContinue,
					HadoopJarStep:   &types.HadoopJarStepConfig{Jar: aws.String(jar), Args: awsjob.KeyValues(args)},
				}},
			})
		},
		func(out *awsemr.AddJobFlowStepsOutput) string {
			if len(out.StepIds) != 1 {
				return ""
			}
			return out.StepIds[0]
		})
}

// Poll reads the step's state with DescribeStep:
//
//	COMPLETED                         succeeded
//	FAILED                            failed, TRANSIENT
//	CANCELLED, INTERRUPTED            failed, PERMANENT (cancelled by someone, or the cluster went away)
//	PENDING, RUNNING, CANCEL_PENDING  running
//
// Any other state is an error: the adapter does not know it yet.
func (r Runner) Poll(ctx context.Context, req trigger.Request) (trigger.Result, error) {
	return awsjob.Poll(ctx, kind.Job(r.AWS, req), kind, "DescribeStep",
		func(ctx context.Context, c *awsemr.Client, cluster, id string) (*awsemr.DescribeStepOutput, error) {
			return c.DescribeStep(ctx, &awsemr.DescribeStepInput{ClusterId: aws.String(cluster), StepId: aws.String(id)})
		},
		func(out *awsemr.DescribeStepOutput) (types.StepState, string, bool) {
			if out.Step == nil || out.Step.Status == nil {
				return "", "", false
			}
			return out.Step.Status.State, detail(out.Step.Status), true
		})
}

// detail is what EMR says about a step that ended badly: the failure's
// reason and message and its log file, or the state change's reason.
func detail(st *types.StepStatus) string {
	var parts []string
	if f := st.FailureDetails; f != nil {
		for _, s := range []string{aws.ToString(f.Reason), aws.ToString(f.Message)} {
			if s != "" {
				parts = append(parts, s)
			}
		}
		if f.LogFile != nil {
			parts = append(parts, "log "+*f.LogFile)
		}
	}
	if len(parts) == 0 && st.StateChangeReason != nil {
		parts = append(parts, aws.ToString(st.StateChangeReason.Message))
	}
	return strings.Join(parts, "; ")
}
