package awsrt

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

// The environment variables of the AWS functions (the reference's names,
// §7.7). Each function's constructor (…FromEnv) lists the ones it needs.
const (
	EnvControlTable   = "CONTROL_TABLE"
	EnvJobLogTable    = "JOBLOG_TABLE"
	EnvRerunTable     = "RERUN_TABLE"
	EnvEventsTable    = "EVENTS_TABLE"
	EnvEventBus       = "EVENT_BUS_NAME"
	EnvEventsTTLDays  = "EVENTS_TTL_DAYS"
	EnvSlackChannel   = "SLACK_CHANNEL_ID"
	EnvSlackToken     = "SLACK_BOT_TOKEN"
	EnvSlackSecretARN = "SLACK_SECRET_ARN"
	// EnvSlackAPIURL overrides Slack's Web API base URL (a proxy, a test);
	// unset: https://slack.com/api/.
	EnvSlackAPIURL = "SLACK_API_URL"
	// EnvAlertsConfig holds the project's alert routes and maintenance
	// windows while the deployment has no stored alert config:
	// interlock.yaml's alerts: and maintenance: sections, as YAML
	// (ParseAlertsConfig).
	EnvAlertsConfig = "ALERTS_CONFIG"
)

// DefaultEventsTTLDays is the retention of events when EVENTS_TTL_DAYS is
// unset or not positive (the reference's).
const DefaultEventsTTLDays = 90

// maxTTLDays bounds EVENTS_TTL_DAYS (a hundred years).
const maxTTLDays = 36500

// Env is a function's environment. The zero Env reads the process's.
type Env struct {
	// Lookup returns a variable and whether it is set; nil: os.LookupEnv.
	Lookup func(string) (string, bool)
}

// EnvOf is an Env reading vars (tests).
func EnvOf(vars map[string]string) Env {
	return Env{Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
}

// Get returns the variable name, trimmed ("" when unset).
func (e Env) Get(name string) string {
	lookup := e.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, _ := lookup(name)
	return strings.TrimSpace(v)
}

// MissingEnvError names the required variables a function started without.
type MissingEnvError struct {
	Function string
	Names    []string
}

// Error is the reference's start-up message: "<function>: missing
// required env vars: A, B".
func (e *MissingEnvError) Error() string {
	return e.Function + ": missing required env vars: " + strings.Join(e.Names, ", ")
}

// Require returns a *MissingEnvError naming, in the order given, every one
// of names that is unset or blank; nil when all are set.
func (e Env) Require(function string, names ...string) error {
	var missing []string
	for _, n := range names {
		if e.Get(n) == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return &MissingEnvError{Function: function, Names: missing}
	}
	return nil
}

// EventsRetention is EVENTS_TTL_DAYS as a duration: unset, zero or
// negative is DefaultEventsTTLDays (the reference's rule); text that is
// not a whole number is an error (a typo must not silently keep events 90
// days).
func (e Env) EventsRetention(function string) (time.Duration, error) {
	days := DefaultEventsTTLDays
	if s := e.Get(EnvEventsTTLDays); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n > maxTTLDays {
			return 0, fmt.Errorf("%s: %s is %q, not a whole number of days up to %d", function, EnvEventsTTLDays, s, maxTTLDays)
		}
		if n > 0 {
			days = n
		}
	}
	return time.Duration(days) * 24 * time.Hour, nil
}

// AWSConfig is the SDK configuration of a function: the Lambda
// environment's region and role credentials, and the endpoint overrides
// the SDK reads itself (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>: how
// tests and local stacks point a function elsewhere).
func AWSConfig(ctx context.Context) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load the AWS configuration: %w", err)
	}
	return cfg, nil
}

// Logger is a function's logger: JSON lines on stderr, which Lambda sends
// to CloudWatch Logs.
func Logger() *slog.Logger { return slog.New(slog.NewJSONHandler(os.Stderr, nil)) }
