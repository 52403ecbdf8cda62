# The module's variables (seed 003, reference §7.8; docs/aws.md, "Deploy
# with Terraform").

variable "environment" {
  description = "Prefix of every resource name: \"<environment>-interlock-…\"."
  type        = string
  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9-]{0,30}$", var.environment))
    error_message = "environment must be 1-31 lower-case letters, digits or hyphens."
  }
}

variable "dist_path" {
  description = "Directory of the functions' packages, <function>.zip (deploy/build.sh, make dist)."
  type        = string
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}

variable "lambda_memory_size" {
  description = "Memory of every function, MB."
  type        = number
  default     = 128
}

variable "lambda_concurrency" {
  description = "Reserved concurrency per function; a function not listed is unreserved (the default: reserving fails on an account whose concurrency quota leaves less than 100 unreserved, as new accounts' quota of 10 does). The alert-dispatcher, when listed, needs at least 2: its queue mapping's maximum_concurrency is that number (AWS's minimum is 2)."
  type        = map(number)
  default     = {}
  validation {
    condition     = alltrue([for k, v in var.lambda_concurrency : contains(["stream-router", "orchestrator", "sla-monitor", "watchdog", "event-sink", "alert-dispatcher", "event-publisher"], k) && v >= 0 && floor(v) == v])
    error_message = "lambda_concurrency maps a function (stream-router, orchestrator, sla-monitor, watchdog, event-sink, alert-dispatcher, event-publisher) to a whole number of reserved executions."
  }
  validation {
    condition     = lookup(var.lambda_concurrency, "sla-monitor", 2) >= 2
    error_message = "lambda_concurrency[\"sla-monitor\"] must be at least 2: the SLA DLQ's replay mapping may invoke it twice at once."
  }
  validation {
    condition     = lookup(var.lambda_concurrency, "alert-dispatcher", 2) >= 2
    error_message = "lambda_concurrency[\"alert-dispatcher\"] must be at least 2: the alert queue's mapping may invoke it that many times at once (maximum_concurrency's minimum), and throttled receives would drain alerts into the DLQ."
  }
}

variable "orchestrator_timeout_seconds" {
  description = "The orchestrator function's timeout: the longest job call (a synchronous lambda job, an http job's timeout) must finish inside it. The state machine's Tasks time out 30 s earlier, and deploy-config (config_loader.tf) refuses a pipeline whose job call cannot finish in it."
  type        = number
  default     = 300
  validation {
    condition     = var.orchestrator_timeout_seconds >= 60 && var.orchestrator_timeout_seconds <= 900 && floor(var.orchestrator_timeout_seconds) == var.orchestrator_timeout_seconds
    error_message = "orchestrator_timeout_seconds must be a whole number of seconds from 60 to 900 (Lambda's limit)."
  }
}

variable "point_in_time_recovery" {
  description = "Point-in-time recovery on the four tables (off only where it is not available, e.g. DynamoDB Local)."
  type        = bool
  default     = true
}

variable "vpc_subnet_ids" {
  description = "Subnets to run the orchestrator in (its job systems inside a VPC, e.g. a private Airflow); empty: no VPC. The subnets need a route to DynamoDB, Step Functions and the job systems' APIs (NAT or VPC endpoints)."
  type        = list(string)
  default     = []
}

variable "vpc_security_group_ids" {
  description = "The orchestrator's security groups when vpc_subnet_ids is set."
  type        = list(string)
  default     = []
  validation {
    condition     = (length(var.vpc_subnet_ids) == 0) == (length(var.vpc_security_group_ids) == 0)
    error_message = "vpc_subnet_ids and vpc_security_group_ids go together: set both (orchestrator in a VPC) or neither."
  }
}

