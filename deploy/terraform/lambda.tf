# The functions: one per directory of cmd/lambda, each from
# "<dist_path>/<function>.zip" (deploy/build.sh), runtime provided.al2023 on
# arm64, with its own role (iam.tf), log group and environment. The
# variables each function requires are its …FromEnv's in
# internal/runtime/awsrt; the structure test runs every function without
# them and checks this module sets each one it asks for.

locals {
  functions = merge({
    "stream-router"    = { timeout = 60, description = "Sensors, rerun requests and job reports from the control and job-log streams, to the engine" }
    "orchestrator"     = { timeout = var.orchestrator_timeout_seconds, description = "The state machine's steps: evaluate, trigger, poll (engine step entry points)" }
    "sla-monitor"      = { timeout = 30, description = "Timers as EventBridge Scheduler schedules; their firings, to the engine" }
    "watchdog"         = { timeout = 60, description = "The watchdog's checks, on a schedule" }
    "event-sink"       = { timeout = 30, description = "Events from outside Interlock (alarms, other sources) into the event log" }
    "alert-dispatcher" = { timeout = 30, description = "Alert events from the alert queue to Slack" }
    "event-publisher"  = { timeout = 60, description = "The outbox: the events table's stream onto the event bus" }
    # The opt-in api function (enable_api_function, api.tf): the control
    # plane's /v1 API and dashboard behind a function URL.
    }, var.enable_api_function ? {
    "api" = { timeout = 30, description = "The /v1 API and the dashboard (the control plane's handler) behind a function URL with AWS_IAM auth" }
  } : {})

  # What every function that opens the store reads: the four tables
  # (awsrt.TableVars) and the retention of what it writes.
  store_env = {
    CONTROL_TABLE   = local.tables.control
    JOBLOG_TABLE    = local.tables.joblog
    RERUN_TABLE     = local.tables.rerun
    EVENTS_TABLE    = local.tables.events
    EVENTS_TTL_DAYS = tostring(var.events_table_ttl_days)
  }
  scheduler_env = {
    SCHEDULER_GROUP_NAME = local.scheduler_group
    SCHEDULER_ROLE_ARN   = local.scheduler_role_arn
    SLA_MONITOR_ARN      = local.sla_monitor_arn
    SLA_DLQ_ARN          = local.sla_dlq_arn
  }
  execution_env = {
    STATE_MACHINE_ARN = local.state_machine_arn
  }
  # The orchestrator's job runners: interlock.yaml's triggers.allowAddresses
  # and server.envAllow.
  # The job secrets (var.job_secrets) are read at the orchestrator's start
  # from SECRETS_FROM, "NAME=ARN,…" (awsrt.SecretsFrom), and each NAME is
  # one the templates may read.
  jobs_env = merge({
    TRIGGER_ALLOW_ADDRESSES = join(",", var.trigger_allow_addresses)
    ENV_ALLOW               = join(",", distinct(concat(var.env_allow, sort(keys(var.job_secrets)))))
    }, length(var.job_secrets) == 0 ? {} : {
    SECRETS_FROM = join(",", [for k in sort(keys(var.job_secrets)) : "${k}=${var.job_secrets[k]}"])
  })
  # ALERTS_CONFIG: the fallback, while the deployment has no stored alert
  # config (deploy-config --config, settings_path), of the dispatcher's
  # routes and windows and of the windows of the functions whose engines
  # fire timers (a window's end timer alerts what it held back and
  # re-arms the next end; the sla-monitor arms them at its start and
  # when the stored config changes).
  alerts_env = trimspace(var.alerts_config) != "" ? { ALERTS_CONFIG = var.alerts_config } : {}
  # The dispatcher's fallback routes and windows (ALERTS_CONFIG) and the
  # routes' secrets (SECRETS_FROM); without routes in the stored config
  # or there, SLACK_CHANNEL_ID is its route,
  # its token from Secrets Manager when slack_secret_arn is set, else the
  # plain variable (sensitive), else none (alerts are logged).
  slack_env = merge(
    { SLACK_CHANNEL_ID = var.slack_channel_id },
    var.slack_secret_arn != "" ? { SLACK_SECRET_ARN = var.slack_secret_arn } : {},
    var.slack_secret_arn == "" && var.slack_bot_token != "" ? { SLACK_BOT_TOKEN = var.slack_bot_token } : {},
    local.alerts_env,
    length(var.alert_secrets) == 0 ? {} : { SECRETS_FROM = join(",", [for k in sort(keys(var.alert_secrets)) : "${k}=${var.alert_secrets[k]}"]) },
  )

  # The Environment dimension of the metrics a function writes to its log
  # (embedded metric format, namespace Interlock; metrics.tf).
  metrics_env = { INTERLOCK_ENVIRONMENT = var.environment }

  # telemetry_environment (OTEL_*) reaches every function: traces
  # (docs/telemetry.md), none when it is empty.
  otel_env = var.telemetry_environment

  function_env = {
    "stream-router"    = merge(local.store_env, local.execution_env, local.alerts_env, local.metrics_env, local.otel_env)
    "orchestrator"     = merge(local.store_env, local.jobs_env, local.execution_env, local.metrics_env, local.otel_env)
    "sla-monitor"      = merge(local.store_env, local.scheduler_env, local.alerts_env, local.metrics_env, local.otel_env)
    "watchdog"         = merge(local.store_env, local.execution_env, local.alerts_env, { STUCK_RUN_THRESHOLD = var.watchdog_stuck_run_threshold }, local.metrics_env, local.otel_env)
    "event-sink"       = merge(local.store_env, local.otel_env)
    "alert-dispatcher" = merge(local.store_env, local.slack_env, local.metrics_env, local.otel_env)
    "event-publisher" = merge({
      EVENT_BUS_NAME = local.bus_name
      EVENTS_TABLE   = local.tables.events
    }, local.otel_env)
    "api" = merge(local.store_env, { API_TOKENS_SECRET_ARN = var.api_tokens_secret_arn }, local.otel_env)
  }
}

