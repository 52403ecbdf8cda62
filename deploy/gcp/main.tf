# The Interlock watchdog as a Google Cloud Function (gen 2), called every
# five minutes by Cloud Scheduler with an OIDC token (docs/gcp.md).
#
#   cd deploy/gcp
#   terraform init
#   terraform apply -var project=my-project -var region=europe-west1 \
#     -var database_url_secret=interlock-db-url -var slack_token_secret=interlock-slack-token \
#     -var settings_file=./interlock.yaml
#
# The function's source is this repository (the module root, two levels
# up), zipped and uploaded to a bucket; Google's Go buildpack builds the
# package at its root (gcpfunction.go) whose entry point is Watchdog. The pipelines are not deployed here: they are in the
# PostgreSQL store already, written by the serve replicas (docs/gcp.md).

terraform {
  required_version = ">= 1.5.0"
  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 5.20.0"
    }
    archive = {
      source  = "hashicorp/archive"
      version = ">= 2.4.0"
    }
  }
}

provider "google" {
  project = var.project
  region  = var.region
}

locals {
  prefix = "${var.environment}-interlock"
  # Where the settings secret is mounted in the function; INTERLOCK_CONFIG
  # points at the file.
  settings_dir  = "/etc/interlock"
  settings_path = "${local.settings_dir}/interlock.yaml"
  # The function's plain environment (secrets are in
  # secret_environment_variables).
  function_env = {
    INTERLOCK_CONFIG = local.settings_path
  }
}