variable "job_secrets" {
  description = "Secrets the orchestrator's job templates read as $${env:NAME}: NAME => a Secrets Manager secret ARN or an SSM parameter ARN (SecureString decrypted). The orchestrator reads them at start (SECRETS_FROM); each NAME is added to env_allow, and its role may read exactly these ARNs (and decrypt them through their service)."
  type        = map(string)
  default     = {}
  validation {
    condition = alltrue([for k, v in var.job_secrets : can(regex("^[A-Za-z_][A-Za-z0-9_]*$", k)) && (
      can(regex("^arn:[a-z-]+:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$", v)) || can(regex("^arn:[a-z-]+:ssm:[a-z0-9-]+:[0-9]{12}:parameter/.+$", v))
    )])
    error_message = "job_secrets maps an environment variable name ([A-Za-z_][A-Za-z0-9_]*) to a Secrets Manager secret ARN (arn:…:secretsmanager:…:secret:…) or an SSM parameter ARN (arn:…:ssm:…:parameter/…)."
  }
}

variable "log_retention_days" {
  description = "Retention of the functions' and the state machine's logs."
  type        = number
  default     = 14
}

variable "watchdog_schedule" {
  description = "When the watchdog runs (an EventBridge schedule expression)."
  type        = string
  default     = "rate(5 minutes)"
}

variable "watchdog_stuck_run_threshold" {
  description = "How long a run may go without progress before the watchdog reports it stuck (a Go duration, e.g. 30m; empty: 30m), as watchdog.stuckRunThreshold in interlock.yaml."
  type        = string
  default     = ""
  validation {
    condition     = var.watchdog_stuck_run_threshold == "" || can(regex("^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+$", var.watchdog_stuck_run_threshold))
    error_message = "watchdog_stuck_run_threshold must be a Go duration such as 30m or 1h30m, or empty."
  }
}

variable "trigger_allow_addresses" {
  description = "Networks (and ports) the HTTP-family job types (http, airflow, databricks) may reach despite the SSRF guard: IP, IP:PORT, CIDR or CIDR:PORT, as triggers.allowAddresses in interlock.yaml. The orchestrator refuses to start on an invalid entry."
  type        = list(string)
  default     = []
}

variable "env_allow" {
  description = "Environment variables of the orchestrator that job templates may read with $${env:NAME}, as server.envAllow in interlock.yaml."
  type        = list(string)
  default     = []
}

variable "sfn_timeout_seconds" {
  description = "The state machine's global TimeoutSeconds: the hard bound of one run's execution."
  type        = number
  default     = 14400
  validation {
    condition     = var.sfn_timeout_seconds >= 60 && var.sfn_timeout_seconds <= 31536000
    error_message = "sfn_timeout_seconds must be between 60 and 31536000 (a year, Step Functions' limit)."
  }
}

variable "trigger_max_attempts" {
  description = "Attempts of the Trigger state on infrastructure errors (exponential backoff)."
  type        = number
  default     = 3
  validation {
    condition     = var.trigger_max_attempts >= 1 && var.trigger_max_attempts <= 10
    error_message = "trigger_max_attempts must be between 1 and 10."
  }
}

variable "events_table_ttl_days" {
  description = "Retention of events and of what expires with them (EVENTS_TTL_DAYS)."
  type        = number
  default     = 90
  validation {
    condition     = var.events_table_ttl_days >= 1 && var.events_table_ttl_days <= 36500 && floor(var.events_table_ttl_days) == var.events_table_ttl_days
    error_message = "events_table_ttl_days must be a whole number of days from 1 to 36500."
  }
}

variable "deletion_protection" {
  description = "DynamoDB deletion protection on the four tables."
  type        = bool
  default     = true
}

variable "slack_channel_id" {
  description = "The Slack channel the alert-dispatcher posts to when the deployment's alert config (stored by interlock deploy-config, settings_path) and alerts_config have no alerts: (its one route, the default selection). Without any route the dispatcher logs each alert and drops it."
  type        = string
  default     = ""
}

variable "alerts_config" {
  description = "The fallback routes and maintenance windows while the deployment has no stored alert config (interlock deploy-config --config interlock.yaml stores one; settings_path does it at apply): interlock.yaml's alerts: and maintenance: sections as YAML, set as the functions' ALERTS_CONFIG and checked at their start as interlock.yaml is. Secrets stay references (tokenEnv, secretEnv) to alert_secrets. A Lambda's environment holds 4 KB in all."
  type        = string
  default     = ""
}

