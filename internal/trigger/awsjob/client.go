package awsjob

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Service is the AWS service of a job type: its client constructor (the
// service's NewFromConfig), and where its Options keep the retryer and the
// base endpoint that Client sets.
type Service[C, O any] struct {
	New     func(aws.Config, ...func(*O)) C
	Options func(*O) (retryer *aws.Retryer, baseEndpoint **string)
}

// NewService is the Service of a client constructor and its Options' fields.
func NewService[C, O any](newClient func(aws.Config, ...func(*O)) C, options func(*O) (*aws.Retryer, **string)) Service[C, O] {
	return Service[C, O]{New: newClient, Options: options}
}

// Client builds the service's client for j: Config's configuration (hint
// as there), the SDK's retries off, as the engine retries with its own
// budget, and job.config.endpoint, when set, as the base endpoint, ahead
// of any the environment names.
func (s Service[C, O]) Client(ctx context.Context, j *Job, hint string) (C, aws.Config, error) {
	var none C
	cfg, err := j.Config(ctx, hint)
	if err != nil {
		return none, aws.Config{}, err
	}
	endpoint, err := j.Endpoint()
	if err != nil {
		return none, aws.Config{}, err
	}
	return s.New(cfg, func(o *O) {
		retryer, base := s.Options(o)
		*retryer = aws.NopRetryer{}
		if endpoint != "" {
			*base = aws.String(endpoint)
		}
	}), cfg, nil
}

// Meaning is what one state of a job system means for the run: it
// succeeded, it is running, or it failed with a category.
type Meaning struct {
	status   trigger.Status
	category run.Category
}

// The verdicts of a job type's state table.
var (
	Succeeded = Meaning{status: trigger.StatusSucceeded}
	Running   = Meaning{status: trigger.StatusRunning}
)

// FailedAs is the verdict of a state in which the job failed, of category c.
func FailedAs(c run.Category) Meaning { return Meaning{status: trigger.StatusFailed, category: c} }

// States is a job type's state table: what each state its system reports
// means for the run.
type States[S ~string] struct {
	Noun     string // how an error names a state: "step state"
	Prefix   string // a failed run's message starts with it and the state: "EMR step"
	Meanings map[S]Meaning
}

// Result is what a poll answers for state, read by op: its verdict; a
// running job's message is the state, a failed one's "<Prefix> <state>:
// <detail>" (Job.Failed). A state the table does not hold is an error:
// the adapter does not know it yet.
func (t States[S]) Result(j *Job, op string, state S, detail string) (trigger.Result, error) {
	v, ok := t.Meanings[state]
	switch {
	case !ok:
		return trigger.Result{}, fmt.Errorf("%s %s: unknown %s %q", j.Type, op, t.Noun, j.Line(string(state), 40))
	case v.status == trigger.StatusFailed:
		return j.Failed(v.category, t.Prefix+" "+string(state), detail), nil
	case v.status == trigger.StatusRunning:
		return trigger.Result{Status: trigger.StatusRunning, Message: string(state)}, nil
	}
	return trigger.Result{Status: v.status}, nil
}
