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
  name               = "${local.prefix}-scheduler"
  assume_role_policy = data.aws_iam_policy_document.scheduler_assume.json
  tags               = local.tags
}

data "aws_iam_policy_document" "scheduler" {
  statement {
    actions   = ["lambda:InvokeFunction"]
    resources = [local.sla_monitor_arn]
  }
}

resource "aws_iam_role_policy" "scheduler" {
  name   = "invoke-sla-monitor"
  role   = aws_iam_role.scheduler.id
  policy = data.aws_iam_policy_document.scheduler.json
}
