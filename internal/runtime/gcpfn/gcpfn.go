// Package gcpfn is the watchdog as a Google Cloud Function (HTTP, gen 2):
// each call runs one watchdog pass over the PostgreSQL store, delivers the
// pending alerts, and answers a JSON summary — 200 when healthy, 503 when
// a check failed or the store could not be reached. It adapts and
// sequences; the pass is the engine's (engine.WatchdogPass), the delivery
// the one-shot commands' (local.OpenDelivery), the store the PostgreSQL
// one. cmd/gcp-watchdog registers it with the Functions Framework.
//
// The function loads no pipeline files: on GCP the pipelines are in the
// database already, written by the serve replicas' reloader (or by a
// deploy step running `interlock watchdog --once --alerts=false` against
// the same store). It takes no watchdog lease: a pass commits each
// finding with its dedup marker, so a pass in the function and one in a
// serve replica raise each event once; the alert sinks' leases keep each
// alert delivered once.
package gcpfn

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local"
	"github.com/interlockhq/interlock/internal/store/pgurl"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// Environment variables the function reads.
const (
	// EnvStoreURL is the postgres:// URL of the store (a Secret Manager
	// secret exposed as an environment variable). Required.
	EnvStoreURL = "INTERLOCK_STORE_URL"
	// EnvConfig is the interlock.yaml shipped with the function: its
	// alerts (routes; tokens as ${env:…}) and watchdog settings. Its
	// store: is replaced by EnvStoreURL. Default DefaultConfig.
	EnvConfig = "INTERLOCK_CONFIG"
	// EnvSlackAPIURL overrides Slack's API address (tests).
	EnvSlackAPIURL = "INTERLOCK_SLACK_API_URL"
)

// DefaultConfig is where the settings are looked for without EnvConfig.
const DefaultConfig = "interlock.yaml"

// Config is what one function instance needs.
type Config struct {
	StoreURL    string
	Settings    string // interlock.yaml path
	SlackAPIURL string
	LookupEnv   func(string) (string, bool) // tokens; nil: os.LookupEnv
	Clock       clock.Clock                 // nil: the wall clock
	Logger      *slog.Logger
}

// FromEnv reads the Config from the environment; a missing or malformed
// store URL is an error that never repeats its password.
func FromEnv(lookup func(string) (string, bool)) (Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	c := Config{Settings: DefaultConfig, LookupEnv: lookup}
	c.StoreURL, _ = lookup(EnvStoreURL)
	if v, ok := lookup(EnvConfig); ok && v != "" {
		c.Settings = v
	}
	c.SlackAPIURL, _ = lookup(EnvSlackAPIURL)
	if c.StoreURL == "" {
		return c, fmt.Errorf("%s is not set (the postgres:// URL of the store)", EnvStoreURL)
	}
	if err := app.CheckStoreURL(pipeline.Store{Driver: pipeline.StorePostgres, DSN: c.StoreURL}); err != nil {
		return c, fmt.Errorf("%s: %w", EnvStoreURL, err)
	}
	return c, nil
}

// Summary is the function's answer.
type Summary struct {
	At       string    `json:"at,omitempty"`
	Healthy  bool      `json:"healthy"`
	Checks   []string  `json:"checks"`         // the checks the pass ran
	Findings []Finding `json:"findings"`       // events the pass raised
	Events   int       `json:"eventsRaised"`   // len(Findings)
	Repaired int       `json:"repaired"`       // silent repairs (SLA timers set)
	Degraded []Failure `json:"degradedChecks"` // failed checks, with why
	Previous string    `json:"previousPass,omitempty"`
	Error    string    `json:"error,omitempty"` // the pass or the store failed
}

// Finding is one event a pass raised.
type Finding struct {
	Event    string `json:"event"`
	Pipeline string `json:"pipeline,omitempty"`
	Schedule string `json:"schedule,omitempty"`
	Date     string `json:"date,omitempty"`
	Message  string `json:"message"`
}

// Failure is a failed check and why.
type Failure struct {
	Check  string `json:"check"`
	Reason string `json:"reason"`
}