variable "alert_secrets" {
  description = "Secrets the alert routes read (a Slack route's tokenEnv, a webhook's secretEnv): NAME => a Secrets Manager secret ARN or an SSM parameter ARN (SecureString decrypted). The dispatcher reads them at start (SECRETS_FROM), and its role may read exactly these ARNs (and decrypt them through their service)."
  type        = map(string)
  default     = {}
  validation {
    condition = alltrue([for k, v in var.alert_secrets : can(regex("^[A-Za-z_][A-Za-z0-9_]*$", k)) && (
      can(regex("^arn:[a-z-]+:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$", v)) || can(regex("^arn:[a-z-]+:ssm:[a-z0-9-]+:[0-9]{12}:parameter/.+$", v))
    )])
    error_message = "alert_secrets maps an environment variable name ([A-Za-z_][A-Za-z0-9_]*) to a Secrets Manager secret ARN (arn:…:secretsmanager:…:secret:…) or an SSM parameter ARN (arn:…:ssm:…:parameter/…)."
  }
}

variable "slack_bot_token" {
  description = "The Slack bot token as plain text (prefer slack_secret_arn: this one is stored in the function's configuration and the state)."
  type        = string
  default     = ""
  sensitive   = true
}

variable "slack_secret_arn" {
  description = "A Secrets Manager secret holding the Slack bot token (wins over slack_bot_token). Under a customer managed key too: the dispatcher may decrypt it through Secrets Manager (kms:ViaService), for this secret only."
  type        = string
  default     = ""
}

variable "kms_key_arn" {
  description = "A customer managed KMS key for the tables, queues and logs (empty: none, or create_kms_key)."
  type        = string
  default     = ""
}

variable "create_kms_key" {
  description = "Create a customer managed KMS key for the tables, queues and logs (ignored when kms_key_arn is set)."
  type        = bool
  default     = false
}

variable "create_dashboard" {
  description = "Create a CloudWatch dashboard \"<prefix>\" of the functions' metrics (namespace Interlock: runs, jobs, SLAs, alerts, watchdog) and their Lambda errors."
  type        = bool
  default     = false
}

variable "sns_alarm_topic_arn" {
  description = "An SNS topic for the alarms' ALARM and OK actions (empty: none; the alarms still become INFRA_ALARM events)."
  type        = string
  default     = ""
}

# Opt-in job-system permissions of the orchestrator, each scoped to a list
# of ARNs that must not be empty when enabled.

variable "enable_glue_trigger" {
  description = "Let the orchestrator start and read the Glue jobs of glue_job_arns (and their logs, for the cause of a failure)."
  type        = bool
  default     = false
}

variable "glue_job_arns" {
  description = "The Glue jobs the orchestrator may run."
  type        = list(string)
  default     = []
  validation {
    condition     = !var.enable_glue_trigger || length(var.glue_job_arns) > 0
    error_message = "enable_glue_trigger needs glue_job_arns: the permission is scoped to them."
  }
}

variable "enable_emr_trigger" {
  description = "Let the orchestrator add and read steps on the EMR clusters of emr_cluster_arns."
  type        = bool
  default     = false
}

variable "emr_cluster_arns" {
  description = "The EMR clusters the orchestrator may add steps to."
  type        = list(string)
  default     = []
  validation {
    condition     = !var.enable_emr_trigger || length(var.emr_cluster_arns) > 0
    error_message = "enable_emr_trigger needs emr_cluster_arns: the permission is scoped to them."
  }
}

variable "enable_emr_serverless_trigger" {
  description = "Let the orchestrator run jobs on the EMR Serverless applications of emr_serverless_app_arns."
  type        = bool
  default     = false
}

variable "emr_serverless_execution_role_arns" {
  description = "The job runtime roles the orchestrator may pass to EMR Serverless (a job's executionRoleArn): iam:PassRole on exactly these, to emr-serverless.amazonaws.com only."
  type        = list(string)
  default     = []
  validation {
    condition     = !var.enable_emr_serverless_trigger || length(var.emr_serverless_execution_role_arns) > 0
    error_message = "enable_emr_serverless_trigger needs emr_serverless_execution_role_arns: StartJobRun passes the job's executionRoleArn, which the orchestrator may pass only when it is listed."
  }
}