# The log groups, one retention, key and tags for all: each function's,
# and under the key "state-machine" the state machine's (stepfunctions.tf).
locals {
  log_groups = merge(
    { for name, _ in local.functions : name => "/aws/lambda/${local.prefix}-${name}" },
    { "state-machine" = "/aws/vendedlogs/states/${local.state_machine_name}" },
  )
}

resource "aws_cloudwatch_log_group" "fn" {
  for_each          = local.log_groups
  name              = each.value
  retention_in_days = var.log_retention_days
  kms_key_id        = local.kms_key_arn
  tags              = local.tags
}

# The state machine's log group was a resource of its own: moved, so an
# applied deployment keeps it (and its logs) instead of replacing it.
moved {
  from = aws_cloudwatch_log_group.sfn
  to   = aws_cloudwatch_log_group.fn["state-machine"]
}

resource "aws_lambda_function" "fn" {
  for_each                       = local.functions
  function_name                  = "${local.prefix}-${each.key}"
  description                    = each.value.description
  filename                       = "${var.dist_path}/${each.key}.zip"
  source_code_hash               = filebase64sha256("${var.dist_path}/${each.key}.zip")
  handler                        = "bootstrap"
  runtime                        = "provided.al2023"
  architectures                  = ["arm64"]
  role                           = aws_iam_role.fn[each.key].arn
  memory_size                    = var.lambda_memory_size
  timeout                        = each.value.timeout
  reserved_concurrent_executions = lookup(var.lambda_concurrency, each.key, -1)
  kms_key_arn                    = local.kms_key_arn

  # A trace collector beside each function (telemetry_layers; the
  # OTEL_* variables are in function_env).
  layers = var.telemetry_layers

  environment {
    variables = local.function_env[each.key]
  }

  # The orchestrator alone runs in the VPC when one is given: it is the
  # function that calls the job systems.
  dynamic "vpc_config" {
    for_each = each.key == "orchestrator" && length(var.vpc_subnet_ids) > 0 ? [1] : []
    content {
      subnet_ids         = var.vpc_subnet_ids
      security_group_ids = var.vpc_security_group_ids
    }
  }

  tags       = local.tags
  depends_on = [aws_cloudwatch_log_group.fn, aws_iam_role_policy.fn, aws_iam_role_policy.scheduler, aws_sqs_queue.read]
}