// Handler returns the HTTP function for cfg.
func Handler(cfg Config) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sum, err := Pass(r.Context(), cfg)
		if err != nil {
			sum.Healthy = false
			sum.Error = redact(err.Error(), cfg.StoreURL)
		}
		code := http.StatusOK
		if !sum.Healthy {
			code = http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(sum)
	}
}

// Pass opens the store, runs one watchdog pass, delivers the pending
// alerts and closes the store. A Summary with Healthy false and no error
// is a degraded pass; an error is a pass that could not run (or whose
// alerts could not be delivered).
func Pass(ctx context.Context, cfg Config) (Summary, error) {
	sum := Summary{Checks: checkNames(), Findings: []Finding{}, Degraded: []Failure{}}
	if cfg.StoreURL == "" {
		return sum, fmt.Errorf("%s is not set (the postgres:// URL of the store)", EnvStoreURL)
	}
	lookup := cfg.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	a, err := app.Open(ctx, cfg.Settings, app.Options{
		Clock: cfg.Clock, Logger: cfg.Logger, LookupEnv: lookup, Passive: true,
		Store: &pipeline.Store{Driver: pipeline.StorePostgres, DSN: cfg.StoreURL},
	})
	if err != nil {
		return sum, fmt.Errorf("opening the store: %w", err)
	}
	defer a.Close()
	alerts, err := local.OpenDelivery(ctx, a, local.Options{Console: os.Stderr, LookupEnv: lookup, SlackAPIURL: cfg.SlackAPIURL})
	if err != nil {
		return sum, err
	}
	defer alerts.Close()
	prev, hadPrev, err := a.Engine.LastWatchdogPass(ctx)
	if err != nil {
		return sum, err
	}
	if hadPrev {
		sum.Previous = prev.UTC().Format(time.RFC3339)
	}
	rep, err := a.Engine.WatchdogPass(ctx, a.Settings.Watchdog.StuckRunThreshold)
	if err != nil {
		return sum, err
	}
	sum.At = rep.At.UTC().Format(time.RFC3339)
	sum.Repaired = rep.Repaired
	for _, e := range rep.Raised {
		sum.Findings = append(sum.Findings, Finding{Event: string(e.Type), Pipeline: e.PipelineID, Schedule: e.ScheduleID, Date: e.Date, Message: e.Message})
	}
	sum.Events = len(sum.Findings)
	for _, name := range rep.Result.Failed {
		sum.Degraded = append(sum.Degraded, Failure{Check: name, Reason: reason(rep.Result.Err, name)})
	}
	sum.Healthy = !rep.Degraded()
	if err := alerts.Deliver(ctx); err != nil {
		return sum, fmt.Errorf("delivering alerts: %w", err)
	}
	return sum, nil
}

func checkNames() []string {
	var names []string
	for _, c := range watchdog.Checks() {
		names = append(names, c.Name)
	}
	return names
}

// reason is the part of the pass's joined error that names check.
func reason(err error, check string) string {
	if err == nil {
		return ""
	}
	var parts []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			parts = append(parts, e.Error())
		}
	} else {
		parts = strings.Split(err.Error(), "\n")
	}
	for _, p := range parts {
		if strings.HasPrefix(p, check) {
			return p
		}
	}
	return err.Error()
}

// redact takes the store URL's password (and the URL itself) out of msg.
func redact(msg, storeURL string) string {
	if storeURL == "" {
		return msg
	}
	return pgurl.RedactIn(strings.ReplaceAll(msg, storeURL, pgurl.Redact(storeURL)), storeURL)
}

// EnvHandler is Handler with the Config read from the environment once;
// a missing or malformed setting answers every call 503 with the error
// (its password taken out), so a misconfigured deployment is seen at the
// first scheduled call rather than as a crash loop.
func EnvHandler() http.HandlerFunc {
	cfg, err := FromEnv(os.LookupEnv)
	if err != nil {
		msg := redact(err.Error(), cfg.StoreURL)
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(Summary{Checks: checkNames(), Findings: []Finding{}, Degraded: []Failure{}, Error: msg})
		}
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	return Handler(cfg)
}
