# An optional customer managed key for the tables, the queues and the log
# groups: create_kms_key makes one here; kms_key_arn brings your own (it
# wins). Neither: AWS owned keys (DynamoDB and SQS still encrypt at rest).

resource "aws_kms_key" "this" {
  count                   = var.create_kms_key && var.kms_key_arn == "" ? 1 : 0
  description             = "Interlock ${var.environment}: tables, queues and logs"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy                  = data.aws_iam_policy_document.kms[0].json
  tags                    = local.tags
}

resource "aws_kms_alias" "this" {
  count         = length(aws_kms_key.this)
  name          = "alias/${local.prefix}"
  target_key_id = aws_kms_key.this[0].key_id
}

data "aws_iam_policy_document" "kms" {
  count = var.create_kms_key && var.kms_key_arn == "" ? 1 : 0
  statement {
    sid       = "Account"
    actions   = ["kms:*"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = ["arn:${local.partition}:iam::${local.account_id}:root"]
    }
  }
  # CloudWatch Logs, EventBridge (to the encrypted alert queue) and SQS use the key.
  statement {
    sid       = "Services"
    actions   = ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"]
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = ["logs.${local.region}.amazonaws.com", "events.amazonaws.com", "sqs.amazonaws.com"]
    }
  }
}
