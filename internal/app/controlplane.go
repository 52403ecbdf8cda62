package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
)

// The modes a serve runs in, chosen by its store (Mode; stated in serve's
// start-up line and GET /v1/health).
const (
	// ModeLocal: the process runs everything — timers, the watchdog,
	// alert delivery, the retention sweep, the pipeline files.
	ModeLocal = "local"
	// ModeControlPlane: the store is an AWS deployment's tables
	// (dynamodb://). The deployment's functions run the timers (router →
	// executions, sla-monitor → schedules), the watchdog and alert
	// delivery, and its tables expire by ttl; configs reach it by
	// `interlock deploy-config`. The process serves the API and the
	// dashboard and commits operator actions through the engine —
	// starting any of the rest here would do it twice.
	ModeControlPlane = "control-plane"
)

// Mode is ModeControlPlane on an AWS deployment's tables, else ModeLocal.
func (a *App) Mode() string {
	if a.Settings.Store.Driver == pipeline.StoreDynamoDB {
		return ModeControlPlane
	}
	return ModeLocal
}

// ControlPlaneConflicts names each setting of interlock.yaml (file) that
// a control plane would either double (the deployment already does it)
// or silently ignore; nil when there is none. A setting left at its
// default is no conflict.
func ControlPlaneConflicts(file string, s *pipeline.Settings) error {
	def := pipeline.DefaultSettings()
	var errs []error
	conflict := func(field, why string) {
		errs = append(errs, fmt.Errorf("%s: %s: %s; remove it (a serve on a dynamodb:// store is the deployment's control plane)", file, field, why))
	}
	if len(s.Alerts) > 0 {
		conflict("alerts", "the deployment's alert-dispatcher delivers the alerts, by the routes `interlock deploy-config --config FILE` stored; sinks here would send each one twice")
	}
	if s.Watchdog != def.Watchdog {
		conflict("watchdog", "the deployment's watchdog function runs the watchdog on the module's schedule; a control plane runs none")
	}
	if s.Pipelines != def.Pipelines {
		conflict("pipelines", "a control plane loads no pipeline files; load them into the deployment with `interlock deploy-config`")
	}
	if s.Calendars != def.Calendars {
		conflict("calendars", "a control plane loads no calendar files; load them with `interlock deploy-config`")
	}
	if len(s.Maintenance) > 0 {
		conflict("maintenance", "the deployment's windows are those `interlock deploy-config --config FILE` stored, which the control plane reads from the tables; windows here would not be the deployment's")
	}
	return errors.Join(errs...)
}

// OpenDynamoDB opens the tables of the AWS deployment a store URL names
// (dynamodb://PREFIX[?region=R][&endpoint=URL]) with the SDK's default
// credentials. retention is the ttl of the period records and events this
// process writes (0: the store's default); the deployment's functions use
// the module's events_table_ttl_days. The caller closes the store.
func OpenDynamoDB(ctx context.Context, storeURL string, retention time.Duration) (*ddbstore.Store, error) {
	prefix, region, endpoint, err := ddbstore.ParseURL(storeURL)
	if err != nil {
		return nil, err
	}
	client, err := ddbstore.NewClient(ctx, region, endpoint)
	if err != nil {
		return nil, err
	}
	return ddbstore.Open(ctx, ddbstore.Config{Client: client, Tables: ddbstore.TablesFor(prefix), Retention: retention})
}
