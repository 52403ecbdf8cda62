package databricks

import (
	"context"

	"github.com/interlockhq/interlock/internal/trigger"
)

var _ trigger.Finder = Runner{}

// Find establishes which run an interrupted trigger call started. The Jobs
// API cannot be asked by idempotency token: runs/list filters by job,
// time and state only, and runs/get shows no token. The lookup is
// therefore the call itself, repeated: run-now with the same idempotency
// token (Start derives it from the run id) returns the run that token
// started — Databricks guarantees that exactly one run is launched with a
// token — or, when the interrupted call never reached Databricks, starts
// it now. Either way the answer is the one run that holds this attempt's
// identity, so Find never answers "not found".
//
// An answer that is not a run is an error, even one Start takes as a
// refusal (the job was deleted; the token's run was deleted, which
// Databricks answers with an error): whether the interrupted call started
// a run is then unknown, and the engine asks again until it gives up.
func (r Runner) Find(ctx context.Context, req trigger.Request) (trigger.Started, bool, error) {
	return trigger.FindByStartingAgain(ctx, r.Start, req, "databricks: run-now with the call's idempotency token")
}
