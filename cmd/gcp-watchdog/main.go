// Command gcp-watchdog serves the watchdog's Google Cloud Function
// (internal/runtime/gcpfn) with the Functions Framework: locally on
// 127.0.0.1:$PORT (default 8080) at /watchdog, or — with FUNCTION_TARGET
// set, as in Cloud Functions and Cloud Run — that function alone at /.
// See docs/gcp.md.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	"github.com/interlockhq/interlock/internal/runtime/gcpfn"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "gcp-watchdog: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := gcpfn.FromEnv(os.LookupEnv)
	if err != nil {
		return err
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := funcframework.RegisterHTTPFunctionContext(ctx, "/watchdog", gcpfn.Handler(cfg)); err != nil {
		return err
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	host := "127.0.0.1"
	if os.Getenv("FUNCTION_TARGET") != "" || os.Getenv("K_SERVICE") != "" {
		host = "" // in the cloud: every interface, as the platform routes to it
	}
	return funcframework.StartHostPort(host, port)
}
