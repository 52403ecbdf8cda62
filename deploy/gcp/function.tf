# The source: the whole module (the function package imports internal/…),
# without what the build does not need.
data "archive_file" "source" {
  type        = "zip"
  source_dir  = "${path.module}/../.."
  output_path = "${path.module}/.build/interlock-source.zip"
  excludes    = [".git", "dist", "deploy/gcp/.build", "deploy/gcp/.terraform", "test/emulators/node_modules"]
}

resource "google_storage_bucket" "source" {
  name                        = "${var.project}-${local.prefix}-source"
  location                    = var.region
  uniform_bucket_level_access = true
}

resource "google_storage_bucket_object" "source" {
  # The content's hash in the name: a new source is a new object, which
  # makes Terraform rebuild the function.
  name   = "interlock-source-${data.archive_file.source.output_md5}.zip"
  bucket = google_storage_bucket.source.name
  source = data.archive_file.source.output_path
}

resource "google_cloudfunctions2_function" "watchdog" {
  name     = "${local.prefix}-watchdog"
  location = var.region

  build_config {
    runtime     = var.go_runtime
    entry_point = "Watchdog" # interlock.GCPEntryPoint, the module root's package
    source {
      storage_source {
        bucket = google_storage_bucket.source.name
        object = google_storage_bucket_object.source.name
      }
    }
  }

  service_config {
    # One pass at a time per instance is enough; the scheduler calls every
    # five minutes and a pass is short.
    max_instance_count    = 1
    available_memory      = "256M"
    timeout_seconds       = 120
    ingress_settings      = "ALLOW_ALL" # authenticated calls only: no allUsers invoker
    service_account_email = google_service_account.function.email
    vpc_connector         = var.vpc_connector
    environment_variables = local.function_env

    secret_environment_variables {
      key        = "INTERLOCK_STORE_URL"
      project_id = var.project
      secret     = data.google_secret_manager_secret.database_url.secret_id
      version    = "latest"
    }
    secret_environment_variables {
      key        = "SLACK_BOT_TOKEN"
      project_id = var.project
      secret     = data.google_secret_manager_secret.slack_token.secret_id
      version    = "latest"
    }
    secret_volumes {
      mount_path = local.settings_dir
      project_id = var.project
      secret     = google_secret_manager_secret.settings.secret_id
      versions {
        version = google_secret_manager_secret_version.settings.version
        path    = "interlock.yaml"
      }
    }
  }

  depends_on = [google_secret_manager_secret_iam_member.function]
}
