// Package app wires a project together: interlock.yaml → calendars → the
// store → the engine with its job runners → the pipeline files. It is the
// only package that picks concrete adapters (which store, which job
// types, an AWS deployment's tables); commands and runtimes get a ready
// App, and its Mode says whether it is the whole runtime or an AWS
// deployment's control plane.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/store/postgres"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/telemetry"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/airflow"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
	"github.com/interlockhq/interlock/internal/trigger/command"
	"github.com/interlockhq/interlock/internal/trigger/databricks"
	"github.com/interlockhq/interlock/internal/trigger/emr"
	"github.com/interlockhq/interlock/internal/trigger/emrserverless"
	"github.com/interlockhq/interlock/internal/trigger/glue"
	httpjob "github.com/interlockhq/interlock/internal/trigger/http"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
	"github.com/interlockhq/interlock/internal/trigger/lambda"
	"github.com/interlockhq/interlock/internal/trigger/stepfunction"
)

// App is a loaded project.
type App struct {
	SettingsFile string
	Settings     *pipeline.Settings
	// Calendars are the calendar files as Open found them (an invalid
	// one fails Open). The engine does not read them: serve's reloader
	// stores them (engine.SetCalendars), and every process decides with
	// the stored calendars.
	Calendars map[string]schedule.Calendar
	Store     store.Store
	Engine    *engine.Engine
	Log       *slog.Logger
	// AlertConfig is, in ModeControlPlane, the deployment's stored alert
	// config: its windows are the engine's, its routes name the sinks the
	// health report lists. nil otherwise.
	AlertConfig *StoredAlertConfig

	passed func() // tests: called after each watchdog pass RunWatchdog runs

	// stopTelemetry flushes and stops the trace exporter (Close).
	stopTelemetry func(context.Context) error
}

// Options steer Open.
type Options struct {
	Clock  clock.Clock // nil: the wall clock
	Logger *slog.Logger
	// LookupEnv reads the environment for job templates (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Passive: the process runs no engine timers (watchdog --once), so it
	// leaves trigger calls in flight to the serve that may be making them.
	Passive bool
	// Store, when set, replaces the settings' store: (serve --store). A
	// relative SQLite path is then the caller's, not the settings file's.
	Store *pipeline.Store
	// MissingSettingsEmpty: a missing settings file reads as an empty one
	// ({}) instead of an error (serve --store dynamodb:// with no --config:
	// a control plane needs no project directory).
	MissingSettingsEmpty bool
	// ControlPlane: the caller can serve as an AWS deployment's control
	// plane (serve). Without it a dynamodb:// store is refused: a
	// watchdog pass or a function here would double the deployment's.
	ControlPlane bool
	// Telemetry: export traces when interlock.yaml's telemetry: or the
	// OTEL_* environment says where (serve; package telemetry). Version
	// is the binary's, for the traces' resource.
	Telemetry bool
	Version   string
}

// Open loads the project of settingsFile. A missing settings file is an
// error that says so; a present but invalid one lists its errors.
func Open(ctx context.Context, settingsFile string, opt Options) (*App, error) {
	data, err := os.ReadFile(settingsFile)
	if errors.Is(err, fs.ErrNotExist) && opt.MissingSettingsEmpty {
		data, err = []byte("{}\n"), nil
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s not found: run in a project directory, pass --config, or create one with `interlock init`", settingsFile)
		}
		return nil, err
	}
	settings, err := pipeline.ParseSettings(settingsFile, data)
	if err != nil {
		return nil, err
	}
	if err := CheckStore(settings); err != nil {
		return nil, err
	}
	if opt.Store != nil {
		settings.Store = *opt.Store
	}
	return open(ctx, settingsFile, settings, nil, opt)
}

// OpenControlPlane is Open for a process with no project directory that
// opened an AWS deployment's tables itself (the api function: its
// environment names the tables): the default settings, mode
// ModeControlPlane, the engine passive over st. name says which tables
// they are (start-up lines, errors). App.Close closes st.
func OpenControlPlane(ctx context.Context, st store.Store, name string, opt Options) (*App, error) {
	settings := pipeline.DefaultSettings()
	settings.Store = pipeline.Store{Driver: pipeline.StoreDynamoDB, DSN: name}
	opt.ControlPlane = true
	return open(ctx, "", settings, st, opt)
}

