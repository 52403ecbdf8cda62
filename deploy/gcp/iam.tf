# The function runs as its own service account (Cloud SQL client, the
# three secrets); the scheduler calls it as another, the only invoker.

resource "google_service_account" "function" {
  account_id   = "${var.environment}-interlock-watchdog"
  display_name = "Interlock watchdog function"
}

resource "google_project_iam_member" "function_cloudsql" {
  project = var.project
  role    = "roles/cloudsql.client"
  member  = "serviceAccount:${google_service_account.function.email}"
}

resource "google_service_account" "scheduler" {
  account_id   = "${var.environment}-interlock-scheduler"
  display_name = "Interlock watchdog scheduler (invoker)"
}

resource "google_cloudfunctions2_function_iam_member" "invoker" {
  project        = google_cloudfunctions2_function.watchdog.project
  location       = google_cloudfunctions2_function.watchdog.location
  cloud_function = google_cloudfunctions2_function.watchdog.name
  role           = "roles/cloudfunctions.invoker"
  member         = "serviceAccount:${google_service_account.scheduler.email}"
}

# A gen 2 function is a Cloud Run service: the OIDC call is authorized
# by run.invoker on it.
resource "google_cloud_run_service_iam_member" "invoker" {
  project  = google_cloudfunctions2_function.watchdog.project
  location = google_cloudfunctions2_function.watchdog.location
  service  = google_cloudfunctions2_function.watchdog.service_config[0].service
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.scheduler.email}"
}
