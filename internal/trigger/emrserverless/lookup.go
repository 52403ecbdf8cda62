package emrserverless

import (
	"context"

	"github.com/interlockhq/interlock/internal/trigger"
)

var _ trigger.Finder = Runner{}

// Find establishes which job run an interrupted trigger call started. EMR
// Serverless cannot be asked by client token: ListJobRuns filters by
// time, state and mode, and neither its summaries nor GetJobRun show the
// token (the run's name is job.config.jobName, shared by every period).
// The lookup is therefore the call itself, repeated: StartJobRun with the
// same client token (Start derives it from the run id) and the same
// request returns the job run that token started, or starts it now when
// the interrupted call never reached EMR Serverless. Either way the answer
// is the one job run that holds this attempt's identity, so Find never
// answers "not found".
//
// An answer that is not a job run is an error, even one Start takes as a
// refusal — a ConflictException when job.config changed since the call,
// so that the request differs under the same token; an application that
// no longer exists: whether the interrupted call started a job run is
// then unknown, and the engine asks again until it gives up.
func (r Runner) Find(ctx context.Context, req trigger.Request) (trigger.Started, bool, error) {
	return trigger.FindByStartingAgain(ctx, r.Start, req, "emr-serverless: StartJobRun with the call's client token")
}
