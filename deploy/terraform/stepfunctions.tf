# The run's state machine: deploy/statemachine.asl.json rendered with the
# orchestrator's ARN, the global timeout, the trigger's retry count and the
# Tasks' timeout (the ASL uses exactly these; the structure test checks it).

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

resource "aws_sfn_state_machine" "pipeline" {
  name     = local.state_machine_name
  role_arn = aws_iam_role.sfn.arn
  definition = templatefile("${path.module}/../statemachine.asl.json", {
    # From its name, not the resource: the definition is then known at
    # plan, where the provider has Step Functions validate it.
    orchestrator_arn     = "${local.function_arn_prefix}orchestrator"
    sfn_timeout_seconds  = var.sfn_timeout_seconds
    trigger_max_attempts = var.trigger_max_attempts
    # Every Task times out 30 s before the orchestrator would be killed:
    # the Task's States.Timeout is retried, not an invocation cut mid-call.
    task_timeout_seconds = local.functions["orchestrator"].timeout - 30
  })
  logging_configuration {
    log_destination        = "${aws_cloudwatch_log_group.fn["state-machine"].arn}:*"
    include_execution_data = false
    level                  = "ERROR"
  }
  tags       = local.tags
  depends_on = [aws_iam_role_policy.sfn] # it names the orchestrator's function: that exists first
}