# Stream mappings (reference §7.4): batches of 10 from the newest record,
# a failing batch bisected, the records the function names as failures (by
# sequence number) retried alone. The outbox publisher's mapping retries
# until the record leaves the stream (24 h; retries and record age -1): an
# event the bus refused is retried, never dropped, and the shard waits
# (its iterator-age alarm fires after 5 minutes). The others give up after
# 3 retries and send what still fails to their DLQ (an SQS message naming
# the shard and sequence range; alarmed): a record that always fails must
# not hold its shard for a day, and the watchdog repairs what a dropped
# record left behind.
locals {
  stream_mappings = {
    "router-control" = { function = "stream-router", stream = aws_dynamodb_table.table["control"].stream_arn, filter = null, retries = 3 }
    "router-joblog"  = { function = "stream-router", stream = aws_dynamodb_table.table["joblog"].stream_arn, filter = null, retries = 3 }
    # The sla-monitor sees only timer records (TIMER#<key>): the second
    # reader of the control stream (a stream allows two per shard).
    "sla-timers"      = { function = "sla-monitor", stream = aws_dynamodb_table.table["control"].stream_arn, filter = jsonencode({ dynamodb = { Keys = { PK = { S = [{ prefix = "TIMER#" }] } } } }), retries = 3 }
    "publisher-event" = { function = "event-publisher", stream = aws_dynamodb_table.table["events"].stream_arn, filter = null, retries = -1 }
  }
}

resource "aws_lambda_event_source_mapping" "stream" {
  for_each                       = local.stream_mappings
  function_name                  = aws_lambda_function.fn[each.value.function].arn
  event_source_arn               = each.value.stream
  starting_position              = "LATEST"
  batch_size                     = 10
  bisect_batch_on_function_error = true
  maximum_retry_attempts         = each.value.retries
  maximum_record_age_in_seconds  = -1
  function_response_types        = ["ReportBatchItemFailures"]

  destination_config {
    on_failure {
      destination_arn = aws_sqs_queue.stream_dlq[each.key].arn
    }
  }

  dynamic "filter_criteria" {
    for_each = each.value.filter == null ? [] : [each.value.filter]
    content {
      filter {
        pattern = filter_criteria.value
      }
    }
  }
}

# The alert queue, one message at a time, failures by message id. The
# mapping never invokes the dispatcher more often at once than it may run
# (maximum_concurrency: its reserved concurrency, or 2 when unreserved),
# so its receives are not throttled; a receive the dispatcher fails (Slack
# down, 429) comes back after the visibility timeout, and only the 10th
# failed receive moves the alert to the alert DLQ (sqs.tf).
locals {
  alert_concurrency = lookup(var.lambda_concurrency, "alert-dispatcher", 2)
}

# The sla-monitor's failed firings, replayed (docs/aws.md, "Timers on
# EventBridge Scheduler"): the SLA DLQ holds firings Scheduler could not
# deliver (the schedules' DeadLetterConfig) and firings the sla-monitor
# failed (its asynchronous invocations' on-failure destination, below);
# its mapping (batches of 10, 2 at once) hands them back to the
# sla-monitor, which processes each only if its timer is still armed with
# that due time. A message failed 5 times moves to the final SLA DLQ
# (alarmed).
#
# One mapping per queue a function reads (sqs.tf, local.read_queues).
resource "aws_lambda_event_source_mapping" "read" {
  for_each                = local.read_queues
  function_name           = aws_lambda_function.fn[each.value.reader].arn
  event_source_arn        = aws_sqs_queue.read[each.key].arn
  batch_size              = each.value.batch
  function_response_types = ["ReportBatchItemFailures"]
  scaling_config {
    maximum_concurrency = each.value.concurrency
  }
}

# Asynchronous invocations, two retries by Lambda, then the event goes to
# an on-failure destination (alarmed): EventBridge → event-sink and the
# watchdog to the async DLQ; Scheduler → sla-monitor (its firings) to the
# SLA DLQ, which replays them.
locals {
  async_destinations = {
    "event-sink"  = aws_sqs_queue.dlq["async"].arn
    "watchdog"    = aws_sqs_queue.dlq["async"].arn
    "sla-monitor" = aws_sqs_queue.read["sla-dlq"].arn
  }
}

resource "aws_lambda_function_event_invoke_config" "async" {
  for_each                     = local.async_destinations
  function_name                = aws_lambda_function.fn[each.key].function_name
  maximum_retry_attempts       = 2
  maximum_event_age_in_seconds = 3600
  destination_config {
    on_failure {
      destination = each.value
    }
  }
}