// open wires settings to the store (opened from the settings when st is
// nil) and the engine.
func open(ctx context.Context, settingsFile string, settings *pipeline.Settings, st store.Store, opt Options) (*App, error) {
	a := &App{SettingsFile: settingsFile, Settings: settings, Log: opt.Logger}
	if a.Log == nil {
		a.Log = slog.New(slog.DiscardHandler)
	}
	control := a.Mode() == ModeControlPlane
	if control {
		if !opt.ControlPlane {
			return nil, fmt.Errorf("store %s: an AWS deployment's tables are served by `interlock serve` as its control plane; this command does not run on them", settings.Store.DSN)
		}
		if err := ControlPlaneConflicts(settingsFile, settings); err != nil {
			return nil, err
		}
	}
	a.Calendars = map[string]schedule.Calendar{}
	// A control plane reads no calendar files: the deployment's calendars
	// are those deploy-config stored.
	if dir := a.Path(settings.Calendars); dir != "" && !control {
		cals, err := pipeline.LoadCalendarDir(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			a.Calendars = cals
		}
	}
	if opt.Telemetry {
		if err := a.setupTelemetry(ctx, opt); err != nil {
			return nil, err
		}
	}
	if st == nil {
		var err error
		if st, err = a.openStore(ctx); err != nil {
			a.flushTelemetry()
			return nil, err
		}
	}
	raw := st // the backend itself, for what only it offers (below)
	st = telemetry.Wrap(st, a.Settings.Store.Driver)
	a.Store = st
	clk := opt.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	lookup := opt.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	lookup = Secrets(lookup)
	var jobs trigger.Runner = Jobs(lookup, settings.Triggers.AllowAddresses)
	passive := opt.Passive
	if control {
		// The deployment's functions run the timers and make the job
		// calls; calls in flight are theirs, not interrupted ones.
		jobs, passive = trigger.NoJobs{}, true
	}
	var windowsFrom func(context.Context) ([]silence.Window, error)
	if ds, ok := raw.(*ddbstore.Store); ok && control {
		// The deployment's windows are its stored alert config
		// (deploy-config), as its functions read them.
		a.AlertConfig = &StoredAlertConfig{Store: ds}
		windowsFrom = a.AlertConfig.Maintenance
	}
	a.Engine = engine.New(engine.Options{
		Store:           st,
		Clock:           clk,
		Jobs:            jobs,
		Logger:          a.Log,
		Rules:           rule.Options{MaxClockSkew: settings.Rules.MaxClockSkew},
		EnvAllow:        settings.Server.EnvAllow,
		LookupEnv:       lookup,
		Passive:         passive,
		Maintenance:     settings.Maintenance,
		MaintenanceFrom: windowsFrom,
		Tracer:          telemetry.Tracer(engineTracer),
	})
	if err := a.Engine.Open(ctx); err != nil {
		_ = st.Close()
		return nil, err
	}
	if !passive {
		if err := a.Engine.ArmMaintenance(ctx); err != nil {
			_ = st.Close()
			return nil, err
		}
	}
	return a, nil
}

// Secrets extends an environment lookup with file secrets: a name with
// pipeline.FilePrefix (from ${file:/PATH} in a job config) is read from
// that file, without its trailing newline. Job runners redact every value
// this returns.
func Secrets(env func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		path, ok := strings.CutPrefix(name, pipeline.FilePrefix)
		if !ok {
			return env(name)
		}
		data, err := readSecretFile(path)
		if err != nil {
			return "", false
		}
		return strings.TrimRight(string(data), "\r\n"), true
	}
}

// MaxSecretFile bounds a ${file:} secret; a token or key is far smaller.
const MaxSecretFile = 64 << 10

