# The CloudWatch alarms of seed 003 (reference §7.6): 5-minute periods,
# threshold ≥ 1 unless noted, missing data is OK. Each is named
# "<prefix>-…", which the default bus's alarm rules match: their state
# changes become INFRA_ALARM events (eventbridge.tf). sns_alarm_topic_arn,
# when set, receives the alarm and OK actions too.

locals {
  alarm_actions = var.sns_alarm_topic_arn == "" ? [] : [var.sns_alarm_topic_arn]
  dlqs = merge(
    { for k, q in aws_sqs_queue.stream_dlq : k => q.name },
    { for k, q in aws_sqs_queue.dlq : k => q.name },
  )
  # The functions that read a stream: Lambda publishes IteratorAge per
  # function (dimension FunctionName, the maximum over its mappings), not
  # per mapping — a mapping's own metrics (EventSourceMappingUUID) are
  # only the opt-in event counts of metrics_config, which has no iterator
  # age.
  stream_functions = distinct([for k, m in local.stream_mappings : m.function])

  # Every alarm: "<prefix>-<key>" => what it watches.
  alarms = merge(
    { for fn, _ in local.functions : "${fn}-errors" => {
      description = "The ${fn} function failed an invocation (or its init)."
      namespace   = "AWS/Lambda", metric = "Errors", statistic = "Sum", threshold = 1
      dimensions  = { FunctionName = aws_lambda_function.fn[fn].function_name }
    } },
    { "sfn-failed" = {
      description = "A run's execution failed (InfraFailure or a timeout)."
      namespace   = "AWS/States", metric = "ExecutionsFailed", statistic = "Sum", threshold = 1
      dimensions  = { StateMachineArn = local.state_machine_arn }
    } },
    { for k, q in local.dlqs : "${k}-dlq" => {
      description = "Messages are waiting in ${q}: records or alerts that were not processed."
      namespace   = "AWS/SQS", metric = "ApproximateNumberOfMessagesVisible", statistic = "Maximum", threshold = 1
      dimensions  = { QueueName = q }
    } },
    { for fn in local.stream_functions : "${fn}-iterator-age" => {
      description = "The ${fn} function is more than 5 minutes behind a stream it reads (for the event-publisher: an event the bus refuses is being retried)."
      namespace   = "AWS/Lambda", metric = "IteratorAge", statistic = "Maximum", threshold = 300000
      dimensions  = { FunctionName = aws_lambda_function.fn[fn].function_name }
    } },
    # The functions' own metrics (namespace Interlock, written to their
    # logs in the embedded metric format; metrics.tf), by Environment: one
    # in 5 minutes alarms.
    { for k, m in {
      "alerts-dead-lettered" = { metric = "AlertsDeadLettered", description = "A sink refused an alert for good: it is a dead letter in the events table (interlock status shows it)." }
      "watchdog-degraded"    = { metric = "WATCHDOG_DEGRADED", description = "A watchdog pass could not run one or more of its checks (WATCHDOG_DEGRADED): what it watches is unwatched until a pass succeeds." }
      } : k => merge(m, {
        namespace = local.metrics_namespace, statistic = "Sum", threshold = 1, dimensions = { Environment = var.environment }
    }) },
    # A firing failed (Scheduler could not deliver it, or the sla-monitor
    # failed it): it is being replayed from the SLA DLQ; "sla-final-dlq"
    # above is the one that was not.
    { "sla-dlq" = {
      description = "A timer's firing failed and was sent to ${aws_sqs_queue.read["sla-dlq"].name} to be replayed."
      namespace   = "AWS/SQS", metric = "NumberOfMessagesSent", statistic = "Sum", threshold = 1
      dimensions  = { QueueName = aws_sqs_queue.read["sla-dlq"].name }
    } },
  )
}

resource "aws_cloudwatch_metric_alarm" "alarm" {
  for_each            = local.alarms
  alarm_name          = "${local.prefix}-${each.key}"
  alarm_description   = each.value.description
  namespace           = each.value.namespace
  metric_name         = each.value.metric
  dimensions          = each.value.dimensions
  statistic           = each.value.statistic
  period              = 300
  evaluation_periods  = 1
  threshold           = each.value.threshold
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags
}
