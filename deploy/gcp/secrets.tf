# The database URL and the Slack token are secrets created outside
# Terraform (gcloud secrets create … --data-file=-): only their names are
# here. The settings file is not secret but is mounted the same way, as a
# file at a known path.

data "google_secret_manager_secret" "database_url" {
  secret_id = var.database_url_secret
}

data "google_secret_manager_secret" "slack_token" {
  secret_id = var.slack_token_secret
}

resource "google_secret_manager_secret" "settings" {
  secret_id = "${local.prefix}-settings"
  replication {
    auto {}
  }
}

resource "google_secret_manager_secret_version" "settings" {
  secret      = google_secret_manager_secret.settings.id
  secret_data = file(var.settings_file)
}

resource "google_secret_manager_secret_iam_member" "function" {
  for_each = {
    database_url = data.google_secret_manager_secret.database_url.secret_id
    slack_token  = data.google_secret_manager_secret.slack_token.secret_id
    settings     = google_secret_manager_secret.settings.secret_id
  }
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.function.email}"
}
