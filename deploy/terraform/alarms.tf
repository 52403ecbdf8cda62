# The CloudWatch alarms of seed 003 (reference §7.6): 5-minute periods,
# threshold ≥ 1 unless noted, missing data is OK. Each is named
# "<prefix>-…", which the default bus's alarm rules match: their state
# changes become INFRA_ALARM events (eventbridge.tf). sns_alarm_topic_arn,
# when set, receives the alarm and OK actions too.

locals {
  alarm_actions = var.sns_alarm_topic_arn == "" ? [] : [var.sns_alarm_topic_arn]
  dlqs = merge(
    { for k, q in aws_sqs_queue.stream_dlq : k => q.name },
    { alerts = aws_sqs_queue.alerts_dlq.name, async = aws_sqs_queue.async_dlq.name },
  )
}

resource "aws_cloudwatch_metric_alarm" "lambda_errors" {
  for_each            = local.functions
  alarm_name          = "${local.prefix}-${each.key}-errors"
  alarm_description   = "The ${each.key} function failed an invocation (or its init)."
  namespace           = "AWS/Lambda"
  metric_name         = "Errors"
  dimensions          = { FunctionName = aws_lambda_function.fn[each.key].function_name }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 1
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags
}

resource "aws_cloudwatch_metric_alarm" "sfn_failed" {
  alarm_name          = "${local.prefix}-sfn-failed"
  alarm_description   = "A run's execution failed (InfraFailure or a timeout)."
  namespace           = "AWS/States"
  metric_name         = "ExecutionsFailed"
  dimensions          = { StateMachineArn = aws_sfn_state_machine.pipeline.arn }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 1
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags
}

resource "aws_cloudwatch_metric_alarm" "dlq_depth" {
  for_each            = local.dlqs
  alarm_name          = "${local.prefix}-${each.key}-dlq"
  alarm_description   = "Messages are waiting in ${each.value}: records or alerts that were not processed."
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateNumberOfMessagesVisible"
  dimensions          = { QueueName = each.value }
  statistic           = "Maximum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 1
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags
}

resource "aws_cloudwatch_metric_alarm" "iterator_age" {
  for_each            = local.stream_mappings
  alarm_name          = "${local.prefix}-${each.key}-iterator-age"
  alarm_description   = "The ${each.value.function} function is more than 5 minutes behind its stream."
  namespace           = "AWS/Lambda"
  metric_name         = "IteratorAge"
  dimensions          = { FunctionName = aws_lambda_function.fn[each.value.function].function_name, EventSourceMappingUUID = aws_lambda_event_source_mapping.stream[each.key].uuid }
  statistic           = "Maximum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 300000
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags
}
