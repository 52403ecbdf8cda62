package httpx

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

// JobClient is what an HTTP-family job type's runner holds (each declares
// `type Runner httpx.JobClient`): the fields the app sets and a test
// points at its server.
type JobClient struct {
	// Client sends the calls; nil means httpx.Default() (no internal
	// address allowed).
	Client *Client
	// LookupEnv reads ${env:NAME} values; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Start makes the start call of a job of type typ and sorts what came of
// it the same way for every HTTP-family job type:
//
//	2xx, or a status in started    the response, for the job type to read
//	408, 429, 5xx                  error (infrastructure, retried)
//	network error, timeout         error (retried)
//	other 3xx and 4xx              refused: "<typ>: <refusal><description>"
//	refused address                refused (SSRF guard)
//	other status                   error: "<typ>: unexpected answer: …"
//
// A refused call is a failed PERMANENT result, for the job type to
// return as its start's result: sending the same call again won't help.
func Start(ctx context.Context, c *Client, call Call, sec *Secrets, typ, refusal string, started ...int) (Response, *trigger.Result, error) {
	resp, err := c.Do(ctx, call, sec)
	switch {
	case errors.Is(err, ErrBlocked):
		return Response{}, refused(typ + ": " + err.Error()), nil
	case err != nil:
		return Response{}, nil, fmt.Errorf("%s: %w", typ, err)
	}
	switch s := resp.Status; {
	case s >= 200 && s <= 299 || slices.Contains(started, s):
		return resp, nil, nil
	case Retryable(s):
		return Response{}, nil, fmt.Errorf("%s: %s", typ, Describe(call, resp, sec))
	case s >= 300 && s <= 499:
		return Response{}, refused(typ + ": " + refusal + Describe(call, resp, sec)), nil
	default:
		return Response{}, nil, fmt.Errorf("%s: unexpected answer: %s", typ, Describe(call, resp, sec))
	}
}

func refused(msg string) *trigger.Result {
	return &trigger.Result{Status: trigger.StatusFailed, Category: run.Permanent, Message: msg}
}
