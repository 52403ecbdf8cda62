// Package emr runs a step on an existing Amazon EMR cluster as a
// pipeline's job: AddJobFlowSteps with one JAR step, then DescribeStep
// until the step ends.
package emr

import (
	"context"
	"errors"
	"fmt"
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
type Runner struct {
	AWS *awsjob.Session
}

var _ trigger.Runner = Runner{}

// New returns a Runner whose templates read the environment with lookup.
func New(lookup func(string) (string, bool)) Runner {
	return Runner{AWS: awsjob.NewSession(lookup)}
}

const jobType = "emr"

// Start adds one step: the JAR job.config.command with job.config.arguments
// as "k=v" arguments sorted by key (the same config always gives the same
// command line), and ActionOnFailure CONTINUE, so a failed step leaves the
// cluster running for the next one. AddJobFlowSteps has no idempotency
// token: a call whose answer was lost and that the engine retries may add
// a second step.
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	j := r.AWS.Job(jobType, req)
	cluster, err := j.Required("clusterId")
	if err != nil {
		return trigger.Started{}, err
	}
	step, err := j.Required("stepName")
	if err != nil {
		return trigger.Started{}, err
	}
	jar, err := j.Required("command")
	if err != nil {
		return trigger.Started{}, err
	}
	args, err := j.Map("arguments")
	if err != nil {
		return trigger.Started{}, err
	}
	client, cfg, err := r.client(ctx, j)
	if err != nil {
		return trigger.Started{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	out, err := client.AddJobFlowSteps(ctx, &awsemr.AddJobFlowStepsInput{
		JobFlowId: aws.String(cluster),
		Steps: []types.StepConfig{{
			Name:            aws.String(step),
			ActionOnFailure: types.ActionOnFailureContinue,
			HadoopJarStep:   &types.HadoopJarStepConfig{Jar: aws.String(jar), Args: awsjob.KeyValues(args)},
		}},
	})
	if err != nil {
		return j.StartFailed("AddJobFlowSteps", err)
	}
	if len(out.StepIds) != 1 || out.StepIds[0] == "" {
		return trigger.Started{}, fmt.Errorf("emr AddJobFlowSteps: want one step id, got %d", len(out.StepIds))
	}
	id := out.StepIds[0]
	return trigger.Started{JobRunID: id, Meta: awsjob.Meta(cfg, MetaClusterID, cluster, MetaStepID, id)}, nil
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
	j := r.AWS.Job(jobType, req)
	cluster, id, err := j.PollTarget(MetaClusterID, "clusterId", MetaStepID, "step id")
	if err != nil {
		return trigger.Result{}, err
	}
	client, _, err := r.client(ctx, j)
	if err != nil {
		return trigger.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	out, err := client.DescribeStep(ctx, &awsemr.DescribeStepInput{ClusterId: aws.String(cluster), StepId: aws.String(id)})
	if err != nil {
		return trigger.Result{}, j.Fail("DescribeStep", err)
	}
	if out.Step == nil || out.Step.Status == nil {
		return trigger.Result{}, errors.New("emr DescribeStep: the answer has no step status")
	}
	return stateTable.Result(j, "DescribeStep", out.Step.Status.State, detail(out.Step.Status))
}

// stateTable is Poll's table.
var stateTable = awsjob.States[types.StepState]{Noun: "step state", Prefix: "EMR step", Meanings: map[types.StepState]awsjob.Meaning{
	types.StepStateCompleted:     awsjob.Succeeded,
	types.StepStateFailed:        awsjob.FailedAs(run.Transient),
	types.StepStateCancelled:     awsjob.FailedAs(run.Permanent),
	types.StepStateInterrupted:   awsjob.FailedAs(run.Permanent),
	types.StepStatePending:       awsjob.Running,
	types.StepStateRunning:       awsjob.Running,
	types.StepStateCancelPending: awsjob.Running,
}}

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

func (r Runner) client(ctx context.Context, j *awsjob.Job) (*awsemr.Client, aws.Config, error) {
	return awsjob.NewClient(ctx, j, "", awsemr.NewFromConfig, func(o *awsemr.Options) (*aws.Retryer, **string) { return &o.Retryer, &o.BaseEndpoint })
}
