# Every five minutes, an authenticated POST: the OIDC token is minted for
# the scheduler's service account with the function's URL as audience.
resource "google_cloud_scheduler_job" "watchdog" {
  name             = "${local.prefix}-watchdog"
  region           = var.region
  schedule         = var.schedule
  time_zone        = "Etc/UTC"
  attempt_deadline = "180s"

  retry_config {
    retry_count = 0 # the next call is five minutes away; a 503 is an answer, not a reason to hammer
  }

  http_target {
    http_method = "POST"
    uri         = google_cloudfunctions2_function.watchdog.service_config[0].uri
    oidc_token {
      service_account_email = google_service_account.scheduler.email
      audience              = google_cloudfunctions2_function.watchdog.service_config[0].uri
    }
  }
}
