# Pipeline and calendar YAML into the control table, validated fail-closed
# first: `interlock deploy-config` (docs/aws.md, "Load configs") runs on the
# machine that applies, after the tables exist, and again whenever a file
# changes. One invalid file and nothing is written (the apply fails with
# every error, file:line). With settings_path, the project's interlock.yaml
# is checked too and its alerts: and maintenance: stored as the
# deployment's alert config. Opt-in: set pipelines_path. Or leave it empty
# and run the same command from CI.

locals {
  config_paths = compact([var.pipelines_path, var.calendars_path])
  config_files = flatten([for d in local.config_paths : [for f in fileset(d, "**/*.{yaml,yml}") : "${d}/${f}"]])
}

resource "terraform_data" "config" {
  count = var.pipelines_path == "" ? 0 : 1

  triggers_replace = {
    files    = sha256(join("\n", [for f in local.config_files : "${f}=${filesha256(f)}"]))
    settings = var.settings_path == "" ? "" : filesha256(var.settings_path)
    server   = "dynamodb://${local.prefix}?region=${local.region}"
    prune    = var.prune_pipelines
    budget   = local.functions["orchestrator"].timeout
  }

  provisioner "local-exec" {
    command = join(" ", concat(
      [var.interlock_cli, "deploy-config"],
      [for p in local.config_paths : "'${p}'"],
      ["--server", "'dynamodb://${local.prefix}?region=${local.region}'"],
      # A pipeline whose job call cannot finish inside the orchestrator is refused.
      ["--orchestrator-timeout", "${local.functions["orchestrator"].timeout}s"],
      var.prune_pipelines ? ["--prune"] : [],
      # interlock.yaml: its envAllow, and its alerts: and maintenance: stored.
      var.settings_path == "" ? [] : ["--config", "'${var.settings_path}'"],
    ))
  }

  depends_on = [aws_dynamodb_table.table]
}
