variable "project" {
  description = "The GCP project to deploy into."
  type        = string
}

variable "region" {
  description = "The region of the function and the scheduler job (Cloud SQL's, to keep the store close)."
  type        = string
}

variable "environment" {
  description = "Prefix of every name: <environment>-interlock-…"
  type        = string
  default     = "prod"
}

variable "go_runtime" {
  description = "The Cloud Functions Go runtime: one offered by Cloud Functions that builds go.mod's Go version."
  type        = string
  default     = "go126"
}

variable "database_url_secret" {
  description = "Secret Manager secret (id) holding the store's postgres:// URL (INTERLOCK_STORE_URL). Created and filled outside Terraform, so the password never enters the state."
  type        = string
}

variable "slack_token_secret" {
  description = "Secret Manager secret (id) holding the Slack bot token, exposed as SLACK_BOT_TOKEN (interlock.yaml: tokenEnv: SLACK_BOT_TOKEN)."
  type        = string
}

variable "settings_file" {
  description = "The interlock.yaml the function reads: its alerts and watchdog settings (its store: is replaced by INTERLOCK_STORE_URL)."
  type        = string
}

variable "schedule" {
  description = "How often Cloud Scheduler calls the function (cron)."
  type        = string
  default     = "*/5 * * * *"
}

variable "vpc_connector" {
  description = "A Serverless VPC Access connector to reach Cloud SQL's private IP (null: the function reaches the database over its public address)."
  type        = string
  default     = null
}
