# Queues (reference §7.4): a DLQ per stream mapping (14 days), the async
# DLQ of the EventBridge-invoked functions, and the alert queue (1 day,
# 60 s visibility, redrive to the alert DLQ after 3 receives). Encrypted
# with the customer managed key when there is one, else SQS-managed keys.

locals {
  sqs_kms = local.kms_key_arn
}

resource "aws_sqs_queue" "stream_dlq" {
  for_each                          = local.stream_mappings
  name                              = "${local.prefix}-${each.key}-dlq"
  message_retention_seconds         = 1209600
  kms_master_key_id                 = local.sqs_kms
  sqs_managed_sse_enabled           = local.sqs_kms == null ? true : null
  kms_data_key_reuse_period_seconds = local.sqs_kms == null ? null : 300
  tags                              = local.tags
}

resource "aws_sqs_queue" "async_dlq" {
  name                      = "${local.prefix}-async-dlq"
  message_retention_seconds = 1209600
  kms_master_key_id         = local.sqs_kms
  sqs_managed_sse_enabled   = local.sqs_kms == null ? true : null
  tags                      = local.tags
}

resource "aws_sqs_queue" "alerts_dlq" {
  name                      = "${local.prefix}-alert-dlq"
  message_retention_seconds = 1209600
  kms_master_key_id         = local.sqs_kms
  sqs_managed_sse_enabled   = local.sqs_kms == null ? true : null
  tags                      = local.tags
}

resource "aws_sqs_queue" "alerts" {
  name                       = "${local.prefix}-alerts"
  message_retention_seconds  = 86400
  visibility_timeout_seconds = 60
  kms_master_key_id          = local.sqs_kms
  sqs_managed_sse_enabled    = local.sqs_kms == null ? true : null
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.alerts_dlq.arn
    maxReceiveCount     = 3
  })
  tags = local.tags
}

# EventBridge (the alert rules of eventbridge.tf) may send to the alert queue.
data "aws_iam_policy_document" "alerts_queue" {
  statement {
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.alerts.arn]
    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com"]
    }
    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = [aws_cloudwatch_event_rule.alert_events.arn, aws_cloudwatch_event_rule.alarm_alerts.arn]
    }
  }
}

resource "aws_sqs_queue_policy" "alerts" {
  queue_url = aws_sqs_queue.alerts.id
  policy    = data.aws_iam_policy_document.alerts_queue.json
}
