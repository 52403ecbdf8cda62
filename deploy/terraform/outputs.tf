# What a caller needs: the tables (to write sensors and job reports), the
# bus (to route events), the state machine, the Scheduler group, the
# functions and the alert queues.

output "control_table_name" {
  value = aws_dynamodb_table.table["control"].name
}

output "control_table_arn" {
  value = aws_dynamodb_table.table["control"].arn
}

output "joblog_table_name" {
  value = aws_dynamodb_table.table["joblog"].name
}

output "rerun_table_name" {
  value = aws_dynamodb_table.table["rerun"].name
}

output "events_table_name" {
  value = aws_dynamodb_table.table["events"].name
}

output "events_table_arn" {
  value = aws_dynamodb_table.table["events"].arn
}

output "store_url" {
  description = "The store URL of the CLI (interlock … --server): dynamodb://<prefix>?region=<region>."
  value       = "dynamodb://${local.prefix}?region=${local.region}"
}

output "event_bus_name" {
  value = aws_cloudwatch_event_bus.interlock.name
}

output "event_bus_arn" {
  value = aws_cloudwatch_event_bus.interlock.arn
}

output "state_machine_arn" {
  value = aws_sfn_state_machine.pipeline.arn
}

output "state_machine_name" {
  value = aws_sfn_state_machine.pipeline.name
}

output "scheduler_group_name" {
  value = aws_scheduler_schedule_group.timers.name
}

output "sla_monitor_arn" {
  value = aws_lambda_function.fn["sla-monitor"].arn
}

output "function_arns" {
  value = { for k, f in aws_lambda_function.fn : k => f.arn }
}

output "alert_queue_url" {
  value = aws_sqs_queue.read["alerts"].id
}

output "dead_letter_queue_urls" {
  value = merge({ for k, q in aws_sqs_queue.stream_dlq : k => q.id }, { for k, q in aws_sqs_queue.dlq : k => q.id }, { sla = aws_sqs_queue.read["sla-dlq"].id })
}

output "kms_key_arn" {
  value = local.kms_key_arn
}

output "function_permissions" {
  description = "Each function's role statements besides its log group (sid, actions, resources, conditions): what iam.tf grants, for review (the Terraform test reads them from the plan)."
  value = { for fn, statements in local.function_statements : fn => [for st in statements : {
    sid        = st.sid
    actions    = st.actions
    resources  = st.resources
    conditions = lookup(st, "conditions", [])
  }] if contains(keys(local.functions), fn) }
}

output "api_url" {
  description = "The api function's URL (AWS_IAM auth: sign requests with SigV4, service lambda); null without enable_api_function."
  value       = one(aws_lambda_function_url.api[*].function_url)
}

output "dashboard_name" {
  description = "The CloudWatch dashboard's name (empty unless create_dashboard)."
  value       = var.create_dashboard ? aws_cloudwatch_dashboard.this[0].dashboard_name : ""
}
