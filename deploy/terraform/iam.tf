# One role per function, least privilege (docs/aws.md, "IAM"):
#
#   every function      its own log group
#   store functions     the four tables and their indexes (the engine commits
#                       runs, markers, timers and events in one transaction)
#   stream consumers    their streams; their DLQs (the mapping's on-failure
#                       destination is sent with the function's role)
#   stream-router       states:StartExecution on the state machine
#   orchestrator        opt-in job-system permissions, each scoped to ARNs
#   sla-monitor         Scheduler schedules of its group; PassRole of the
#                       Scheduler role
#   event-publisher     events:PutEvents on the bus; the events stream
#   alert-dispatcher    the alert queue; the Slack secret when set
#
# The tables' customer managed key, when there is one, to every function
# that reads or writes a table, a stream or an encrypted queue.

data "aws_iam_policy_document" "lambda_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "fn" {
  for_each           = local.functions
  name               = "${local.prefix}-${each.key}"
  assume_role_policy = data.aws_iam_policy_document.lambda_assume.json
  tags               = local.tags
}

locals {
  table_arns = [for t in aws_dynamodb_table.table : t.arn]
  table_and_index_arns = concat(local.table_arns, [for a in local.table_arns : "${a}/index/*"])

  store_rw = {
    sid       = "Store"
    actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"]
    resources = local.table_and_index_arns
  }
  stream_actions = ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"]
  start_execution = {
    sid       = "StartExecution"
    actions   = ["states:StartExecution", "states:DescribeExecution"]
    resources = [local.state_machine_arn, "arn:${local.partition}:states:${local.region}:${local.account_id}:execution:${local.state_machine_name}:*"]
  }
  kms_use = local.kms_key_arn == null ? [] : [{
    sid       = "Key"
    actions   = ["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey"]
    resources = [local.kms_key_arn]
  }]
  dlq_send = {
    for fn in distinct([for k, m in local.stream_mappings : m.function]) : fn => {
      sid       = "DeadLetters"
      actions   = ["sqs:SendMessage"]
      resources = [for k, m in local.stream_mappings : aws_sqs_queue.stream_dlq[k].arn if m.function == fn]
    }
  }

  # The async invocations' on-failure destination is sent with the
  # function's role too (lambda.tf, event-sink and watchdog).
  async_dlq_send = {
    sid       = "AsyncDeadLetters"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.async_dlq.arn]
  }

  # The orchestrator's job systems, opt-in, each scoped to its ARN list
  # (variables.tf refuses an enabled trigger with an empty list).
  trigger_statements = concat(
    var.enable_glue_trigger ? [
      { sid = "Glue", actions = ["glue:StartJobRun", "glue:GetJobRun", "glue:GetJobRuns", "glue:BatchStopJobRun"], resources = var.glue_job_arns },
      { sid = "GlueLogs", actions = ["logs:FilterLogEvents"], resources = ["arn:${local.partition}:logs:${local.region}:${local.account_id}:log-group:/aws-glue/jobs/*"] },
    ] : [],
    var.enable_emr_trigger ? [
      { sid = "EMR", actions = ["elasticmapreduce:AddJobFlowSteps", "elasticmapreduce:DescribeStep", "elasticmapreduce:CancelSteps"], resources = var.emr_cluster_arns },
    ] : [],
    var.enable_emr_serverless_trigger ? [
      { sid = "EMRServerless", actions = ["emr-serverless:StartJobRun", "emr-serverless:GetJobRun", "emr-serverless:CancelJobRun"], resources = concat(var.emr_serverless_app_arns, [for a in var.emr_serverless_app_arns : "${a}/jobruns/*"]) },
    ] : [],
    var.enable_sfn_trigger ? [
      { sid = "StepFunctions", actions = ["states:StartExecution", "states:DescribeExecution", "states:StopExecution"], resources = concat(var.sfn_trigger_arns, [for a in var.sfn_trigger_arns : "${replace(a, ":stateMachine:", ":execution:")}:*"]) },
    ] : [],
    var.enable_lambda_trigger ? [
      { sid = "Lambda", actions = ["lambda:InvokeFunction"], resources = var.lambda_trigger_arns },
    ] : [],
  )

  function_statements = {
    "stream-router" = concat([local.store_rw, local.start_execution, local.dlq_send["stream-router"],
      { sid = "Streams", actions = local.stream_actions, resources = [aws_dynamodb_table.table["control"].stream_arn, aws_dynamodb_table.table["joblog"].stream_arn] },
    ], local.kms_use)
    "orchestrator" = concat([local.store_rw], local.trigger_statements, local.kms_use)
    "sla-monitor" = concat([local.store_rw, local.dlq_send["sla-monitor"],
      { sid = "Streams", actions = local.stream_actions, resources = [aws_dynamodb_table.table["control"].stream_arn] },
      { sid = "Schedules", actions = ["scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule", "scheduler:GetSchedule"], resources = ["arn:${local.partition}:scheduler:${local.region}:${local.account_id}:schedule/${local.scheduler_group}/*"] },
      { sid = "PassSchedulerRole", actions = ["iam:PassRole"], resources = [aws_iam_role.scheduler.arn] },
    ], local.kms_use)
    # The watchdog's pass reads and commits through the store only
    # (engine.WatchdogPass): no Scheduler, no Step Functions.
    "watchdog"   = concat([local.store_rw, local.async_dlq_send], local.kms_use)
    "event-sink" = concat([local.store_rw, local.async_dlq_send], local.kms_use)
    "alert-dispatcher" = concat([local.store_rw,
      { sid = "AlertQueue", actions = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"], resources = [aws_sqs_queue.alerts.arn] },
      ], var.slack_secret_arn != "" ? [
      { sid = "SlackToken", actions = ["secretsmanager:GetSecretValue"], resources = [var.slack_secret_arn] },
    ] : [], local.kms_use)
    "event-publisher" = concat([local.dlq_send["event-publisher"],
      { sid = "Bus", actions = ["events:PutEvents"], resources = [aws_cloudwatch_event_bus.interlock.arn] },
      { sid = "Streams", actions = local.stream_actions, resources = [aws_dynamodb_table.table["events"].stream_arn] },
    ], local.kms_use)
  }
}

data "aws_iam_policy_document" "fn" {
  for_each = local.functions

  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.fn[each.key].arn}:*"]
  }
  dynamic "statement" {
    for_each = local.function_statements[each.key]
    content {
      sid       = statement.value.sid
      actions   = statement.value.actions
      resources = statement.value.resources
    }
  }
}

resource "aws_iam_role_policy" "fn" {
  for_each = local.functions
  name     = "interlock"
  role     = aws_iam_role.fn[each.key].id
  policy   = data.aws_iam_policy_document.fn[each.key].json
}
