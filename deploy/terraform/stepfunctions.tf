# The run's state machine: deploy/statemachine.asl.json rendered with the
# orchestrator's ARN, the global timeout and the trigger's retry count (the
# ASL uses exactly these three; the structure test checks it).

data "aws_iam_policy_document" "sfn_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["states.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "sfn" {
  name               = "${local.prefix}-sfn"
  assume_role_policy = data.aws_iam_policy_document.sfn_assume.json
  tags               = local.tags
}

data "aws_iam_policy_document" "sfn" {
  statement {
    actions   = ["lambda:InvokeFunction"]
    resources = [aws_lambda_function.fn["orchestrator"].arn, "${aws_lambda_function.fn["orchestrator"].arn}:*"]
  }
  statement {
    actions   = ["logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery", "logs:ListLogDeliveries", "logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups"]
    resources = ["*"]
  }
}

resource "aws_iam_role_policy" "sfn" {
  name   = "invoke-orchestrator"
  role   = aws_iam_role.sfn.id
  policy = data.aws_iam_policy_document.sfn.json
}

resource "aws_cloudwatch_log_group" "sfn" {
  name              = "/aws/vendedlogs/states/${local.state_machine_name}"
  retention_in_days = var.log_retention_days
  kms_key_id        = local.kms_key_arn
  tags              = local.tags
}

resource "aws_sfn_state_machine" "pipeline" {
  name     = local.state_machine_name
  role_arn = aws_iam_role.sfn.arn
  definition = templatefile("${path.module}/../statemachine.asl.json", {
    orchestrator_arn     = aws_lambda_function.fn["orchestrator"].arn
    sfn_timeout_seconds  = var.sfn_timeout_seconds
    trigger_max_attempts = var.trigger_max_attempts
    # Every Task times out before the orchestrator's Lambda does, so a long
    # job call is never killed by the Lambda's own timeout (docs/aws.md).
    task_timeout_seconds = local.functions["orchestrator"].timeout - 30
  })
  logging_configuration {
    log_destination        = "${aws_cloudwatch_log_group.sfn.arn}:*"
    include_execution_data = false
    level                  = "ERROR"
  }
  tags       = local.tags
  depends_on = [aws_iam_role_policy.sfn]
}
