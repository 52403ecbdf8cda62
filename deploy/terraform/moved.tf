# Addresses that changed when repeated resources became one resource with
# for_each: state written by an earlier version of the module moves to the
# new address instead of the old resource being destroyed and a new one
# created (a queue destroyed loses its messages).

moved {
  from = aws_sqs_queue.async_dlq
  to   = aws_sqs_queue.dlq["async"]
}
moved {
  from = aws_sqs_queue.alerts_dlq
  to   = aws_sqs_queue.dlq["alerts"]
}
moved {
  from = aws_sqs_queue.sla_dlq_final
  to   = aws_sqs_queue.dlq["sla-final"]
}
moved {
  from = aws_sqs_queue.alerts
  to   = aws_sqs_queue.read["alerts"]
}
moved {
  from = aws_sqs_queue.sla_dlq
  to   = aws_sqs_queue.read["sla-dlq"]
}
moved {
  from = aws_lambda_event_source_mapping.alerts
  to   = aws_lambda_event_source_mapping.read["alerts"]
}
moved {
  from = aws_lambda_event_source_mapping.sla_replay
  to   = aws_lambda_event_source_mapping.read["sla-dlq"]
}
moved {
  from = aws_cloudwatch_event_rule.all_events
  to   = aws_cloudwatch_event_rule.route["all-events"]
}
moved {
  from = aws_cloudwatch_event_rule.alert_events
  to   = aws_cloudwatch_event_rule.route["alert-events"]
}
moved {
  from = aws_cloudwatch_event_rule.alarms
  to   = aws_cloudwatch_event_rule.route["alarms"]
}
moved {
  from = aws_cloudwatch_event_rule.alarm_alerts
  to   = aws_cloudwatch_event_rule.route["alarm-alerts"]
}
moved {
  from = aws_cloudwatch_event_target.all_events
  to   = aws_cloudwatch_event_target.route["all-events"]
}
moved {
  from = aws_cloudwatch_event_target.alert_events
  to   = aws_cloudwatch_event_target.route["alert-events"]
}
moved {
  from = aws_cloudwatch_event_target.alarms
  to   = aws_cloudwatch_event_target.route["alarms"]
}
moved {
  from = aws_cloudwatch_event_target.alarm_alerts
  to   = aws_cloudwatch_event_target.route["alarm-alerts"]
}
