// Command alert-dispatcher is the alert-dispatcher Lambda function (docs/aws.md, "The event
// path"); its handler and its configuration live in
// internal/runtime/awsrt.
package main

import "github.com/interlockhq/interlock/internal/runtime/awsrt"

func main() { awsrt.Main(awsrt.DispatcherFromEnv) }
