// Command sla-monitor is the AWS Lambda function that realises the
// engine's SLA, cron, period and resume timers as EventBridge Scheduler
// schedules (from the control table's stream) and processes their
// firings with the engine. docs/aws.md, "SLA alerts and cron on
// Scheduler", says how.
package main

import "github.com/interlockhq/interlock/internal/runtime/awsrt"

func main() { awsrt.Main(awsrt.SLAMonitorFromEnv) }
