package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local"
)

func init() {
	register(&command{
		name:    "serve",
		summary: "Run Interlock: the HTTP API, the engine, the watchdog and alert delivery",
		usage:   "[--config FILE] [--addr HOST:PORT] [--store sqlite:PATH|postgres://…|dynamodb://PREFIX[?region=R]] [--log-level debug|info|warn|error] [--log-format text|json]",
		examples: []string{
			"interlock serve",
			"PGPASSWORD=… interlock serve --store postgres://interlock@db.internal:5432/interlock   # several serves may share it",
			"interlock serve --addr 127.0.0.1:0 --log-format json   # any free port; the address is printed",
			"interlock serve --store 'dynamodb://prod-interlock?region=eu-west-1'   # an AWS deployment's control plane: API and dashboard only",
		},
		flags: runServe,
	})
}

func runServe(fs *flag.FlagSet) action {
	config := fs.String("config", "interlock.yaml", "project settings")
	addr := fs.String("addr", "", "listen address (default: server.addr of --config)")
	storeFlag := fs.String("store", "", "the store: sqlite:PATH, postgres://user@host:port/database, or dynamodb://<table prefix>[?region=R][&endpoint=URL] to serve an AWS deployment as its control plane (default: store of --config)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	format := fs.String("log-format", "text", "text or json")
	return func(ctx context.Context, env Env) int {
		var lv slog.Level
		if err := lv.UnmarshalText([]byte(*level)); err != nil {
			fmt.Fprintf(env.Stderr, "interlock serve: --log-level %q: want debug, info, warn or error\n", *level)
			return ExitUsage
		}
		hopts := &slog.HandlerOptions{Level: lv}
		var h slog.Handler = slog.NewTextHandler(env.Stderr, hopts)
		switch *format {
		case "json":
			h = slog.NewJSONHandler(env.Stderr, hopts)
		case "text":
		default:
			fmt.Fprintf(env.Stderr, "interlock serve: --log-format %q: want text or json\n", *format)
			return ExitUsage
		}
		log := slog.New(h)

		// On a dynamodb:// store serve is the deployment's control plane
		// (app.ModeControlPlane): the store chooses the mode.
		opts := app.Options{Logger: log, ControlPlane: true, Telemetry: true, Version: versionString(env.Version)}
		if *storeFlag != "" {
			st, err := pipeline.ParseStore(*storeFlag)
			if err != nil {
				fmt.Fprintf(env.Stderr, "interlock serve: --store: %v\n", err)
				return ExitUsage
			}
			if st.Driver == pipeline.StoreDynamoDB {
				if err := app.CheckDynamoDBURL(st.DSN); err != nil {
					fmt.Fprintf(env.Stderr, "interlock serve: --store: %v\n", err)
					return ExitUsage
				}
				// A control plane needs no project directory: without
				// --config, no interlock.yaml means the defaults.
				opts.MissingSettingsEmpty = !flagGiven(fs, "config")
			}
			if st.Driver == pipeline.StoreSQLite && st.DSN != ":memory:" {
				// A path on the command line is the caller's, not relative
				// to the settings file as store: in it is.
				if st.DSN, err = filepath.Abs(st.DSN); err != nil {
					fmt.Fprintf(env.Stderr, "interlock serve: --store: %v\n", err)
					return ExitUsage
				}
			}
			opts.Store = &st
		}
		a, err := app.Open(ctx, *config, opts)
		if err != nil {
			fmt.Fprintf(env.Stderr, "interlock serve: %v\n", err)
			return ExitRuntime
		}
		defer a.Close()
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		err = local.Serve(ctx, a, local.Options{
			Addr:    *addr,
			Console: env.Stdout,
			Hup:     hup,
			// The Slack API address can be pointed at a fake for end-to-end
			// tests; it is not a setting users need.
			SlackAPIURL: os.Getenv("INTERLOCK_SLACK_API_URL"),
			Listening: func(a string) {
				fmt.Fprintf(env.Stdout, "interlock listening on http://%s\n", a)
			},
		})
		if err != nil {
			fmt.Fprintf(env.Stderr, "interlock serve: %v\n", err)
			return ExitRuntime
		}
		return ExitOK
	}
}
