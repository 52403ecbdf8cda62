// Command api is the AWS Lambda function serving the control plane's HTTP
// handler — the /v1 API and the dashboard, the handler `interlock serve
// --store dynamodb://…` serves — behind a Lambda function URL with AWS_IAM
// auth. docs/aws.md, "The API function", says how to reach it.
package main

import "github.com/interlockhq/interlock/internal/runtime/awsrt"

func main() { awsrt.Main(awsrt.APIFromEnv) }
