# One role per function, least privilege (docs/aws.md, "IAM"):
#
#   every function      its own log group
#   store functions     the four tables and their indexes (the engine commits
#                       runs, markers, timers and events in one transaction)
#   stream consumers    their streams; their DLQs (the mapping's on-failure
#                       destination is sent with the function's role)
#   stream-router       states:StartExecution on the state machine
#   orchestrator        the state machine's executions (continue, repair);
#                       opt-in job-system permissions, each scoped to ARNs;
#                       its job secrets; ENIs when in a VPC
#   sla-monitor         Scheduler schedules of its group; PassRole of the
#                       Scheduler role; the SLA DLQ (its on-failure
#                       destination, and the replay mapping reads it)
#   watchdog            the state machine's executions (resume a run whose
#                       execution is gone)
#   event-publisher     events:PutEvents on the bus; the events stream
#   alert-dispatcher    the alert queue; the Slack secret when set
#
# The tables' customer managed key, when there is one, to every function
# that reads or writes a table, a stream or an encrypted queue. A secret
# under a customer managed key (Slack's, a job's) is decrypted through
# its service only: kms:Decrypt on any key, on the conditions that
# Secrets Manager (or SSM) asks for it and for that secret — the module
# need not know the secret's key.

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
  table_arns           = [for t in aws_dynamodb_table.table : t.arn]
  table_and_index_arns = concat(local.table_arns, [for a in local.table_arns : "${a}/index/*"])

  store_rw = {
    sid       = "Store"
    actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"]
    resources = local.table_and_index_arns
  }
  stream_actions = ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"]
  execution_arns = "arn:${local.partition}:states:${local.region}:${local.account_id}:execution:${local.state_machine_name}:*"
  start_execution = {
    sid       = "StartExecution"
    actions   = ["states:StartExecution", "states:DescribeExecution"]
    resources = [local.state_machine_arn, local.execution_arns]
  }
  # The orchestrator and the watchdog start an execution for a run whose
  # own is gone (a new execution), and read or stop one.
  manage_executions = [
    { sid = "StartExecution", actions = ["states:StartExecution"], resources = [local.state_machine_arn] },
    { sid = "Executions", actions = ["states:DescribeExecution", "states:StopExecution"], resources = [local.execution_arns] },
  ]
  kms_use = [for s in [{
    sid       = "Key"
    actions   = ["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey"]
    resources = [local.kms_key_arn]
  }] : s if local.has_kms_key]
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
    resources = [aws_sqs_queue.dlq["async"].arn]
  }

  # A secret under a customer managed key, decrypted through its service
  # for that secret only (Secrets Manager's encryption context is the
  # secret's ARN, SSM's the parameter's).
  # (sid and read: the statements of secret_statements, one pair a service.)
  secret_decrypt = {
    secretsmanager = { context = "kms:EncryptionContext:SecretARN", sid = "Secrets", read = "secretsmanager:GetSecretValue" }
    ssm            = { context = "kms:EncryptionContext:PARAMETER_ARN", sid = "Parameters", read = "ssm:GetParameter" }
  }
  # The secrets a function reads at its start (SECRETS_FROM): the
  # orchestrator's job secrets, the dispatcher's alert secrets; each
  # readable, and decryptable through its service, alone.
  secrets_of = { "orchestrator" = { sid = "Job", secrets = var.job_secrets }, "alert-dispatcher" = { sid = "Alert", secrets = var.alert_secrets } }
  secret_arns = { for fn, o in local.secrets_of : fn => {
    for svc, _ in local.secret_decrypt : svc => sort(distinct([for n, a in o.secrets : a if split(":", a)[2] == svc]))
  } }
  secret_statements = { for fn, o in local.secrets_of : fn => flatten([
    for svc, d in local.secret_decrypt : [
      { sid = "${o.sid}${d.sid}", actions = [d.read], resources = local.secret_arns[fn][svc], conditions = [] },
      { sid = "${o.sid}${d.sid}Key", actions = ["kms:Decrypt"], resources = ["*"], conditions = [
        { test = "StringEquals", variable = "kms:ViaService", values = ["${svc}.${local.region}.amazonaws.com"] },
        { test = "StringEquals", variable = d.context, values = local.secret_arns[fn][svc] },
      ] },
    ] if length(local.secret_arns[fn][svc]) > 0
  ]) }

  # What AWSLambdaVPCAccessExecutionRole grants: the orchestrator's network
  # interfaces in the VPC (these actions take no resource scope).
  vpc_statements = [for s in [
    { sid = "VPC", actions = ["ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"], resources = ["*"] },
  ] : s if length(var.vpc_subnet_ids) > 0]

  # The orchestrator's job systems, opt-in, each scoped to its ARN list
  # (variables.tf refuses an enabled trigger with an empty list).
  trigger_statements = concat(
    [for s in [
      { sid = "Glue", actions = ["glue:StartJobRun", "glue:GetJobRun", "glue:GetJobRuns", "glue:BatchStopJobRun"], resources = var.glue_job_arns },
    ] : s if var.enable_glue_trigger],
    [for s in [
      { sid = "EMR", actions = ["elasticmapreduce:AddJobFlowSteps", "elasticmapreduce:DescribeStep", "elasticmapreduce:CancelSteps"], resources = var.emr_cluster_arns },
    ] : s if var.enable_emr_trigger],
    [for s in [
      { sid = "EMRServerless", actions = ["emr-serverless:StartJobRun", "emr-serverless:GetJobRun", "emr-serverless:CancelJobRun"], resources = concat(var.emr_serverless_app_arns, [for a in var.emr_serverless_app_arns : "${a}/jobruns/*"]) },
      # StartJobRun passes the job's executionRoleArn: only the listed roles, only to EMR Serverless.
      { sid = "EMRServerlessPassRole", actions = ["iam:PassRole"], resources = var.emr_serverless_execution_role_arns, conditions = [
        { test = "StringEquals", variable = "iam:PassedToService", values = ["emr-serverless.amazonaws.com"] },
      ] },
    ] : s if var.enable_emr_serverless_trigger],
    [for s in [
      { sid = "StepFunctions", actions = ["states:StartExecution", "states:DescribeExecution", "states:StopExecution"], resources = concat(var.sfn_trigger_arns, [for a in var.sfn_trigger_arns : "${replace(a, ":stateMachine:", ":execution:")}:*"]) },
    ] : s if var.enable_sfn_trigger],
    [for s in [
      { sid = "Lambda", actions = ["lambda:InvokeFunction"], resources = var.lambda_trigger_arns },
    ] : s if var.enable_lambda_trigger],
  )

  function_statements = {
    "stream-router" = concat([local.store_rw, local.start_execution, local.dlq_send["stream-router"],
      { sid = "Streams", actions = local.stream_actions, resources = [aws_dynamodb_table.table["control"].stream_arn, aws_dynamodb_table.table["joblog"].stream_arn] },
    ], local.kms_use)
    "orchestrator" = concat([local.store_rw], local.manage_executions, local.trigger_statements, local.secret_statements["orchestrator"], local.vpc_statements, local.kms_use)
    "sla-monitor" = concat([local.store_rw, local.dlq_send["sla-monitor"],
      { sid = "SLADeadLetters", actions = ["sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"], resources = [local.sla_dlq_arn] },
      { sid = "Streams", actions = local.stream_actions, resources = [aws_dynamodb_table.table["control"].stream_arn] },
      { sid = "Schedules", actions = ["scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule", "scheduler:GetSchedule"], resources = ["arn:${local.partition}:scheduler:${local.region}:${local.account_id}:schedule/${local.scheduler_group}/*"] },
      { sid = "PassSchedulerRole", actions = ["iam:PassRole"], resources = [local.scheduler_role_arn], conditions = [
        { test = "StringEquals", variable = "iam:PassedToService", values = ["scheduler.amazonaws.com"] },
      ] },
    ], local.kms_use)
    # The watchdog's pass commits through the store and resumes a run
    # whose execution is gone (a new execution).
    "watchdog"   = concat([local.store_rw, local.async_dlq_send], local.manage_executions, local.kms_use)
    "event-sink" = concat([local.store_rw, local.async_dlq_send], local.kms_use)
    "alert-dispatcher" = concat([local.store_rw,
      { sid = "AlertQueue", actions = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"], resources = [aws_sqs_queue.read["alerts"].arn] },
      ], [for s in [
        { sid = "SlackToken", actions = ["secretsmanager:GetSecretValue"], resources = [var.slack_secret_arn] },
        { sid = "SlackTokenKey", actions = ["kms:Decrypt"], resources = ["*"], conditions = [
          { test = "StringEquals", variable = "kms:ViaService", values = ["secretsmanager.${local.region}.amazonaws.com"] },
          { test = "StringEquals", variable = local.secret_decrypt.secretsmanager.context, values = [var.slack_secret_arn] },
        ] },
    ] : s if var.slack_secret_arn != ""], local.secret_statements["alert-dispatcher"], local.kms_use)
    # The api function commits operator actions through the store, as a
    # control plane does, and reads its tokens at cold start.
    "api" = concat([local.store_rw,
      { sid = "APITokens", actions = ["secretsmanager:GetSecretValue"], resources = [var.api_tokens_secret_arn] },
      { sid = "APITokensKey", actions = ["kms:Decrypt"], resources = ["*"], conditions = [
        { test = "StringEquals", variable = "kms:ViaService", values = ["secretsmanager.${local.region}.amazonaws.com"] },
        { test = "StringEquals", variable = local.secret_decrypt.secretsmanager.context, values = [var.api_tokens_secret_arn] },
      ] },
    ], local.kms_use)
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
      dynamic "condition" {
        for_each = lookup(statement.value, "conditions", [])
        content {
          test     = condition.value.test
          variable = condition.value.variable
          values   = condition.value.values
        }
      }
    }
  }
}

resource "aws_iam_role_policy" "fn" {
  for_each = local.functions
  name     = "interlock"
  role     = aws_iam_role.fn[each.key].id
  policy   = data.aws_iam_policy_document.fn[each.key].json
}
