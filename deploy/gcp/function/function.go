// Package function is the source-deployment entry point of the watchdog's
// Cloud Function (gen 2): Google's Go buildpack builds the package it is
// pointed at (GOOGLE_FUNCTION_SOURCE=deploy/gcp/function, set by
// deploy/gcp's Terraform) with a generated main, and serves the function
// registered here under the entry point Watchdog. cmd/gcp-watchdog is the
// same function as a program (local runs, containers). See docs/gcp.md.
package function

import (
	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/interlockhq/interlock/internal/runtime/gcpfn"
)

// EntryPoint is the function's name for `gcloud functions deploy
// --entry-point` and Terraform's build_config.entry_point.
const EntryPoint = "Watchdog"

func init() {
	functions.HTTP(EntryPoint, gcpfn.EnvHandler())
}
