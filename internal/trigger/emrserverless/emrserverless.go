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
type Runner struct {
	AWS *awsjob.Session
}

var _ trigger.Runner = Runner{}

// New returns a Runner whose templates read the environment with lookup.
func New(lookup func(string) (string, bool)) Runner {
	return Runner{AWS: awsjob.NewSession(lookup)}
}

const jobType = "emr-serverless"

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
	j := r.AWS.Job(jobType, req)
	var app, name, role, entry string
	for _, f := range []struct {
		dst  *string
		name string
	}{{&app, "applicationId"}, {&name, "jobName"}, {&role, "executionRoleArn"}, {&entry, "entryPoint"}} {
		v, err := j.Required(f.name)
		if err != nil {
			return trigger.Started{}, err
		}
		*f.dst = v
	}
	args, err := j.Map("arguments")
	if err != nil {
		return trigger.Started{}, err
	}
	spark := types.SparkSubmit{EntryPoint: aws.String(entry), EntryPointArguments: awsjob.KeyValues(args)}
	if req.Config.Has("sparkSubmitParameters") {
		p, err := j.Field("sparkSubmitParameters")
		if err != nil {
			return trigger.Started{}, err
		}
		spark.SparkSubmitParameters = aws.String(p)
	}
	client, cfg, err := r.client(ctx, j)
	if err != nil {
		return trigger.Started{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	out, err := client.StartJobRun(ctx, &awsemrs.StartJobRunInput{
		ApplicationId:    aws.String(app),
		ClientToken:      aws.String(awsjob.Name(req.RunID, maxClientToken)),
		ExecutionRoleArn: aws.String(role),
		Name:             aws.String(name),
		JobDriver:        &types.JobDriverMemberSparkSubmit{Value: spark},
	})
	if err != nil {
		return j.StartFailed("StartJobRun", err)
	}
	id := aws.ToString(out.JobRunId)
	if id == "" {
		return trigger.Started{}, errors.New("emr-serverless StartJobRun: the answer has no jobRunId")
	}
	return trigger.Started{JobRunID: id, Meta: awsjob.Meta(cfg, MetaApplicationID, app, MetaJobRunID, id)}, nil
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
	j := r.AWS.Job(jobType, req)
	app, id, err := j.PollTarget(MetaApplicationID, "applicationId", MetaJobRunID, "job run id")
	if err != nil {
		return trigger.Result{}, err
	}
	client, _, err := r.client(ctx, j)
	if err != nil {
		return trigger.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	out, err := client.GetJobRun(ctx, &awsemrs.GetJobRunInput{ApplicationId: aws.String(app), JobRunId: aws.String(id)})
	if err != nil {
		return trigger.Result{}, j.Fail("GetJobRun", err)
	}
	if out.JobRun == nil {
		return trigger.Result{}, errors.New("emr-serverless GetJobRun: the answer has no jobRun")
	}
	return stateTable.Result(j, "GetJobRun", out.JobRun.State, aws.ToString(out.JobRun.StateDetails))
}

// stateTable is Poll's table.
var stateTable = awsjob.States[types.JobRunState]{Noun: "job run state", Prefix: "EMR Serverless job run", Meanings: map[types.JobRunState]awsjob.Meaning{
	types.JobRunStateSuccess:    awsjob.Succeeded,
	types.JobRunStateFailed:     awsjob.FailedAs(run.Transient),
	types.JobRunStateCancelled:  awsjob.FailedAs(run.Permanent),
	types.JobRunStateSubmitted:  awsjob.Running,
	types.JobRunStatePending:    awsjob.Running,
	types.JobRunStateScheduled:  awsjob.Running,
	types.JobRunStateRunning:    awsjob.Running,
	types.JobRunStateQueued:     awsjob.Running,
	types.JobRunStateCancelling: awsjob.Running,
}}

func (r Runner) client(ctx context.Context, j *awsjob.Job) (*awsemrs.Client, aws.Config, error) {
	return awsjob.NewClient(ctx, j, "", awsemrs.NewFromConfig, func(o *awsemrs.Options) (*aws.Retryer, **string) { return &o.Retryer, &o.BaseEndpoint })
}
