// Command stream-router is the AWS Lambda function that hands the items
// other systems write into the control and job-log tables (sensors, rerun
// requests, job reports) to the engine, from the tables' DynamoDB streams.
// docs/aws.md, "The stream-router", says what it does with each.
package main

import (
	"context"

	"github.com/interlockhq/interlock/internal/runtime/awsrt"
)

func main() {
	awsrt.Main(func(ctx context.Context, env awsrt.Env) (any, error) {
		rt, err := awsrt.RouterFromEnv(ctx, env)
		if err != nil {
			return nil, err
		}
		return awsrt.Metered(rt.Meter, rt.Handle), nil
	})
}
