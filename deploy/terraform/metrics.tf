# The functions' metrics: each invocation writes one log line in
# CloudWatch's embedded metric format (internal/runtime/awsrt/metrics.go),
# which CloudWatch Logs turns into metrics of the namespace Interlock — no
# PutMetricData call, no permission. Dimensions: Environment (every
# metric), and Environment + Function for a function's own metrics. The
# alarms on them are in alarms.tf; the dashboard below is opt-in
# (create_dashboard). docs/aws.md, "Metrics", lists them.

locals {
  metrics_namespace = "Interlock"
  # A graph of Interlock metrics by Environment, summed per 5 minutes.
  metric_widget = { for k, w in {
    runs     = { title = "Runs: started, succeeded, failed", metrics = ["VALIDATION_PASSED", "JOB_TRIGGERED", "JOB_COMPLETED", "JOB_FAILED", "RETRY_EXHAUSTED", "VALIDATION_EXHAUSTED", "SFN_TIMEOUT"] }
    slas     = { title = "SLAs", metrics = ["SLA_MET", "SLA_WARNING", "SLA_BREACH", "RELATIVE_SLA_BREACH"] }
    alerts   = { title = "Alerts", metrics = ["AlertsDelivered", "AlertDeliveryFailures", "AlertsDeadLettered"] }
    watchdog = { title = "Watchdog", metrics = ["WatchdogPasses", "WatchdogFindings", "WatchdogChecksFailed", "SCHEDULE_MISSED", "RUN_STUCK", "WATCHDOG_DEGRADED"] }
    records  = { title = "Records named for redelivery, rejected items", metrics = ["RecordsFailed", "SENSOR_REJECTED", "JOB_REPORT_REJECTED", "INFRA_FAILURE"] }
    } : k => {
    type   = "metric"
    width  = 12
    height = 6
    properties = {
      title   = w.title
      region  = local.region
      stat    = "Sum"
      period  = 300
      view    = "timeSeries"
      metrics = [for m in w.metrics : [local.metrics_namespace, m, "Environment", var.environment]]
    }
  } }
}

resource "aws_cloudwatch_dashboard" "this" {
  count          = var.create_dashboard ? 1 : 0
  dashboard_name = local.prefix
  dashboard_body = jsonencode({
    widgets = concat(
      [for k in ["runs", "slas", "alerts", "watchdog", "records"] : local.metric_widget[k]],
      [{
        type   = "metric"
        width  = 24
        height = 6
        properties = {
          title   = "Function errors"
          region  = local.region
          stat    = "Sum"
          period  = 300
          view    = "timeSeries"
          metrics = [for fn in sort(keys(local.functions)) : ["AWS/Lambda", "Errors", "FunctionName", aws_lambda_function.fn[fn].function_name]]
        }
      }],
    )
  })
}
