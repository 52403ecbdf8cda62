package awsrt

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interlockhq/interlock/internal/app"
)

// Main runs a Lambda function: build makes its handler from the process's
// environment, then lambda.Start serves it. An error from build — a
// missing required variable ("<function>: missing required env vars: A,
// B"), a bad value — is printed on stderr and ends the process with
// status 1 before the first invocation, so a misconfigured function fails
// its init, visibly, instead of every invocation.
//
// When the OTEL_* environment names an OTLP endpoint (docs/telemetry.md)
// the function's decisions are traced, and each invocation's spans are
// sent before it returns: Lambda may freeze the process as soon as it has.
func Main(build func(ctx context.Context, env Env) (any, error)) {
	ctx := context.Background()
	if _, err := app.SetupTracing(ctx, ""); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h, err := build(ctx, Env{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if app.Tracing() {
		lambda.Start(flushing{next: lambda.NewHandler(h), flush: app.FlushTraces})
		return
	}
	lambda.Start(h)
}

// flushWait bounds the flush at an invocation's end: a collector that does
// not answer costs the invocation this much, not its timeout.
const flushWait = 2 * time.Second

// flushing is a handler that sends the invocation's spans before it
// returns (flush errors are the collector's problem, not the invocation's:
// they are printed, the answer stands).
type flushing struct {
	next  lambda.Handler
	flush func(context.Context) error
}

func (f flushing) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	out, err := f.next.Invoke(ctx, payload)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushWait)
	defer cancel()
	if ferr := f.flush(fctx); ferr != nil {
		fmt.Fprintln(os.Stderr, "telemetry: spans of this invocation not sent:", ferr)
	}
	return out, err
}
