# The functions: one per directory of cmd/lambda, each from
# "<dist_path>/<function>.zip" (deploy/build.sh), runtime provided.al2023 on
# arm64, with its own role (iam.tf), log group and environment. The
# variables each function requires are its …FromEnv's in
# internal/runtime/awsrt; the structure test runs every function without
# them and checks this module sets each one it asks for.

locals {
  functions = {
    "stream-router"    = { timeout = 60, description = "Sensors, rerun requests and job reports from the control and job-log streams, to the engine" }
    "orchestrator"     = { timeout = 120, description = "The state machine's steps: evaluate, trigger, poll (engine step entry points)" }
    "sla-monitor"      = { timeout = 30, description = "Timers as EventBridge Scheduler schedules; their firings, to the engine" }
    "watchdog"         = { timeout = 60, description = "The watchdog's checks, on a schedule" }
    "event-sink"       = { timeout = 30, description = "Events from outside Interlock (alarms, other sources) into the event log" }
    "alert-dispatcher" = { timeout = 30, description = "Alert events from the alert queue to Slack" }
    "event-publisher"  = { timeout = 60, description = "The outbox: the events table's stream onto the event bus" }
  }

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
    SCHEDULER_ROLE_ARN   = aws_iam_role.scheduler.arn
    SLA_MONITOR_ARN      = local.sla_monitor_arn
  }
  execution_env = {
    STATE_MACHINE_ARN = local.state_machine_arn
  }
  # The orchestrator's job runners: interlock.yaml's triggers.allowAddresses
  # and server.envAllow.
  jobs_env = {
    TRIGGER_ALLOW_ADDRESSES = join(",", var.trigger_allow_addresses)
    ENV_ALLOW               = join(",", var.env_allow)
  }
  # The Slack token: from Secrets Manager when slack_secret_arn is set,
  # else the plain variable (sensitive), else none (alerts are logged).
  slack_env = merge(
    { SLACK_CHANNEL_ID = var.slack_channel_id },
    var.slack_secret_arn != "" ? { SLACK_SECRET_ARN = var.slack_secret_arn } : {},
    var.slack_secret_arn == "" && var.slack_bot_token != "" ? { SLACK_BOT_TOKEN = var.slack_bot_token } : {},
  )

  function_env = {
    "stream-router"    = merge(local.store_env, local.execution_env)
    "orchestrator"     = merge(local.store_env, local.jobs_env)
    "sla-monitor"      = merge(local.store_env, local.scheduler_env)
    "watchdog"         = merge(local.store_env, { STUCK_RUN_THRESHOLD = var.watchdog_stuck_run_threshold })
    "event-sink"       = local.store_env
    "alert-dispatcher" = merge(local.store_env, local.slack_env)
    "event-publisher" = {
      EVENT_BUS_NAME = local.bus_name
      EVENTS_TABLE   = local.tables.events
    }
  }
}

resource "aws_cloudwatch_log_group" "fn" {
  for_each          = local.functions
  name              = "/aws/lambda/${local.prefix}-${each.key}"
  retention_in_days = var.log_retention_days
  kms_key_id        = local.kms_key_arn
  tags              = local.tags
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

  environment {
    variables = local.function_env[each.key]
  }

  tags       = local.tags
  depends_on = [aws_cloudwatch_log_group.fn, aws_iam_role_policy.fn]
}

# Stream mappings (reference §7.4): batches of 10 from the newest record,
# a failing batch bisected, 3 retries, the records the function names as
# failures (by sequence number) retried alone, and what still fails sent
# to a DLQ (an SQS message naming the shard and sequence range).
locals {
  stream_mappings = {
    "router-control" = { function = "stream-router", stream = aws_dynamodb_table.table["control"].stream_arn, filter = null }
    "router-joblog"  = { function = "stream-router", stream = aws_dynamodb_table.table["joblog"].stream_arn, filter = null }
    # The sla-monitor sees only timer records (TIMER#<key>): the second
    # reader of the control stream (a stream allows two per shard).
    "sla-timers"      = { function = "sla-monitor", stream = aws_dynamodb_table.table["control"].stream_arn, filter = jsonencode({ dynamodb = { Keys = { PK = { S = [{ prefix = "TIMER#" }] } } } }) }
    "publisher-event" = { function = "event-publisher", stream = aws_dynamodb_table.table["events"].stream_arn, filter = null }
  }
}

resource "aws_lambda_event_source_mapping" "stream" {
  for_each                       = local.stream_mappings
  function_name                  = aws_lambda_function.fn[each.value.function].arn
  event_source_arn               = each.value.stream
  starting_position              = "LATEST"
  batch_size                     = 10
  bisect_batch_on_function_error = true
  maximum_retry_attempts         = 3
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

# The alert queue, one message at a time, failures by message id.
resource "aws_lambda_event_source_mapping" "alerts" {
  function_name           = aws_lambda_function.fn["alert-dispatcher"].arn
  event_source_arn        = aws_sqs_queue.alerts.arn
  batch_size              = 1
  function_response_types = ["ReportBatchItemFailures"]
}

# Asynchronous invocations (EventBridge → event-sink, watchdog): two
# retries by Lambda, then the event goes to the async DLQ (alarmed).
resource "aws_lambda_function_event_invoke_config" "async" {
  for_each                     = toset(["event-sink", "watchdog"])
  function_name                = aws_lambda_function.fn[each.key].function_name
  maximum_retry_attempts       = 2
  maximum_event_age_in_seconds = 3600
  destination_config {
    on_failure {
      destination = aws_sqs_queue.async_dlq.arn
    }
  }
}
