package awsrt

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

// Main runs a Lambda function: build makes its handler from the process's
// environment, then lambda.Start serves it. An error from build — a
// missing required variable ("<function>: missing required env vars: A,
// B"), a bad value — is printed on stderr and ends the process with
// status 1 before the first invocation, so a misconfigured function fails
// its init, visibly, instead of every invocation.
func Main(build func(ctx context.Context, env Env) (any, error)) {
	h, err := build(context.Background(), Env{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lambda.Start(h)
}
