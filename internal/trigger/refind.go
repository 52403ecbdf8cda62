package trigger

import (
	"context"
	"fmt"
)

// FindByStartingAgain is Find for a job type whose start is idempotent by
// the identity Interlock gives the call (a Databricks idempotency token,
// an EMR Serverless client token) but which cannot be asked by it: the
// lookup is the call itself, repeated, which returns the job that
// identity started or starts it now. It never answers "not found". An
// answer that is not a job (a refusal Start reports as a failed Result) is
// an error: whether the interrupted call started a job is then unknown.
// what names the call in that error ("databricks: run-now with the call's
// idempotency token").
func FindByStartingAgain(ctx context.Context, start func(context.Context, Request) (Started, error), req Request, what string) (Started, bool, error) {
	st, err := start(ctx, req)
	switch {
	case err != nil:
		return Started{}, false, err
	case st.Result != nil:
		return Started{}, false, fmt.Errorf("%s was refused, so whether the interrupted call started a job is unknown: %s", what, st.Result.Message)
	}
	return st, true, nil
}
