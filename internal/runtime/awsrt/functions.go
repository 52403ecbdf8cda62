package awsrt

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
)

// The functions' names, as their mains and start-up errors say them.
const (
	FnEventPublisher  = "event-publisher"
	FnEventSink       = "event-sink"
	FnAlertDispatcher = "alert-dispatcher"
	FnStreamRouter    = "stream-router"
	FnSLAMonitor      = "sla-monitor"
	FnWatchdog        = "watchdog"
	FnOrchestrator    = "orchestrator"
)

// TableVars are the variables naming the four tables, in the order
// ddbstore.Tables lists them.
var TableVars = []string{EnvControlTable, EnvJobLogTable, EnvRerunTable, EnvEventsTable}

// Tables returns the tables the environment names ("" for those unset).
func (e Env) Tables() ddbstore.Tables {
	return ddbstore.Tables{Control: e.Get(EnvControlTable), JobLog: e.Get(EnvJobLogTable), Rerun: e.Get(EnvRerunTable), Events: e.Get(EnvEventsTable)}
}

// OpenStore opens the DynamoDB store on the tables the environment names
// (TableVars are required of function). Its retention — the ttl of
// everything it writes that expires: events, alert records, period
// records — is EVENTS_TTL_DAYS.
func OpenStore(ctx context.Context, cfg aws.Config, env Env, function string) (*ddbstore.Store, error) {
	if err := env.Require(function, TableVars...); err != nil {
		return nil, err
	}
	retention, err := env.EventsRetention(function)
	if err != nil {
		return nil, err
	}
	st, err := app.OpenDynamoDBTables(ctx, dynamodb.NewFromConfig(cfg), env.Tables(), retention)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", function, err)
	}
	return st, nil
}

// NewPublisher returns the outbox publisher of c, reading the events
// table's stream records with the store's decoder.
func NewPublisher(c PublisherConfig) (*Publisher, error) {
	if c.EventsTable == "" {
		return nil, fmt.Errorf("outbox: a publisher needs the events table's name")
	}
	return newPublisher(c, eventsDecoder(ddbstore.Tables{Events: c.EventsTable}))
}

// eventsDecoder reads an events-table stream record: the event to
// publish, or false for an item that is not an event or is an event from
// outside Interlock (the sink stored it; it came from the bus).
func eventsDecoder(t ddbstore.Tables) func(events.DynamoDBEventRecord) (event.Event, bool, error) {
	return func(rec events.DynamoDBEventRecord) (event.Event, bool, error) {
		if role, ok := ddbstore.RoleOf(t, rec.EventSourceArn); !ok || role != ddbstore.RoleEvents {
			return event.Event{}, false, fmt.Errorf("%w: %s is not the stream of the events table %s", errWrongTable, rec.EventSourceArn, t.Events)
		}
		r, err := ddbstore.DecodeLambda(ddbstore.RoleEvents, rec)
		if err != nil {
			return event.Event{}, false, err
		}
		item, ok := r.(ddbstore.EventItem)
		if !ok || item.External {
			return event.Event{}, false, nil
		}
		return item.Event, true, nil
	}
}

// setUp checks the variables function requires and loads the SDK's
// configuration.
func setUp(ctx context.Context, env Env, function string, required ...string) (aws.Config, error) {
	if err := env.Require(function, required...); err != nil {
		return aws.Config{}, err
	}
	cfg, err := AWSConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("%s: %w", function, err)
	}
	return cfg, nil
}

// setUpTables is setUp for a function that opens the store: the four
// tables' variables and extra are required.
func setUpTables(ctx context.Context, env Env, function string, extra ...string) (aws.Config, error) {
	return setUp(ctx, env, function, append(slices.Clone(TableVars), extra...)...)
}

// openWithSecrets sets up a function that opens the store (setUpTables),
// opens it, and adds the secrets SECRETS_FROM names to env (WithSecrets).
func openWithSecrets(ctx context.Context, env Env, function string, extra ...string) (aws.Config, *ddbstore.Store, Env, error) {
	cfg, err := setUpTables(ctx, env, function, extra...)
	if err != nil {
		return aws.Config{}, nil, env, err
	}
	st, err := OpenStore(ctx, cfg, env, function)
	if err != nil {
		return aws.Config{}, nil, env, err
	}
	env, err = WithSecrets(ctx, env, NewSecretReader(cfg))
	if err != nil {
		return aws.Config{}, nil, env, fmt.Errorf("%s: %w", function, err)
	}
	return cfg, st, env, nil
}