variable "emr_serverless_app_arns" {
  description = "The EMR Serverless applications the orchestrator may run jobs on."
  type        = list(string)
  default     = []
  validation {
    condition     = !var.enable_emr_serverless_trigger || length(var.emr_serverless_app_arns) > 0
    error_message = "enable_emr_serverless_trigger needs emr_serverless_app_arns: the permission is scoped to them."
  }
}

variable "enable_sfn_trigger" {
  description = "Let the orchestrator start and read executions of the state machines of sfn_trigger_arns."
  type        = bool
  default     = false
}

variable "sfn_trigger_arns" {
  description = "The state machines the orchestrator may start."
  type        = list(string)
  default     = []
  validation {
    condition     = !var.enable_sfn_trigger || length(var.sfn_trigger_arns) > 0
    error_message = "enable_sfn_trigger needs sfn_trigger_arns: the permission is scoped to them."
  }
}

variable "enable_lambda_trigger" {
  description = "Let the orchestrator invoke the functions of lambda_trigger_arns."
  type        = bool
  default     = false
}

variable "lambda_trigger_arns" {
  description = "The functions the orchestrator may invoke."
  type        = list(string)
  default     = []
  validation {
    condition     = !var.enable_lambda_trigger || length(var.lambda_trigger_arns) > 0
    error_message = "enable_lambda_trigger needs lambda_trigger_arns: the permission is scoped to them."
  }
}

# Loading pipeline and calendar files (config_loader.tf).

variable "pipelines_path" {
  description = "A directory of pipeline YAML to load with `interlock deploy-config` at apply (empty: load them yourself)."
  type        = string
  default     = ""
}

variable "settings_path" {
  description = "The project's interlock.yaml, given to deploy-config as --config (with pipelines_path): checked as serve checks it (an invalid file fails the apply, nothing written), its envAllow applied, and its alerts: and maintenance: stored as the deployment's alert config, which the alert-dispatcher routes by and the functions and a control plane take the windows from. Empty: the stored alert config is left as it is."
  type        = string
  default     = ""
}

variable "calendars_path" {
  description = "A directory of calendar YAML loaded with the pipelines (the calendars it defines are then the whole set)."
  type        = string
  default     = ""
}

variable "interlock_cli" {
  description = "The interlock command on the machine running Terraform (it needs the AWS credentials of the apply)."
  type        = string
  default     = "interlock"
}

variable "prune_pipelines" {
  description = "Stop the stored pipelines no file under pipelines_path defines (deploy-config --prune; their history stays)."
  type        = bool
  default     = false
}

# The API function (api.tf).

variable "enable_api_function" {
  description = "Deploy the api function: the /v1 API and the dashboard (the handler `interlock serve --store dynamodb://…` serves) behind a Lambda function URL with AWS_IAM auth."
  type        = bool
  default     = false
}

variable "api_tokens_secret_arn" {
  description = "A Secrets Manager secret holding the api function's bearer tokens: a JSON list of {\"name\", \"role\", \"token\"} (roles as server.tokens: reader, writer, operator, admin). Required with enable_api_function."
  type        = string
  default     = ""
  validation {
    condition     = !var.enable_api_function || var.api_tokens_secret_arn != ""
    error_message = "enable_api_function needs api_tokens_secret_arn: the function refuses to start without tokens."
  }
}

variable "telemetry_environment" {
  description = "OpenTelemetry settings of every function (docs/telemetry.md), e.g. { OTEL_EXPORTER_OTLP_ENDPOINT = \"http://localhost:4318\", OTEL_SERVICE_NAME = \"interlock-prod\" } with the ADOT collector layer in telemetry_layers. Empty (the default): no function traces. Only OTEL_* variables: the module sets the others."
  type        = map(string)
  default     = {}
  validation {
    condition     = alltrue([for k in keys(var.telemetry_environment) : can(regex("^OTEL_[A-Z0-9_]+$", k))])
    error_message = "telemetry_environment takes OTEL_* variables only (e.g. OTEL_EXPORTER_OTLP_ENDPOINT)."
  }
}

variable "telemetry_layers" {
  description = "Lambda layer ARNs added to every function, for a trace collector running beside it (e.g. the AWS Distro for OpenTelemetry collector layer for arm64). Empty by default."
  type        = list(string)
  default     = []
}
