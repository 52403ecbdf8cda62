// Package awsrt is the AWS runtime: the Lambda handlers that adapt AWS
// deliveries to Interlock — the outbox publisher (the events table's
// stream → the EventBridge bus, outbox.go), the event sink (bus events
// from outside Interlock → the event log, sink.go), the alert dispatcher
// (an SQS batch of bus events → Slack through the local Slack sink,
// dispatcher.go) — and what their mains share: the environment (env.go),
// the stores and clients they open (…FromEnv), the metrics each
// invocation writes to its log in CloudWatch's embedded metric format
// (metrics.go, Metered), and Main.
//
// It adapts and sequences; it decides nothing about runs or periods, never
// builds or parses a DynamoDB key (the store's package owns them), reads
// the time only from a clock.Clock, and never logs a secret. docs/aws.md,
// "The event path", describes the whole path and its failure handling.
package awsrt
