# The custom bus "<environment>-interlock-events" and its rules, and the
# default bus's rules (reference §7.5; docs/aws.md, "Deploy with
# Terraform"):
#
#   custom bus   source interlock              → event-sink (it stores what
#                                                is not already in the log)
#   custom bus   source interlock              → alert queue → alert-dispatcher
#                                                (it routes each event by the
#                                                project's alerts:)
#   default bus  alarm "<prefix>-*" changes    → event-sink as INFRA_ALARM
#   default bus  the same, state ALARM only    → alert queue as INFRA_ALARM
#   default bus  watchdog_schedule             → watchdog

resource "aws_cloudwatch_event_bus" "interlock" {
  name = local.bus_name
  tags = local.tags
}

# Only the module's own roles put events on the bus (the outbox publisher
# does; the others may), and the account's principals.
data "aws_iam_policy_document" "bus" {
  statement {
    sid       = "InterlockFunctions"
    actions   = ["events:PutEvents"]
    resources = [aws_cloudwatch_event_bus.interlock.arn]
    principals {
      type        = "AWS"
      identifiers = [for r in aws_iam_role.fn : r.arn]
    }
  }
}

resource "aws_cloudwatch_event_bus_policy" "interlock" {
  event_bus_name = aws_cloudwatch_event_bus.interlock.name
  policy         = data.aws_iam_policy_document.bus.json
}

locals {
  alarm_pattern = {
    source        = ["aws.cloudwatch"]
    "detail-type" = ["CloudWatch Alarm State Change"]
    detail = {
      alarmName = [{ prefix = "${local.prefix}-" }]
    }
  }
  # The event-sink's INFRA_ALARM (docs/aws.md, "The event sink"): the
  # alarm event's id and time pass through, so a redelivery is stored once.
  alarm_input_paths = {
    id     = "$.id"
    time   = "$.time"
    alarm  = "$.detail.alarmName"
    state  = "$.detail.state.value"
    reason = "$.detail.state.reason"
  }
  alarm_input_template = <<-JSON
    {"version": "0", "id": <id>, "source": "interlock", "detail-type": "INFRA_ALARM", "time": <time>, "detail": {"pipelineId": "INFRASTRUCTURE", "message": "<alarm>: <state> — <reason>"}}
  JSON
}

# The routes of events, each a rule and its one target: every Interlock
# event to the event sink (all-events) and to the alert queue
# (alert-events), and the module's CloudWatch alarms on the default bus —
# every state change to the event sink (alarms), entering ALARM to the
# alert queue (alarm-alerts) — as INFRA_ALARM events.
#
# Every Interlock event goes to the alert queue: the routes are the
# deployment's stored alert config (interlock deploy-config), which any
# type or level may match (a route with level info, or types:
# [JOB_TRIGGERED]), so a narrower pattern here could silently drop what a
# route asks for. The dispatcher decides per route with the local code
# (alert.Route's match) and answers an event no route takes without a read.
locals {
  routes = {
    "all-events" = { description = "Every Interlock event to the event sink", bus = aws_cloudwatch_event_bus.interlock.name,
    pattern = jsonencode({ source = ["interlock"] }), target = aws_lambda_function.fn["event-sink"].arn, alarm = false }
    "alert-events" = { description = "Every Interlock event to the alert queue; the alert-dispatcher routes them", bus = aws_cloudwatch_event_bus.interlock.name,
    pattern = jsonencode({ source = ["interlock"] }), target = aws_sqs_queue.read["alerts"].arn, alarm = false }
    "alarms" = { description = "The module's CloudWatch alarms, every state change, to the event sink as INFRA_ALARM", bus = null,
    pattern = jsonencode(local.alarm_pattern), target = aws_lambda_function.fn["event-sink"].arn, alarm = true }
    "alarm-alerts" = { description = "The module's CloudWatch alarms entering ALARM, to the alert queue as INFRA_ALARM", bus = null,
      pattern = jsonencode(merge(local.alarm_pattern, {
        detail = merge(local.alarm_pattern.detail, { state = { value = ["ALARM"] } })
    })), target = aws_sqs_queue.read["alerts"].arn, alarm = true }
  }
}

resource "aws_cloudwatch_event_rule" "route" {
  for_each       = local.routes
  name           = "${local.prefix}-${each.key}"
  description    = each.value.description
  event_bus_name = each.value.bus
  event_pattern  = each.value.pattern
  tags           = local.tags
}

resource "aws_cloudwatch_event_target" "route" {
  for_each       = local.routes
  rule           = aws_cloudwatch_event_rule.route[each.key].name
  event_bus_name = each.value.bus
  arn            = each.value.target
  dynamic "input_transformer" {
    for_each = each.value.alarm ? [1] : []
    content {
      input_paths    = local.alarm_input_paths
      input_template = local.alarm_input_template
    }
  }
}

resource "aws_cloudwatch_event_rule" "watchdog" {
  name                = "${local.prefix}-watchdog"
  description         = "The watchdog's pass"
  schedule_expression = var.watchdog_schedule
  tags                = local.tags
}

resource "aws_cloudwatch_event_target" "watchdog" {
  rule = aws_cloudwatch_event_rule.watchdog.name
  arn  = aws_lambda_function.fn["watchdog"].arn
}

# EventBridge may invoke the sink (from both rules) and the watchdog.
locals {
  event_invokes = {
    "sink-all-events" = { function = "event-sink", rule = aws_cloudwatch_event_rule.route["all-events"].arn }
    "sink-alarms"     = { function = "event-sink", rule = aws_cloudwatch_event_rule.route["alarms"].arn }
    "watchdog"        = { function = "watchdog", rule = aws_cloudwatch_event_rule.watchdog.arn }
  }
}

resource "aws_lambda_permission" "events" {
  for_each      = local.event_invokes
  statement_id  = "events-${each.key}"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.fn[each.value.function].function_name
  principal     = "events.amazonaws.com"
  source_arn    = each.value.rule
}
