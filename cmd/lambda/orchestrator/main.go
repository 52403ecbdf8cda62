// Command orchestrator is the AWS Lambda function the Step Functions state
// machine (deploy/statemachine.asl.json) calls from every Task state: it
// takes one step of a run — evaluate, trigger, poll — through the engine's
// step entry points and returns the run's next step. docs/aws.md, "Runs on
// Step Functions", says how.
package main

import "github.com/interlockhq/interlock/internal/runtime/awsrt"

func main() { awsrt.Main(awsrt.OrchestratorFunction) }
