// Command stream-router is the AWS Lambda function that hands the items
// other systems write into the control and job-log tables (sensors, rerun
// requests, job reports) to the engine, from the tables' DynamoDB streams.
// docs/aws.md, "The stream-router", says what it does with each.
package main

import "github.com/interlockhq/interlock/internal/runtime/awsrt"

func main() { awsrt.Main(awsrt.RouterFunction) }