// PublisherFromEnv is the event-publisher function: EVENT_BUS_NAME and
// EVENTS_TABLE are required.
func PublisherFromEnv(ctx context.Context, env Env) (any, error) {
	cfg, err := setUp(ctx, env, FnEventPublisher, EnvEventBus, EnvEventsTable)
	if err != nil {
		return nil, err
	}
	p, err := NewPublisher(PublisherConfig{
		EventBridge: eventbridge.NewFromConfig(cfg), Bus: env.Get(EnvEventBus), EventsTable: env.Get(EnvEventsTable),
		Clock: clock.Real{}, Logger: Logger(),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", FnEventPublisher, err)
	}
	return p.Handle, nil
}

// SinkFromEnv is the event-sink function: the four tables are required
// (EVENTS_TABLE is the one it writes), EVENTS_TTL_DAYS is optional.
func SinkFromEnv(ctx context.Context, env Env) (any, error) {
	cfg, err := setUpTables(ctx, env, FnEventSink)
	if err != nil {
		return nil, err
	}
	st, err := OpenStore(ctx, cfg, env, FnEventSink)
	if err != nil {
		return nil, err
	}
	return NewSink(st, clock.Real{}, Logger()).Handle, nil
}

// DispatcherFromEnv is the alert-dispatcher function: the four tables are
// required. Its routes and maintenance windows are the deployment's
// stored alert config (interlock.yaml's alerts: and maintenance:, stored
// by `interlock deploy-config`; read at each invocation), or, while none
// is stored, ALERTS_CONFIG's. Their tokenEnv and secretEnv are read from
// the environment and from the secrets SECRETS_FROM names (read at
// start). Without routes there, SLACK_CHANNEL_ID is the one route, its
// token from Secrets Manager when SLACK_SECRET_ARN is set, else from
// SLACK_BOT_TOKEN; with neither every alert is logged and dropped; with
// no route at all every message fails (and is received again).
func DispatcherFromEnv(ctx context.Context, env Env) (any, error) {
	const fn = FnAlertDispatcher
	fallback, err := ParseAlertsConfig(env.Get(EnvAlertsConfig))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	if len(fallback.Alerts) > 0 {
		if err := checkRoutes(fallback.Alerts, "", nil, EnvAlertsConfig); err != nil {
			return nil, err
		}
	}
	// The routes' secrets (SECRETS_FROM), read once per cold start.
	cfg, st, env, err := openWithSecrets(ctx, env, fn)
	if err != nil {
		return nil, err
	}
	var token Token = StaticToken(env.Get(EnvSlackToken))
	if arn := env.Get(EnvSlackSecretARN); arn != "" {
		token = SecretToken{Client: secretsmanager.NewFromConfig(cfg), ARN: arn}
	}
	log := Logger()
	meter := meterFromEnv(env, FnAlertDispatcher, log)
	stored := &app.StoredAlertConfig{Store: st, Fallback: fallback}
	d, err := NewDispatcher(DispatcherConfig{
		Store: meter.Store(st), Settings: stored.Settings, LookupEnv: env.lookupFunc(),
		Channel: env.Get(EnvSlackChannel), Token: token, APIURL: env.Get(EnvSlackAPIURL),
		Clock: clock.Real{}, Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	return Metered(meter, d.Handle), nil
}

// ParseAlertsConfig reads ALERTS_CONFIG: interlock.yaml's alerts: and
// maintenance: sections, checked as interlock.yaml is (errors name
// ALERTS_CONFIG, the line and the field). Empty: no routes, no windows.
// It is the functions' fallback while the deployment has no stored alert
// config (app.StoredAlertConfig).
func ParseAlertsConfig(v string) (*pipeline.Settings, error) {
	if strings.TrimSpace(v) == "" {
		return &pipeline.Settings{}, nil
	}
	s, err := pipeline.ParseSettings(EnvAlertsConfig, []byte(v))
	if err != nil {
		return nil, err
	}
	return s, nil
}

// The functions whose FromEnv returns their handler's owner (for its
// tests) hand Main its Handle, metered.

// OrchestratorFunction is the orchestrator's handler for Main:
// OrchestratorFromEnv's, metered.
func OrchestratorFunction(ctx context.Context, env Env) (any, error) {
	o, err := OrchestratorFromEnv(ctx, env)
	if err != nil {
		return nil, err
	}
	return Metered(o.Meter, o.Handle), nil
}

// RouterFunction is the stream-router's handler for Main:
// RouterFromEnv's, metered.
func RouterFunction(ctx context.Context, env Env) (any, error) {
	rt, err := RouterFromEnv(ctx, env)
	if err != nil {
		return nil, err
	}
	return Metered(rt.Meter, rt.Handle), nil
}
