# The Scheduler group of the timers' schedules ("<prefix>-sla": SLA
# warnings and breaches, cron ticks, period starts, the end of a timed
# pause — created and deleted by the sla-monitor from the control table's
# timer records) and the role Scheduler assumes to invoke the sla-monitor.

resource "aws_scheduler_schedule_group" "timers" {
  name = local.scheduler_group
  tags = local.tags
}

data "aws_iam_policy_document" "scheduler_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["scheduler.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
  }
}

resource "aws_iam_role" "scheduler" {
  name               = "${local.prefix}-scheduler" # local.scheduler_role_arn
  assume_role_policy = data.aws_iam_policy_document.scheduler_assume.json
  tags               = local.tags
}

# Scheduler invokes the sla-monitor (asynchronously) and sends a firing it
# could not deliver to the SLA DLQ (the schedules' DeadLetterConfig,
# awsrt.SLAMonitor), encrypted with the queues' key when there is one.
data "aws_iam_policy_document" "scheduler" {
  statement {
    sid       = "Invoke"
    actions   = ["lambda:InvokeFunction"]
    resources = [local.sla_monitor_arn]
  }
  statement {
    sid       = "DeadLetters"
    actions   = ["sqs:SendMessage"]
    resources = [local.sla_dlq_arn]
  }
  dynamic "statement" {
    for_each = local.has_kms_key ? [local.kms_key_arn] : []
    content {
      sid       = "Key"
      actions   = ["kms:GenerateDataKey", "kms:Decrypt"]
      resources = [statement.value]
    }
  }
}

resource "aws_iam_role_policy" "scheduler" {
  name   = "invoke-sla-monitor"
  role   = aws_iam_role.scheduler.id
  policy = data.aws_iam_policy_document.scheduler.json
}
