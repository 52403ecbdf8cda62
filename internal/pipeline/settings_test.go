package pipeline

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/event"
)

// The example of product spec §6, verbatim.
const productSettings = `
store: sqlite:./interlock.db          # or postgres://user@host/db
pipelines: ./pipelines                # directory or glob
calendars: ./calendars
server: {addr: 127.0.0.1:7070, tokens: [{name: etl, role: writer, tokenEnv: INTERLOCK_ETL_TOKEN}]}
watchdog: {interval: 5m, stuckRunThreshold: 30m}
rules: {maxClockSkew: 5m}
triggers: {allowAddresses: [10.20.0.0/16]}   # CIDRs that HTTP-family jobs may reach despite the SSRF guard
alerts:
  - {type: slack, channel: C0123, tokenEnv: SLACK_BOT_TOKEN, match: {types: [SLA_BREACH, JOB_FAILED]}}
  - {type: webhook, url: https://hooks.example.com/interlock}
  - {type: console}
`

func TestParseSettingsProductExample(t *testing.T) {
	s, err := ParseSettings("interlock.yaml", []byte(productSettings))
	if err != nil {
		t.Fatal(err)
	}
	if s.Store != (Store{Driver: StoreSQLite, DSN: "./interlock.db"}) || s.Pipelines != "./pipelines" || s.Calendars != "./calendars" {
		t.Errorf("paths = %+v %q %q", s.Store, s.Pipelines, s.Calendars)
	}
	if len(s.Server.Tokens) != 1 || s.Server.Tokens[0] != (Token{Name: "etl", Role: RoleWriter, TokenEnv: "INTERLOCK_ETL_TOKEN"}) {
		t.Errorf("tokens = %+v", s.Server.Tokens)
	}
	if s.Triggers.AllowAddresses[0] != (AllowAddress{Prefix: netip.MustParsePrefix("10.20.0.0/16")}) {
		t.Errorf("allow = %v", s.Triggers.AllowAddresses)
	}
	if len(s.Alerts) != 3 || s.Alerts[0].Type != AlertSlack || !reflect.DeepEqual(s.Alerts[0].Match.Types, []event.Type{event.SLABreach, event.JobFailed}) ||
		s.Alerts[1].URL != "https://hooks.example.com/interlock" || s.Alerts[2].Type != AlertConsole {
		t.Errorf("alerts = %+v", s.Alerts)
	}
	if s.Source.File != "interlock.yaml" || len(s.Source.SHA256) != 64 {
		t.Errorf("source = %+v", s.Source)
	}
}

func TestSettingsDefaults(t *testing.T) {
	s, err := ParseSettings("interlock.yaml", []byte("{}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultSettings()
	want.Source = s.Source
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if s.Server.Addr != "127.0.0.1:7070" || s.Server.MaxBodyBytes != 1<<20 || !reflect.DeepEqual(s.Server.EnvAllow, []string{"INTERLOCK_*"}) ||
		s.Watchdog.Interval != 5*time.Minute || s.Watchdog.StuckRunThreshold != 30*time.Minute || s.Rules.MaxClockSkew != 5*time.Minute {
		t.Errorf("defaults = %+v", s)
	}
	opt := s.PipelineOptions(nil)
	if s.Retention != 90*24*time.Hour || opt.Retention != s.Retention {
		t.Errorf("retention %v, passed to pipelines as %v; want 90d", s.Retention, opt.Retention)
	}
	if !reflect.DeepEqual(opt.EnvAllow, []string{"INTERLOCK_*"}) {
		t.Errorf("options = %+v", opt)
	}
}

func TestParseSettingsValid(t *testing.T) {
	for name, src := range map[string]string{
		"glob pipelines":  "pipelines: ./pipelines/*.yaml\n",
		"public w/ token": "server: {addr: 0.0.0.0:8080, tokens: [{name: a, role: ADMIN, tokenFile: /run/secrets/a}]}\n",
		"ipv6 loopback":   "server: {addr: \"[::1]:7070\"}\n",
		"localhost":       "server: {addr: localhost:7070, envAllow: [\"INTERLOCK_*\", \"ETL_?\"], maxBodyBytes: 2048}\n",
		"no env allowed":  "server: {envAllow: []}\n",
		"alert kinds": `alerts:
  - {type: slack, channel: C1, tokenFile: /run/secrets/slack, match: {levels: [error, WARNING], pipelines: [gold-*]}}
  - {type: webhook, url: "http://hooks.internal/x", secretEnv: HOOK_SECRET}
  - {type: file, path: /var/log/interlock/events.jsonl}
`,
		"single address": "triggers: {allowAddresses: [192.168.1.10, \"fd00::/8\"]}\n",
		"zero skew":      "rules: {maxClockSkew: 0s}\n",
		"retention":      "retention: 11d\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseSettings("interlock.yaml", []byte(src)); err != nil {
				t.Errorf("invalid:\n%v", err)
			}
		})
	}
	tel, err := ParseSettings("i.yaml", []byte("telemetry: {endpoint: \"https://otel.internal:4318/\", serviceName: etl-guard, sampleRatio: 0.25}\n"))
	if err != nil || tel.Telemetry != (Telemetry{Endpoint: "https://otel.internal:4318/", ServiceName: "etl-guard", SampleRatio: 0.25}) {
		t.Errorf("telemetry: %+v, %v", tel, err)
	}
	s, _ := ParseSettings("i.yaml", []byte("server: {envAllow: []}\n"))
	if s.Server.EnvAllow == nil || len(s.Server.EnvAllow) != 0 || s.PipelineOptions(nil).EnvAllow == nil {
		t.Errorf("explicit empty envAllow must stay empty (allow nothing), got %#v", s.Server.EnvAllow)
	}
	s, _ = ParseSettings("i.yaml", []byte("triggers: {allowAddresses: [192.168.1.10]}\n"))
	if s.Triggers.AllowAddresses[0] != (AllowAddress{Prefix: netip.MustParsePrefix("192.168.1.10/32")}) {
		t.Errorf("single address = %v", s.Triggers.AllowAddresses)
	}
}

