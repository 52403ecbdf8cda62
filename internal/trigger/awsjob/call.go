package awsjob

import (
	"context"
	"fmt"

	"github.com/interlockhq/interlock/internal/trigger"
)

// Kind is one AWS job type that starts a run and polls it: its name
// ("glue"), its service, where a started run is kept (Target) and what its
// states mean (States). Start and Poll make its calls; a job type keeps
// only what differs: the request it sends and how it reads the answer.
type Kind[C, O any, S ~string] struct {
	Type    string
	Service Service[C, O]
	Target  Target
	States  States[S]
	// RunID and Status name what a start's answer holds the run id in and
	// a poll's answer the state in ("JobRunId", "JobRun"), for the error
	// of an answer without it.
	RunID, Status string
	// ARNs: a run's id is an ARN, whose region a poll asks when neither
	// the start nor job.config recorded one (Job.Config's hint).
	ARNs bool
}

// Target is where a job type keeps what a poll needs (Job.PollTarget):
// the parent resource (a job name, cluster or application) under Meta key
// ParentMeta, else in job.config field ParentField (both "" when a run's
// id names it all), and the run's id under Meta key IDMeta, What naming
// it in errors ("job run id").
type Target struct {
	ParentMeta, ParentField, IDMeta, What string
}

// Start makes start call op, on parent, with the kind's client for j,
// bounded by the job's timeout, and answers the started job: the run id
// that id reads from the answer (an error naming Kind.RunID when it is
// empty) and
// Meta with the region, parent and the id under the Target's keys. A call
// the service refused is a failed PERMANENT start (Job.StartFailed);
// other failures are errors, for the engine to retry.
func Start[C, O any, S ~string, R any](ctx context.Context, j *Job, k Kind[C, O, S], parent, op string,
	call func(context.Context, C) (R, error), id func(R) string) (trigger.Started, error) {
	client, cfg, err := k.Service.Client(ctx, j, "")
	if err != nil {
		return trigger.Started{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	out, err := call(ctx, client)
	if err != nil {
		return j.StartFailed(op, err)
	}
	runID := id(out)
	if runID == "" {
		return trigger.Started{}, fmt.Errorf("%s %s: the answer has no %s", j.Type, op, k.RunID)
	}
	return trigger.Started{JobRunID: runID, Meta: Meta(cfg, k.Target.ParentMeta, parent, k.Target.IDMeta, runID)}, nil
}

// Poll reads the state of j's run (Job.PollTarget) with status read op,
// bounded by the job's timeout, and answers its verdict in the kind's
// table (States.Result): state reads the state and what the service says
// about it from the answer, ok false when the answer has no Kind.Status.
func Poll[C, O any, S ~string, R any](ctx context.Context, j *Job, k Kind[C, O, S], op string,
	call func(ctx context.Context, c C, parent, id string) (R, error), state func(R) (st S, detail string, ok bool)) (trigger.Result, error) {
	parent, id, err := j.PollTarget(k.Target)
	if err != nil {
		return trigger.Result{}, err
	}
	hint := ""
	if k.ARNs {
		hint = ARNRegion(id)
	}
	client, _, err := k.Service.Client(ctx, j, hint)
	if err != nil {
		return trigger.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	out, err := call(ctx, client, parent, id)
	if err != nil {
		return trigger.Result{}, j.Fail(op, err)
	}
	st, detail, ok := state(out)
	if !ok {
		return trigger.Result{}, fmt.Errorf("%s %s: the answer has no %s", j.Type, op, k.Status)
	}
	return k.States.Result(j, op, st, detail)
}

// Job prepares req for a call of the kind (Session.Job).
func (k Kind[C, O, S]) Job(s *Session, req trigger.Request) *Job { return s.Job(k.Type, req) }