// readSecretFile reads a secret file. It must resolve (through symlinks)
// to a regular file outside the kernel's pseudo file systems, so a
// pipeline file cannot read /proc/self/environ or stream /dev/zero into
// memory, and it must be at most MaxSecretFile bytes.
func readSecretFile(path string) ([]byte, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	real = filepath.Clean(real)
	for _, dir := range []string{"/proc", "/sys", "/dev"} {
		if real == dir || strings.HasPrefix(real, dir+"/") {
			return nil, fmt.Errorf("secret file %s: under %s", path, dir)
		}
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("secret file %s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSecretFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSecretFile {
		return nil, fmt.Errorf("secret file %s: larger than %d bytes", path, MaxSecretFile)
	}
	return data, nil
}

// Jobs returns the job runners by type. allow is the SSRF guard's
// allow-list of the HTTP-family types (interlock.yaml
// triggers.allowAddresses); they share one client. The AWS types share
// one awsjob.Session (credentials loaded once per region).
func Jobs(lookup func(string) (string, bool), allow []pipeline.AllowAddress) trigger.Registry {
	client := httpx.NewClient(allow)
	session := awsjob.NewSession(lookup)
	return trigger.Registry{
		string(pipeline.JobHTTP):          httpjob.Runner{Client: client, LookupEnv: lookup},
		string(pipeline.JobAirflow):       airflow.Runner{Client: client, LookupEnv: lookup},
		string(pipeline.JobDatabricks):    databricks.Runner{Client: client, LookupEnv: lookup},
		string(pipeline.JobCommand):       command.Runner{LookupEnv: lookup},
		string(pipeline.JobGlue):          glue.Runner{AWS: session},
		string(pipeline.JobEMR):           emr.Runner{AWS: session},
		string(pipeline.JobEMRServerless): emrserverless.Runner{AWS: session},
		string(pipeline.JobStepFunction):  stepfunction.Runner{AWS: session},
		string(pipeline.JobLambda):        lambda.Runner{AWS: session},
	}
}

// Path resolves a path from interlock.yaml against the file's directory.
func (a *App) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(a.SettingsFile), p)
}

func (a *App) openStore(ctx context.Context) (store.Store, error) {
	switch a.Settings.Store.Driver {
	case pipeline.StoreSQLite:
		return sqlite.Open(ctx, a.Path(a.Settings.Store.DSN))
	case pipeline.StorePostgres:
		return postgres.Open(ctx, a.Settings.Store.DSN)
	case pipeline.StoreDynamoDB:
		return OpenDynamoDB(ctx, a.Settings.Store.DSN, a.Settings.Retention)
	default:
		return nil, fmt.Errorf("store %q: want sqlite, postgres or dynamodb", a.Settings.Store.Driver)
	}
}

// Close closes the store.
func (a *App) Close() error {
	err := a.Store.Close()
	a.flushTelemetry()
	return err
}

// telemetryFlush bounds the flush of buffered spans at Close.
const telemetryFlush = 5 * time.Second

// setupTelemetry starts the trace exporter when the settings' telemetry:
// or the environment turn it on, and says so; the log's lines then carry
// their trace's ids.
func (a *App) setupTelemetry(ctx context.Context, opt Options) error {
	t := a.Settings.Telemetry
	cfg := telemetry.Config{Endpoint: t.Endpoint, ServiceName: t.ServiceName, SampleRatio: t.SampleRatio, Version: opt.Version, LookupEnv: os.LookupEnv}
	stop, err := telemetry.Setup(ctx, cfg)
	if err != nil {
		return err
	}
	a.stopTelemetry = stop
	if on, why := telemetry.On(cfg); on {
		a.Log = slog.New(telemetry.LogHandler(a.Log.Handler()))
		a.Log.Info("tracing on: spans exported over OTLP/HTTP", "to", why)
	}
	return nil
}

// SetupTracing starts the trace exporter of a process with no
// interlock.yaml (a Lambda function): the OTEL_* environment alone says
// whether and where (docs/telemetry.md). It returns the stop function
// (flush and stop; a no-op when off).
func SetupTracing(ctx context.Context, version string) (func(context.Context) error, error) {
	return telemetry.Setup(ctx, telemetry.Config{Version: version, LookupEnv: os.LookupEnv})
}

// Tracing reports whether this process exports traces.
func Tracing() bool { return telemetry.Enabled() }

// FlushTraces sends the spans ended so far (a Lambda invocation's, before
// it returns); a no-op when tracing is off.
func FlushTraces(ctx context.Context) error { return telemetry.Flush(ctx) }

// Traced is st with its reads and commits traced when tracing is on, and
// the tracer an engine on it takes (nil when off): for the runtimes that
// build their engine themselves (the Lambda functions).
func Traced(st store.Store, driver string) (store.Store, trace.Tracer) {
	return telemetry.Wrap(st, driver), telemetry.Tracer(engineTracer)
}

// engineTracer names the engine's tracer.
const engineTracer = "github.com/interlockhq/interlock/internal/engine"

// flushTelemetry sends the spans still buffered and stops the exporter,
// within a bound: a collector that is down does not hold the exit.
func (a *App) flushTelemetry() {
	if a.stopTelemetry == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetryFlush)
	defer cancel()
	if err := a.stopTelemetry(ctx); err != nil {
		a.Log.Warn("telemetry: spans not sent at exit", "err", err)
	}
	a.stopTelemetry = nil
}