func TestParseSettingsInvalid(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"typo", "watchdog: {intervall: 5m}\n", `i.yaml:1: watchdog.intervall: unknown field, did you mean "interval"?`},
		{"unknown store", "store: mysql://x\n", `i.yaml:1: store: unknown store "mysql://x" (want sqlite:PATH, postgres://user@host:port/database or dynamodb://PREFIX)`},
		{"sqlite no path", "store: \"sqlite:\"\n", `i.yaml:1: store: sqlite: needs a file path, e.g. sqlite:./interlock.db`},
		{"postgres password", "store: postgres://u:pw@h/db\n", `i.yaml:1: store: a password must not be written in the store URL: use PGPASSWORD or a .pgpass file`},
		{"postgres password parameter", "store: postgres://u@h/db?password=pw\n", `i.yaml:1: store: a password must not be written in the store URL`},
		{"postgres no database", "store: postgres://interlock@db.internal:5432\n", `i.yaml:1: store: bad PostgreSQL URL: postgres://interlock@db.internal:5432: no database name`},
		{"postgres bad port", "store: postgres://h:port/db\n", `i.yaml:1: store: bad PostgreSQL URL: parse "postgres://h:port/db": invalid port`},
		{"bad addr", "server: {addr: 7070}\n", `i.yaml:1: server.addr: "7070": want host:port, e.g. 127.0.0.1:7070`},
		{"bad port", "server: {addr: \"127.0.0.1:99999\"}\n", `i.yaml:1: server.addr: "127.0.0.1:99999": want host:port`},
		{"public without tokens", "server: {addr: \"0.0.0.0:7070\"}\n", `i.yaml:1: server.addr: "0.0.0.0:7070" is reachable from other machines, which needs server.tokens`},
		{"all interfaces without tokens", "server: {addr: \":7070\"}\n", `i.yaml:1: server.addr: ":7070" is reachable from other machines`},
		{"bad role", "server:\n  tokens:\n    - {name: a, role: root, tokenEnv: A}\n", `i.yaml:3: server.tokens[0].role: unknown role "root" (want one of reader, writer, operator, admin)`},
		{"token both sources", "server:\n  tokens:\n    - {name: a, role: admin, tokenEnv: A, tokenFile: /f}\n", `i.yaml:3: server.tokens[0].tokenFile: set either tokenEnv or tokenFile, not both`},
		{"token no source", "server:\n  tokens:\n    - {name: a, role: admin}\n", `i.yaml:3: server.tokens[0]: needs tokenEnv or tokenFile`},
		{"token inline", "server:\n  tokens:\n    - {name: a, role: admin, token: abc}\n", `i.yaml:3: server.tokens[0].token: unknown field, did you mean "tokenEnv"?`},
		{"token bad env", "server:\n  tokens:\n    - {name: a, role: admin, tokenEnv: \"A B\"}\n", `i.yaml:3: server.tokens[0].tokenEnv: "A B" is not an environment variable name`},
		{"token dup", "server:\n  tokens:\n    - {name: a, role: admin, tokenEnv: A}\n    - {name: a, role: reader, tokenEnv: B}\n", `i.yaml:4: server.tokens[1].name: duplicate token name "a"`},
		{"token missing name", "server:\n  tokens:\n    - {role: admin, tokenEnv: A}\n", `i.yaml:3: server.tokens[0].name: missing required field`},
		{"bad envAllow", "server: {envAllow: [\"[\"]}\n", `i.yaml:1: server.envAllow[0]: malformed pattern "["`},
		{"body too small", "server: {maxBodyBytes: 10}\n", `i.yaml:1: server.maxBodyBytes: 10 is out of range (want 1024 to 67108864)`},
		{"body too large", "server: {maxBodyBytes: 1073741824}\n", `i.yaml:1: server.maxBodyBytes: 1073741824 is out of range`},
		{"watchdog interval low", "watchdog: {interval: 1s}\n", `i.yaml:1: watchdog.interval: 1s is out of range (want 10s to 24h0m0s)`},
		{"watchdog interval high", "watchdog: {interval: 2d}\n", `i.yaml:1: watchdog.interval: 48h0m0s is out of range`},
		{"stuck threshold low", "watchdog: {stuckRunThreshold: 10s}\n", `i.yaml:1: watchdog.stuckRunThreshold: 10s is out of range (want 1m0s to 168h0m0s)`},
		{"stuck threshold high", "watchdog: {stuckRunThreshold: 8d}\n", `i.yaml:1: watchdog.stuckRunThreshold: 192h0m0s is out of range`},
		{"skew high", "rules: {maxClockSkew: 2h}\n", `i.yaml:1: rules.maxClockSkew: 2h0m0s is out of range (want 0s to 1h0m0s)`},
		{"retention too short", "store: sqlite:x.db\nretention: 10d\n", `i.yaml:2: retention: 10d is out of range (want 11d to 36500d): the watchdog reads a period's history for 2d, and waits of up to 7d follow a period's day`},
		{"retention negative", "retention: -1h\n", `i.yaml:1: retention: `},
		{"retention not a duration", "retention: 90\n", `i.yaml:1: retention: want a duration like "5m", got the number 90`},
		{"bad duration", "watchdog: {interval: 5}\n", `i.yaml:1: watchdog.interval: want a duration like "5m", got the number 5`},
		{"telemetry endpoint not a URL", "telemetry: {endpoint: collector:4318}\n", `i.yaml:1: telemetry.endpoint: "collector:4318" is not an http(s) URL`},
		{"telemetry endpoint grpc", "telemetry: {endpoint: \"grpc://c:4317\"}\n", `i.yaml:1: telemetry.endpoint: "grpc://c:4317" is not an http(s) URL: want the OTLP/HTTP endpoint's URL`},
		{"telemetry endpoint credentials", "telemetry: {endpoint: \"https://k:s@c:4318\"}\n", `i.yaml:1: telemetry.endpoint: the URL carries credentials: put them in OTEL_EXPORTER_OTLP_HEADERS`},
		{"telemetry empty service", "telemetry: {serviceName: \" \"}\n", `i.yaml:1: telemetry.serviceName: empty`},
		{"telemetry ratio", "telemetry: {sampleRatio: 1.5}\n", `i.yaml:1: telemetry.sampleRatio: 1.5 is out of range (want more than 0, at most 1)`},
		{"telemetry ratio zero", "telemetry: {sampleRatio: 0}\n", `i.yaml:1: telemetry.sampleRatio: 0 is out of range`},
		{"telemetry typo", "telemetry: {endpont: \"http://c:4318\"}\n", `i.yaml:1: telemetry.endpont: unknown field, did you mean "endpoint"?`},
		{"bad cidr", "triggers:\n  allowAddresses: [10.0.0.0/33]\n", `i.yaml:2: triggers.allowAddresses[0]: "10.0.0.0/33": not an IP address or CIDR: want IP, IP:PORT, CIDR or CIDR:PORT`},
		{"bad glob", "pipelines: \"[\"\n", `i.yaml:1: pipelines: malformed glob "["`},
		{"empty pipelines", "pipelines: \"\"\n", `i.yaml:1: pipelines: must not be empty`},
		{"alert type", "alerts: [{type: slak}]\n", `i.yaml:1: alerts[0].type: unknown alert type "slak", did you mean "slack"?`},
		{"alert missing type", "alerts: [{url: \"https://x\"}]\n", `i.yaml:1: alerts[0].type: missing required field`},
		{"slack no channel", "alerts: [{type: slack, tokenEnv: T}]\n", `i.yaml:1: alerts[0].channel: missing required field for alert type slack`},
		{"slack no token", "alerts: [{type: slack, channel: C1}]\n", `i.yaml:1: alerts[0]: needs tokenEnv or tokenFile`},
		{"webhook no url", "alerts: [{type: webhook}]\n", `i.yaml:1: alerts[0].url: missing required field for alert type webhook`},
		{"webhook bad url", "alerts: [{type: webhook, url: \"hooks.example.com\"}]\n", `i.yaml:1: alerts[0].url: want an absolute http or https URL, got "hooks.example.com"`},
		{"file no path", "alerts: [{type: file}]\n", `i.yaml:1: alerts[0].path: missing required field for alert type file`},
		{"console extra field", "alerts: [{type: console, channel: C1}]\n", `i.yaml:1: alerts[0].channel: not used by alert type console`},
		{"unknown event type", "alerts:\n  - type: console\n    match: {types: [SLA_BREECH]}\n", `i.yaml:3: alerts[0].match.types[0]: unknown event type "SLA_BREECH", did you mean "SLA_BREACH"?`},
		{"unknown level", "alerts:\n  - type: console\n    match: {levels: [critical]}\n", `i.yaml:3: alerts[0].match.levels[0]: unknown level "critical" (want one of info, warning, error)`},
		{"bad pipeline glob", "alerts:\n  - type: console\n    match: {pipelines: [\"[\"]}\n", `i.yaml:3: alerts[0].match.pipelines[0]: malformed pipeline pattern "["`},
		{"empty", "", `i.yaml: empty file`},
		{"list", "- a\n", `i.yaml:1: want a settings document (a mapping), got a list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSettings("i.yaml", []byte(tc.src))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v\nwant prefix %q", err, tc.want)
			}
			if s != nil {
				t.Error("settings returned with an error")
			}
			if !errors.Is(err, confdec.ErrInvalid) {
				t.Error("not ErrInvalid")
			}
		})
	}
}

func TestSettingsAllErrorsAtOnce(t *testing.T) {
	_, err := ParseSettings("i.yaml", []byte("store: x\nwatchdog: {interval: 1s}\nalerts: [{type: nope}]\n"))
	if err == nil || len(confdec.AsErrors("i.yaml", err)) != 3 {
		t.Errorf("want 3 errors, got %v", err)
	}
}

func TestParseSettingsPostgresStore(t *testing.T) {
	const u = "postgres://interlock@db.internal:5432/interlock?sslmode=require&pool_max_conns=8"
	s, err := ParseSettings("i.yaml", []byte("store: "+u+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Store{Driver: StorePostgres, DSN: u}); s.Store != want {
		t.Fatalf("store = %+v, want %+v", s.Store, want)
	}
	if st, err := ParseStore("postgresql://h/db"); err != nil || st.Driver != StorePostgres {
		t.Fatalf("ParseStore(postgresql://h/db) = %+v, %v", st, err)
	}
	// An AWS deployment's tables: the app that opens them checks the URL.
	const d = "dynamodb://prod-interlock?region=eu-west-1"
	if st, err := ParseStore(d); err != nil || st != (Store{Driver: StoreDynamoDB, DSN: d}) {
		t.Fatalf("ParseStore(%s) = %+v, %v", d, st, err)
	}
}

// TestRoleIncludes: each role includes the ones before it, an unknown one
// includes nothing and is included by nothing.
func TestRoleIncludes(t *testing.T) {
	order := []Role{RoleReader, RoleWriter, RoleOperator, RoleAdmin}
	for i, have := range order {
		for j, need := range order {
			if got := have.Includes(need); got != (i >= j) {
				t.Errorf("%s.Includes(%s) = %v", have, need, got)
			}
		}
		if have.Includes("root") || Role("root").Includes(have) {
			t.Errorf("an unknown role is included by or includes %s", have)
		}
	}
}
