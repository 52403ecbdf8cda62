# Queues (reference §7.4): a DLQ per stream mapping (14 days), the async
# DLQ of the EventBridge-invoked functions, the alert queue and its DLQ,
# and the SLA DLQ (the sla-monitor's failed firings, replayed) with its
# final DLQ. Encrypted with the customer managed key when there is one,
# else SQS-managed keys.
#
# The alert queue: 1 day; visibility 180 s, six times the dispatcher's
# 30 s timeout (AWS's guidance for a queue a function reads); redrive to
# the alert DLQ after 10 receives. The mapping's maximum_concurrency keeps
# the poller from receiving more than the dispatcher may run (lambda.tf),
# so receives are not used up by throttling; 10 failed deliveries 3
# minutes apart ride out a Slack outage of about half an hour.

locals {
  sqs_kms = local.kms_key_arn
}

resource "aws_sqs_queue" "stream_dlq" {
  for_each                          = local.stream_mappings
  name                              = "${local.prefix}-${each.key}-dlq"
  message_retention_seconds         = 1209600
  kms_master_key_id                 = local.sqs_kms
  sqs_managed_sse_enabled           = local.has_kms_key ? null : true
  kms_data_key_reuse_period_seconds = local.has_kms_key ? 300 : null
  tags                              = local.tags
}

# The DLQs of the async invocations (async), of the alert queue (alerts)
# and of the SLA DLQ (sla-final): kept 14 days, read by a person.
resource "aws_sqs_queue" "dlq" {
  for_each                  = { async = "async-dlq", alerts = "alert-dlq", "sla-final" = "sla-dlq-final" }
  name                      = "${local.prefix}-${each.value}"
  message_retention_seconds = 1209600
  kms_master_key_id         = local.sqs_kms
  sqs_managed_sse_enabled   = local.has_kms_key ? null : true
  tags                      = local.tags
}

# The queues a function reads (its mapping: lambda.tf): visibility six
# times the reader's timeout, redrive to their DLQ after max_receives (the
# DLQ's ARN from its name, known at plan: the plan shows the policy).
#
# The SLA DLQ: firings Scheduler could not deliver (its DeadLetterConfig,
# sent with the Scheduler role) and firings the sla-monitor failed after
# Lambda's two async retries (its on-failure destination, sent with the
# sla-monitor's role). The sla-monitor reads it back (lambda.tf, the
# mapping read["sla-dlq"]): 14 days, and a message that fails 5 receives goes to the
# final SLA DLQ, kept 14 days and alarmed, for a person to read.
locals {
  read_queues = {
    alerts = { name = "${local.prefix}-alerts", retention = 86400, reader = "alert-dispatcher", dlq = "alerts", max_receives = 10,
    batch = 1, concurrency = local.alert_concurrency }
    "sla-dlq" = { name = local.sla_dlq_name, retention = 1209600, reader = "sla-monitor", dlq = "sla-final", max_receives = 5,
    batch = 10, concurrency = 2 }
  }
}

resource "aws_sqs_queue" "read" {
  for_each                   = local.read_queues
  name                       = each.value.name
  message_retention_seconds  = each.value.retention
  visibility_timeout_seconds = 6 * local.functions[each.value.reader].timeout
  kms_master_key_id          = local.sqs_kms
  sqs_managed_sse_enabled    = local.has_kms_key ? null : true
  redrive_policy = jsonencode({
    deadLetterTargetArn = "${local.queue_arn_prefix}${aws_sqs_queue.dlq[each.value.dlq].name}"
    maxReceiveCount     = each.value.max_receives
  })
  tags = local.tags
}

# EventBridge (the alert rules of eventbridge.tf) may send to the alert queue.
data "aws_iam_policy_document" "alerts_queue" {
  statement {
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.read["alerts"].arn]
    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com"]
    }
    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = [aws_cloudwatch_event_rule.route["alert-events"].arn, aws_cloudwatch_event_rule.route["alarm-alerts"].arn]
    }
  }
}

resource "aws_sqs_queue_policy" "alerts" {
  queue_url = aws_sqs_queue.read["alerts"].id
  policy    = data.aws_iam_policy_document.alerts_queue.json
}
