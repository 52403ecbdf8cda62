package awsjob

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

// NewClient builds the client of an AWS service for j with newClient (the
// service's NewFromConfig): Config's configuration (hint as there), the
// SDK's retries off, as the engine retries with its own budget, and
// job.config.endpoint, when set, as the base endpoint, ahead of any the
// environment names. options points at those two fields of the service's
// Options.
func NewClient[C, O any](ctx context.Context, j *Job, hint string,
	newClient func(aws.Config, ...func(*O)) C, options func(*O) (retryer *aws.Retryer, baseEndpoint **string)) (C, aws.Config, error) {
	var none C
	cfg, err := j.Config(ctx, hint)
	if err != nil {
		return none, aws.Config{}, err
	}
	endpoint, err := j.Endpoint()
	if err != nil {
		return none, aws.Config{}, err
	}
	return newClient(cfg, func(o *O) {
		retryer, base := options(o)
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
