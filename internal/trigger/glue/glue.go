// Package glue runs an AWS Glue job as a pipeline's job: StartJobRun, then
// GetJobRun until the run ends. It never reads the run's CloudWatch logs:
// a run's outcome is its state, classified explicitly (see Poll), not a
// guess from free-text log lines.
package glue

import (
	"context"
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
type Runner awsjob.Runner

var _ trigger.Runner = Runner{}

// kind is the job type's calls, its run's keys and its states (Poll's table).
var kind = awsjob.Kind[*awsglue.Client, awsglue.Options, types.JobRunState]{
	Type:    "glue",
	Service: awsjob.NewService(awsglue.NewFromConfig, func(o *awsglue.Options) (*aws.Retryer, **string) { return &o.Retryer, &o.BaseEndpoint }),
	Target:  awsjob.Target{ParentMeta: MetaJobName, ParentField: "jobName", IDMeta: MetaRunID, What: "job run id"},
	RunID:   "JobRunId",
	Status:  "JobRun",
	States: awsjob.States[types.JobRunState]{Noun: "job run state", Prefix: "Glue job run", Meanings: map[types.JobRunState]awsjob.Meaning{
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
	}},
}

// Start calls StartJobRun with the job's arguments plus --par_day and, for
// hourly periods, --par_hour. Glue has no idempotency token: a call whose
// answer was lost and that the engine retries may start a second run.
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	j := kind.Job(r.AWS, req)
	fields, args, err := j.StartFields("jobName")
	if err != nil {
		return trigger.Started{}, err
	}
	name := fields[0]
	if _, set := args[ArgDay]; !set && req.Vars.Date != "" {
		args[ArgDay] = strings.ReplaceAll(req.Vars.Date, "-", "")
	}
	if _, set := args[ArgHour]; !set && req.Vars.Hour != "" {
		args[ArgHour] = req.Vars.Hour
	}
	return awsjob.Start(ctx, j, kind, name, "StartJobRun",
		func(ctx context.Context, c *awsglue.Client) (*awsglue.StartJobRunOutput, error) {
			return c.StartJobRun(ctx, &awsglue.StartJobRunInput{JobName: aws.String(name), Arguments: args})
		},
		func(out *awsglue.StartJobRunOutput) string { return aws.ToString(out.JobRunId) })
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
	return awsjob.Poll(ctx, kind.Job(r.AWS, req), kind, "GetJobRun",
		func(ctx context.Context, c *awsglue.Client, name, id string) (*awsglue.GetJobRunOutput, error) {
			return c.GetJobRun(ctx, &awsglue.GetJobRunInput{JobName: aws.String(name), RunId: aws.String(id)})
		},
		func(out *awsglue.GetJobRunOutput) (types.JobRunState, string, bool) {
			if out.JobRun == nil {
				return "", "", false
			}
			return out.JobRun.JobRunState, aws.ToString(out.JobRun.ErrorMessage), true
		})
}
