output "function_uri" {
  description = "The function's URL (authenticated calls only)."
  value       = google_cloudfunctions2_function.watchdog.service_config[0].uri
}

output "function_service_account" {
  description = "The function's identity: grant it access to the Cloud SQL database's user."
  value       = google_service_account.function.email
}

output "scheduler_job" {
  description = "The Cloud Scheduler job calling the function."
  value       = google_cloud_scheduler_job.watchdog.id
}
