# The four tables of seed 003, exactly as dynamodb.CreateTables makes them
# (internal/store/dynamodb/schema.go; the structure test compares the two):
# string PK and SK, pay-per-request, TTL on `ttl`, streams (NEW_IMAGE) on
# control, joblog and events (the events stream feeds the outbox
# publisher), point-in-time recovery (point_in_time_recovery), encryption, deletion
# protection.

locals {
  # Global indexes: name => key attributes. Cross-pipeline indexes have 16
  # partitions per key (docs/aws.md, "Indexes"). Every global index projects
  # whole items.
  control_gsis = {
    "pipelines"         = { pk = "pipelinesPK", sk = "pipelinesSK", sk_type = "S" }
    "sensors-changed"   = { pk = "sensorsChangedPK", sk = "sensorsChangedSK", sk_type = "S" }
    "active-runs"       = { pk = "activeRunsPK", sk = "activeRunsSK", sk_type = "S" }
    "runs-by-period"    = { pk = "runsByPeriodPK", sk = "runsByPeriodSK", sk_type = "S" }
    "runs-by-update"    = { pk = "runsByUpdatePK", sk = "runsByUpdateSK", sk_type = "S" }
    "markers-by-period" = { pk = "markersByPeriodPK", sk = "markersByPeriodSK", sk_type = "S" }
    "markers-by-write"  = { pk = "markersByWritePK", sk = "markersByWriteSK", sk_type = "S" }
    "timers-due"        = { pk = "timersDuePK", sk = "timersDueSK", sk_type = "S" }
    "timers-by-kind"    = { pk = "timersByKindPK", sk = "timersByKindSK", sk_type = "S" }
  }
  # Local indexes (on PK): name => sort key. They project the keys and
  # scheduleId only; their reads fetch the items from the table.
  control_lsis = {
    "changed" = { sk = "changedSK", sk_type = "S" }
    "period"  = { sk = "periodSK", sk_type = "S" }
    "active"  = { sk = "activeSK", sk_type = "S" }
  }
  lsi_projected = ["scheduleId"]
  events_gsis = {
    "events-by-pipeline" = { pk = "eventsByPipelinePK", sk = "seq", sk_type = "N" }
    "events-by-period"   = { pk = "eventsByPeriodPK", sk = "seq", sk_type = "N" }
    "events-by-type"     = { pk = "eventsByTypePK", sk = "seq", sk_type = "N" }
  }

  # Every attribute an index keys on, with its type. One small map per
  # index merged, not one `for` map: "seq" keys three events indexes, and a
  # `for` expression refuses a key it produces twice.
  control_attributes = merge(concat(
    [for name, ix in local.control_gsis : { (ix.pk) = "S", (ix.sk) = ix.sk_type }],
    [for name, ix in local.control_lsis : { (ix.sk) = ix.sk_type }],
  )...)
  events_attributes = merge([for name, ix in local.events_gsis : { (ix.pk) = "S", (ix.sk) = ix.sk_type }]...)
}

# The four tables as one resource, as CreateTables makes them from one
# list of specs (schema.go's specs()): name, stream, indexes.
locals {
  table_specs = {
    control = { stream = true, gsis = local.control_gsis, lsis = local.control_lsis, attributes = local.control_attributes }
    joblog  = { stream = true, gsis = {}, lsis = {}, attributes = {} }
    rerun   = { stream = false, gsis = {}, lsis = {}, attributes = {} }
    # A stream on the events table is our addition to seed 003: the outbox
    # publisher reads it.
    events = { stream = true, gsis = local.events_gsis, lsis = {}, attributes = local.events_attributes }
  }
}

resource "aws_dynamodb_table" "table" {
  for_each                    = local.table_specs
  name                        = local.tables[each.key]
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "PK"
  range_key                   = "SK"
  stream_enabled              = each.value.stream
  stream_view_type            = each.value.stream ? "NEW_IMAGE" : null
  deletion_protection_enabled = var.deletion_protection

  attribute {
    name = "PK"
    type = "S"
  }
  attribute {
    name = "SK"
    type = "S"
  }
  dynamic "attribute" {
    for_each = each.value.attributes
    content {
      name = attribute.key
      type = attribute.value
    }
  }
  dynamic "global_secondary_index" {
    for_each = each.value.gsis
    content {
      name            = global_secondary_index.key
      hash_key        = global_secondary_index.value.pk
      range_key       = global_secondary_index.value.sk
      projection_type = "ALL"
    }
  }
  dynamic "local_secondary_index" {
    for_each = each.value.lsis
    content {
      name               = local_secondary_index.key
      range_key          = local_secondary_index.value.sk
      projection_type    = "INCLUDE"
      non_key_attributes = local.lsi_projected
    }
  }
  ttl {
    attribute_name = "ttl"
    enabled        = true
  }
  point_in_time_recovery {
    enabled = var.point_in_time_recovery
  }
  server_side_encryption {
    enabled     = true
    kms_key_arn = local.kms_key_arn
  }
  tags = local.tags
}
