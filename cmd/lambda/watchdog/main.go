// Command watchdog is the AWS Lambda function an EventBridge schedule
// invokes for one watchdog pass on the DynamoDB store. docs/aws.md, "The
// watchdog on AWS", says what it checks and reports.
package main

import "github.com/interlockhq/interlock/internal/runtime/awsrt"

func main() { awsrt.Main(awsrt.WatchdogFromEnv) }
