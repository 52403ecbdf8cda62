// Package interlock is the module's root package. It holds one thing: the
// entry point of the watchdog's Google Cloud Function (gen 2) when it is
// deployed from source. Google's Go buildpack builds the package at the
// root of the uploaded source (it does not read GOOGLE_FUNCTION_SOURCE, as
// its Python and Ruby buildpacks do) with a generated main, and serves the
// function registered here under the entry point Watchdog. The program
// cmd/gcp-watchdog is the same function for local runs and containers.
// See docs/gcp.md.
package interlock

import (
	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/interlockhq/interlock/internal/runtime/gcpfn"
)

// GCPEntryPoint is the function's name for `gcloud functions deploy
// --entry-point` and deploy/gcp's build_config.entry_point.
const GCPEntryPoint = "Watchdog"

func init() {
	functions.HTTP(GCPEntryPoint, gcpfn.EnvHandler())
}
