// Package glue runs an AWS Glue job as a pipeline's job: StartJobRun, then
// GetJobRun until the run ends. It never reads the run's CloudWatch logs:
// a run's outcome is its state, classified explicitly (see Poll), not a
// guess from free-text log lines.
package glue

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsglue "github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
)

// Meta keys of a started Glue job run (the reference's names), besides
// awsjob.MetaRegion.
const (
	MetaJobName = "glue_job_name"
	MetaRunID   = "glue_job_run_id"
)

// The arguments added to every run unless job.config.arguments sets them.
const (
	ArgDay  = "--par_day"  // the period's date, YYYYMMDD
	ArgHour = "--par_hour" // the period's hour, HH (hourly periods only)
)

// Runner starts and polls Glue job runs.
type Runner struct {
	AWS *awsjob.Session
}

var _ trigger.Runner = Runner{}

// New returns a Runner whose templates read the environment with lookup.
func New(lookup func(string) (string, bool)) Runner {
	return Runner{AWS: awsjob.NewSession(lookup)}
}

const jobType = "glue"

// Start calls StartJobRun with the job's arguments plus --par_day and, for
// hourly periods, --par_hour. Glue has no idempotency token: a call whose
// answer was lost and that the engine retries may start a second run.
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	j := r.AWS.Job(jobType, req)
	name, err := j.Required("jobName")
	if err != nil {
		return trigger.Started{}, err
	}
	args, err := j.Map("arguments")
	if err != nil {
		return trigger.Started{}, err
	}
	if args == nil {
		args = map[string]string{}
	}
	if _, set := args[ArgDay]; !set && req.Vars.Date != "" {
		args[ArgDay] = strings.ReplaceAll(req.Vars.Date, "-", "")
	}
	if _, set := args[ArgHour]; !set && req.Vars.Hour != "" {
		args[ArgHour] = req.Vars.Hour
	}
	client, cfg, err := r.client(ctx, j)
	if err != nil {
		return trigger.Started{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	out, err := client.StartJobRun(ctx, &awsglue.StartJobRunInput{JobName: aws.String(name), Arguments: args})
	if err != nil {
		return j.StartFailed("StartJobRun", err)
	}
	id := aws.ToString(out.JobRunId)
	if id == "" {
		return trigger.Started{}, errors.New("glue StartJobRun: the answer has no JobRunId")
	}
	return trigger.Started{JobRunID: id, Meta: awsjob.Meta(cfg, MetaJobName, name, MetaRunID, id)}, nil
}

// Poll reads the run's state with GetJobRun:
//
//	SUCCEEDED                          succeeded
//	TIMEOUT                            failed, TIMEOUT
//	FAILED, ERROR, EXPIRED             failed, TRANSIENT
//	STOPPED                            failed, PERMANENT (someone stopped it on purpose)
//	STARTING, RUNNING, STOPPING, WAITING  running
//
// Any other state is an error: the adapter does not know it yet.
func (r Runner) Poll(ctx context.Context, req trigger.Request) (trigger.Result, error) {
	j := r.AWS.Job(jobType, req)
	name, id, err := j.PollTarget(MetaJobName, "jobName", MetaRunID, "job run id")
	if err != nil {
		return trigger.Result{}, err
	}
	client, _, err := r.client(ctx, j)
	if err != nil {
		return trigger.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	out, err := client.GetJobRun(ctx, &awsglue.GetJobRunInput{JobName: aws.String(name), RunId: aws.String(id)})
	if err != nil {
		return trigger.Result{}, j.Fail("GetJobRun", err)
	}
	if out.JobRun == nil {
		return trigger.Result{}, errors.New("glue GetJobRun: the answer has no JobRun")
	}
	return stateTable.Result(j, "GetJobRun", out.JobRun.JobRunState, aws.ToString(out.JobRun.ErrorMessage))
}

// stateTable is Poll's table.
var stateTable = awsjob.States[types.JobRunState]{Noun: "job run state", Prefix: "Glue job run", Meanings: map[types.JobRunState]awsjob.Meaning{
	types.JobRunStateSucceeded: awsjob.Succeeded,
	types.JobRunStateTimeout:   awsjob.FailedAs(run.Timeout),
	types.JobRunStateFailed:    awsjob.FailedAs(run.Transient),
	types.JobRunStateError:     awsjob.FailedAs(run.Transient),
	types.JobRunStateExpired:   awsjob.FailedAs(run.Transient),
	types.JobRunStateStopped:   awsjob.FailedAs(run.Permanent),
	types.JobRunStateStarting:  awsjob.Running,
	types.JobRunStateRunning:   awsjob.Running,
	types.JobRunStateStopping:  awsjob.Running,
	types.JobRunStateWaiting:   awsjob.Running,
}}

func (r Runner) client(ctx context.Context, j *awsjob.Job) (*awsglue.Client, aws.Config, error) {
	return awsjob.NewClient(ctx, j, "", awsglue.NewFromConfig, func(o *awsglue.Options) (*aws.Retryer, **string) { return &o.Retryer, &o.BaseEndpoint })
}
