// Package emrserverless runs a Spark job on an Amazon EMR Serverless
// application as a pipeline's job: StartJobRun, then GetJobRun until the
// run ends.
package emrserverless

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsemrs "github.com/aws/aws-sdk-go-v2/service/emrserverless"
	"github.com/aws/aws-sdk-go-v2/service/emrserverless/types"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
)

// Meta keys of a started job run (the reference's names), besides
// awsjob.MetaRegion.
const (
	MetaApplicationID = "emr_sl_application_id"
	MetaJobRunID      = "emr_sl_job_run_id"
)

// maxClientToken is the longest client token StartJobRun accepts.
const maxClientToken = 64

// Runner starts and polls EMR Serverless job runs.
type Runner awsjob.Runner

var _ trigger.Runner = Runner{}

// kind is the job type's calls, its run's keys and its states (Poll's table).
var kind = awsjob.Kind[*awsemrs.Client, awsemrs.Options, types.JobRunState]{
	Type:    "emr-serverless",
	Service: awsjob.NewService(awsemrs.NewFromConfig, func(o *awsemrs.Options) (*aws.Retryer, **string) { return &o.Retryer, &o.BaseEndpoint }),
	Target:  awsjob.Target{ParentMeta: MetaApplicationID, ParentField: "applicationId", IDMeta: MetaJobRunID, What: "job run id"},
	RunID:   "jobRunId",
	Status:  "jobRun",
	States: awsjob.States[types.JobRunState]{Noun: "job run state", Prefix: "EMR Serverless job run", Meanings: map[types.JobRunState]awsjob.Meaning{
		types.JobRunStateSuccess:    awsjob.Succeeded,
		types.JobRunStateFailed:     awsjob.FailedAs(run.Transient),
		types.JobRunStateCancelled:  awsjob.FailedAs(run.Permanent),
		types.JobRunStateSubmitted:  awsjob.Running,
		types.JobRunStatePending:    awsjob.Running,
		types.JobRunStateScheduled:  awsjob.Running,
		types.JobRunStateRunning:    awsjob.Running,
		types.JobRunStateQueued:     awsjob.Running,
		types.JobRunStateCancelling: awsjob.Running,
	}},
}

// Start calls StartJobRun with a Spark job driver (the API refuses a run
// without one, which is what the reference sent): job.config.entryPoint,
// job.config.arguments as "k=v" entry point arguments sorted by key, and
// job.config.sparkSubmitParameters, run as job.config.executionRoleArn.
// The client token is derived from Interlock's run id, so a start call
// the engine retries after a lost answer gets the run the first call
// started instead of a second one.
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	if req.RunID == "" {
		return trigger.Started{}, errors.New("emr-serverless: the request has no run id to derive a client token from")
	}
	j := kind.Job(r.AWS, req)
	fields, args, err := j.StartFields("applicationId", "jobName", "executionRoleArn", "entryPoint")
	if err != nil {
		return trigger.Started{}, err
	}
	app, name, role, entry := fields[0], fields[1], fields[2], fields[3]
	spark := types.SparkSubmit{EntryPoint: aws.String(entry), EntryPointArguments: awsjob.KeyValues(args)}
	if req.Config.Has("sparkSubmitParameters") {
		p, err := j.Field("sparkSubmitParameters")
		if err != nil {
			return trigger.Started{}, err
		}
		spark.SparkSubmitParameters = aws.String(p)
	}
	return awsjob.Start(ctx, j, kind, app, "StartJobRun",
		func(ctx context.Context, c *awsemrs.Client) (*awsemrs.StartJobRunOutput, error) {
			return c.StartJobRun(ctx, &awsemrs.StartJobRunInput{
				ApplicationId:    aws.String(app),
				ClientToken:      aws.String(awsjob.Name(req.RunID, maxClientToken)),
				ExecutionRoleArn: aws.String(role),
				Name:             aws.String(name),
				JobDriver:        &types.JobDriverMemberSparkSubmit{Value: spark},
			})
		},
		func(out *awsemrs.StartJobRunOutput) string { return aws.ToString(out.JobRunId) })
}

// Poll reads the run's state with GetJobRun:
//
//	SUCCESS                                               succeeded
//	FAILED                                                failed, TRANSIENT
//	CANCELLED                                             failed, PERMANENT (cancelled on purpose)
//	SUBMITTED, PENDING, SCHEDULED, RUNNING, QUEUED, CANCELLING  running
//
// Any other state is an error: the adapter does not know it yet.
func (r Runner) Poll(ctx context.Context, req trigger.Request) (trigger.Result, error) {
	return awsjob.Poll(ctx, kind.Job(r.AWS, req), kind, "GetJobRun",
		func(ctx context.Context, c *awsemrs.Client, app, id string) (*awsemrs.GetJobRunOutput, error) {
			return c.GetJobRun(ctx, &awsemrs.GetJobRunInput{ApplicationId: aws.String(app), JobRunId: aws.String(id)})
		},
		func(out *awsemrs.GetJobRunOutput) (types.JobRunState, string, bool) {
			if out.JobRun == nil {
				return "", "", false
			}
			return out.JobRun.State, aws.ToString(out.JobRun.StateDetails), true
		})
}
