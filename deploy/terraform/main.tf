# Interlock on AWS: the module (docs/aws.md, "Deploy with Terraform").
#
#   deploy/build.sh            # or: make dist
#   cd deploy/terraform
#   terraform init
#   terraform apply -var environment=prod -var dist_path=../../dist -var slack_channel_id=C0123
#
# Every name starts with "<environment>-interlock"; the tables are the four
# of seed 003 exactly as dynamodb.CreateTables makes them (internal/store/
# dynamodb/schema.go), and the functions are the directories of cmd/lambda.

terraform {
  required_version = ">= 1.9.0" # a variable's validation references another (variables.tf)
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.40.0, < 6.0.0" # 6.x renames attributes the module uses (aws_region.name, …)
    }
  }
}

data "aws_region" "current" {}
data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

locals {
  prefix     = "${var.environment}-interlock"
  region     = data.aws_region.current.name
  account_id = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition

  # The store's tables: dynamodb.TablesFor("<environment>-interlock").
  tables = {
    control = "${local.prefix}-control"
    joblog  = "${local.prefix}-joblog"
    rerun   = "${local.prefix}-rerun"
    events  = "${local.prefix}-events"
  }

  bus_name           = "${local.prefix}-events"
  state_machine_name = "${local.prefix}-pipeline"
  scheduler_group    = "${local.prefix}-sla"

  # ARNs built from names, not from the resources: a function's
  # environment names the state machine and the sla-monitor, which
  # themselves depend on the functions (a cycle otherwise).
  function_arn_prefix = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${local.prefix}-"
  state_machine_arn   = "arn:${local.partition}:states:${local.region}:${local.account_id}:stateMachine:${local.state_machine_name}"
  sla_monitor_arn     = "${local.function_arn_prefix}sla-monitor"
  # The same for the SLA DLQ and the Scheduler role the sla-monitor names
  # in its schedules: its environment is then known at plan (lambda.tf's
  # depends_on makes both exist before it).
  queue_arn_prefix   = "arn:${local.partition}:sqs:${local.region}:${local.account_id}:"
  sla_dlq_name       = "${local.prefix}-sla-dlq"
  sla_dlq_arn        = "${local.queue_arn_prefix}${local.sla_dlq_name}"
  scheduler_role_arn = "arn:${local.partition}:iam::${local.account_id}:role/${local.prefix}-scheduler"

  # The customer managed key of the tables, queues and logs: the one given,
  # the one this module creates, or none (AWS owned keys).
  # has_kms_key is known at plan (the created key's ARN is not): what
  # depends on whether there is a key asks it, not kms_key_arn.
  has_kms_key = var.kms_key_arn != "" || var.create_kms_key
  kms_key_arn = var.kms_key_arn != "" ? var.kms_key_arn : (var.create_kms_key ? aws_kms_key.this[0].arn : null)

  tags = merge({ "interlock:environment" = var.environment }, var.tags)
}
