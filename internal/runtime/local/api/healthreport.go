package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// HealthReport answers GET /v1/health, and is what the dashboard's health
// page shows: is the watchdog watching, are alerts going out, which
// pipeline files are refused.
type HealthReport struct {
	Now time.Time `json:"now"` // the engine's clock when it was read
	// Mode is how the process runs (Health.Mode): "local" runs timers,
	// the watchdog and alert delivery; "control-plane" serves an AWS
	// deployment's tables, whose functions run those.
	Mode     string         `json:"mode"`
	Watchdog WatchdogHealth `json:"watchdog"`
	// Sinks are the alert sinks, configured ones in route order first.
	Sinks []alert.SinkStatus `json:"sinks"`
	// DeadLetters are the alerts no sink accepted, with their reasons.
	DeadLetters []alert.DeadLetter `json:"deadLetters"`
	// RefusedConfigs are the pipeline files refused at their last change
	// (CONFIG_INVALID), by file; their last valid version, if any, runs.
	RefusedConfigs []RefusedConfig `json:"refusedConfigs"`
}

// WatchdogHealth is the watchdog's last pass, as recorded in the store by
// whichever process holds its lease.
type WatchdogHealth struct {
	Interval string `json:"interval"` // watchdog.interval ("0s": disabled)
	// LastPass is when it last ran; nil when it never has.
	LastPass *time.Time `json:"lastPass,omitempty"`
	// Late: it never ran, or its last pass is more than three intervals
	// old — nobody is watching.
	Late bool `json:"late"`
	// Findings is how many findings the last pass made.
	Findings int `json:"findings"`
	// Degraded lists the checks that failed in the last pass (each is
	// named in WATCHDOG_DEGRADED); empty when every check ran.
	Degraded []string `json:"degraded"`
	// DegradedSince is when WATCHDOG_DEGRADED was raised for the failing
	// checks; nil when none fail.
	DegradedSince *time.Time `json:"degradedSince,omitempty"`
}

// RefusedConfig is a pipeline file that was refused, with its errors
// (each with its file and, when known, line).
type RefusedConfig struct {
	File   string          `json:"file"`
	Errors []confdec.Error `json:"errors"`
}

// Health reads the health report. Its zero fields read nothing: a nil
// Sinks lists no sink, and so on. Engine is required.
type Health struct {
	Engine   *engine.Engine
	Settings *pipeline.Settings // nil: the defaults
	// Mode is the process's mode (app.Mode); "": "local".
	Mode string
	// Sinks reports the alert sinks (alert.Deliverer.Status).
	Sinks func(context.Context) ([]alert.SinkStatus, error)
	// DeadLetters lists the dead letters (alert.Deliverer.DeadLetters).
	DeadLetters func(context.Context) ([]alert.DeadLetter, error)
	// Refused lists the pipeline files refused at their last change, by
	// file (serve's reloader).
	Refused func() []RefusedConfig
}

// Report reads the health report from the store (and the reloader's
// refusals): every replica sharing the store answers the same.
func (h *Health) Report(ctx context.Context) (HealthReport, error) {
	if h == nil || h.Engine == nil {
		return HealthReport{}, errors.New("api: health needs an engine")
	}
	settings := h.Settings
	if settings == nil {
		settings = pipeline.DefaultSettings()
	}
	mode := h.Mode
	if mode == "" {
		mode = "local"
	}
	rep := HealthReport{Now: h.Engine.Now(), Mode: mode, Sinks: []alert.SinkStatus{}, DeadLetters: []alert.DeadLetter{}, RefusedConfigs: []RefusedConfig{}}
	wd, err := watchdogHealth(ctx, h.Engine.Store(), settings.Watchdog.Interval, rep.Now)
	if err != nil {
		return HealthReport{}, err
	}
	rep.Watchdog = wd
	if h.Sinks != nil {
		s, err := h.Sinks(ctx)
		if err != nil {
			return HealthReport{}, err
		}
		rep.Sinks = append(rep.Sinks, s...)
	}
	if h.DeadLetters != nil {
		d, err := h.DeadLetters(ctx)
		if err != nil {
			return HealthReport{}, err
		}
		rep.DeadLetters = append(rep.DeadLetters, d...)
	}
	if h.Refused != nil {
		rep.RefusedConfigs = append(rep.RefusedConfigs, h.Refused()...)
	}
	return rep, nil
}

// watchdogHealth reads the markers the watchdog's passes leave.
func watchdogHealth(ctx context.Context, st store.Store, interval time.Duration, now time.Time) (WatchdogHealth, error) {
	wd := WatchdogHealth{Interval: interval.String(), Degraded: []string{}}
	pass, err := st.MarkerGet(ctx, run.Key{}, run.MarkerWatchdogPass)
	switch {
	case errors.Is(err, store.ErrNotFound):
		wd.Late = watchdog.Late(time.Time{}, interval, now)
		return wd, nil
	case err != nil:
		return wd, fmt.Errorf("health: last watchdog pass: %w", err)
	}
	at := pass.At
	wd.LastPass = &at
	wd.Late = watchdog.Late(at, interval, now)
	if v, ok := pass.Detail.Get("findings"); ok {
		if n, ok := v.Int(); ok {
			wd.Findings = int(n)
		}
	}
	if v, ok := pass.Detail.Get("failed"); ok {
		if s, _ := v.Str(); s != "" {
			wd.Degraded = strings.Split(s, ", ")
		}
	}
	if len(wd.Degraded) > 0 {
		deg, err := st.MarkerGet(ctx, run.Key{}, run.MarkerWatchdogDegraded)
		switch {
		case err == nil:
			since := deg.At
			wd.DegradedSince = &since
		case !errors.Is(err, store.ErrNotFound):
			return wd, fmt.Errorf("health: watchdog degraded: %w", err)
		}
	}
	return wd, nil
}

// RefusalOf turns the error a pipeline file was refused with into its
// report: the file's own errors with their lines when the file did not
// decode (confdec.Errors), else the one error, naming the file.
func RefusalOf(file string, err error) RefusedConfig {
	rc := RefusedConfig{File: file}
	var errs confdec.Errors
	if errors.As(err, &errs) && len(errs) > 0 {
		rc.Errors = append([]confdec.Error(nil), errs.Sorted()...)
		return rc
	}
	rc.Errors = []confdec.Error{{File: file, Msg: strings.TrimPrefix(err.Error(), file+": ")}}
	return rc
}

// health answers GET /v1/health.
func (s *server) health(r *http.Request) (HealthReport, error) {
	return s.healthR.Report(r.Context())
}
