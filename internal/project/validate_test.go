package project

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
)

// httpURLField must list exactly the job types whose runner calls out
// through an httpx.Client (so through the SSRF guard), each with a URL
// field of its schema: a new HTTP-family type added to app.Jobs without
// it here would escape the warning.
func TestHTTPURLFieldMatchesTheWiring(t *testing.T) {
	clientType := reflect.TypeFor[*httpx.Client]()
	jobs := app.Jobs(nil, nil)
	for _, jt := range pipeline.JobTypes() {
		runner := reflect.ValueOf(jobs[string(jt)])
		for runner.Kind() == reflect.Pointer || runner.Kind() == reflect.Interface {
			runner = runner.Elem()
		}
		usesHTTPX := false
		if runner.Kind() == reflect.Struct {
			for i := range runner.NumField() {
				usesHTTPX = usesHTTPX || runner.Type().Field(i).Type == clientType
			}
		}
		field, listed := httpURLField[jt]
		if usesHTTPX != listed {
			t.Errorf("job type %s: runner uses httpx %v, listed in httpURLField %v", jt, usesHTTPX, listed)
		}
		if listed {
			schema, _ := pipeline.JobSchema(jt)
			if !slices.ContainsFunc(schema, func(f pipeline.ConfigField) bool { return f.Name == field && f.Kind == pipeline.KindURL }) {
				t.Errorf("job type %s has no URL field %q", jt, field)
			}
		}
	}
}

func TestLiteralHost(t *testing.T) {
	for raw, want := range map[string]string{
		"http://10.0.0.5:8080/run":                    "10.0.0.5",
		"https://user@192.168.1.1/":                   "192.168.1.1",
		"http://[fe80::1%25eth0]:80/":                 "fe80::1%eth0",
		"http://[::ffff:127.0.0.1]/":                  "::ffff:127.0.0.1",
		"http://LOCALHOST./x":                         "127.0.0.1 ::1",
		"http://api.localhost:9/":                     "127.0.0.1 ::1",
		"http://127.0.0.1/${DATE}/${env:INTERLOCK_X}": "127.0.0.1",
		"http://${env:INTERLOCK_HOST}/":               "",
		"http://${env:INTERLOCK_SUB}.localhost/":      "", // built from a variable: not judged
		"http://10.0.0.${env:INTERLOCK_N}/":           "",
		"http://${file:/run/a@b}@10.0.0.5/":           "10.0.0.5",
		"https://example.com/":                        "",
		"https://localhost.example.com/":              "",
		"http://2130706433/":                          "", // a decimal IPv4 is a DNS name to Go's resolver
		"not a url at all %zz":                        "",
	} {
		_, addrs := literalHost(raw)
		var got []string
		for _, a := range addrs {
			got = append(got, a.String())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("literalHost(%q) = %v, want %q", raw, got, want)
		}
	}
}

func TestLineOf(t *testing.T) {
	root, err := confdec.ParseDocument("f.yaml", []byte("a: 1\nserver:\n  tokens:\n    - {name: x}\n    - name: y\n      tokenEnv: Y\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path []any
		want int
	}{
		{[]any{"a"}, 1},
		{[]any{"server", "tokens", 1, "tokenEnv"}, 6},
		{[]any{"server", "tokens", 0, "tokenEnv"}, 4}, // missing: its token's line
		{[]any{"server", "tokens", 5}, 4},             // no such token: the list's line
		{[]any{"nope"}, 1},
	} {
		if got := lineOf(root, c.path...); got != c.want {
			t.Errorf("lineOf(%v) = %d, want %d", c.path, got, c.want)
		}
	}
	if lineOf(nil, "a") != 0 {
		t.Error("nil root")
	}
}

func TestNotAScenario(t *testing.T) {
	for doc, want := range map[string]string{
		"pipeline: {id: p}\n":                    "f.yaml is a pipeline file, not a scenario (simulate takes scenario files",
		"name: h\ndates: [2026-12-25]\n":         "f.yaml is a calendar file, not a scenario",
		"store: sqlite:./x.db\n":                 "f.yaml is an interlock.yaml settings file, not a scenario",
		"name: s\nstart: 2026-01-01T00:00:00Z\n": "",
		"hello: world\n":                         "",
		"[unclosed\n":                            "",
	} {
		err := NotAScenario("f.yaml", []byte(doc))
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", doc, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, ErrNotAScenario) {
			t.Errorf("%q: got %v, want %q", doc, err, want)
		}
	}
}

// A broken pipeline that a scenario uses is listed once, with the
// pipeline; the scenario names it in one line.
func TestBrokenPipelineUsedByAScenarioIsListedOnce(t *testing.T) {
	dir := t.TempDir()
	put := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("interlock.yaml", "pipelines: ./pipelines\n")
	put("pipelines/p.yaml", "pipeline: {id: p}\nschedule: {timezone: Nowhere/Special, trigger: {key: k, check: exists}}\njob: {type: glue, config: {jobName: j}}\n")
	put("scenarios/s.yaml", "name: s\nstart: 2026-01-01T00:00:00Z\nend: 2026-01-02T00:00:00Z\npipelines: [{file: ../pipelines/p.yaml}]\ntimeline: []\n")
	rep, err := Validate(nil, Options{SettingsFile: filepath.Join(dir, "interlock.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	count, uses := 0, 0
	for _, f := range rep.Files {
		for _, e := range f.Errors {
			if strings.Contains(e.Msg, "Nowhere/Special") {
				count++
			}
			if f.Kind == KindScenario && strings.Contains(e.Msg, "uses "+filepath.Join(dir, "pipelines", "p.yaml")+", which is invalid") {
				uses++
			}
		}
	}
	if count != 1 || uses != 1 || rep.Valid() {
		t.Fatalf("time zone error listed %d times, scenario names the pipeline %d times: %+v", count, uses, rep)
	}
	// Validated alone, the scenario still shows the pipeline's errors.
	rep, err = Validate([]string{filepath.Join(dir, "scenarios")}, Options{})
	if err != nil || len(rep.Files) != 1 || !slices.ContainsFunc(rep.Files[0].Errors, func(e confdec.Error) bool { return strings.Contains(e.Msg, "Nowhere/Special") }) {
		t.Fatalf("scenario alone: %v %+v", err, rep)
	}
}

// The environment is read through Options.LookupEnv.
func TestTokensAreResolvedInTheGivenEnvironment(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, "interlock.yaml")
	if err := os.WriteFile(settings, []byte("server:\n  tokens:\n    - {name: etl, role: writer, tokenEnv: ETL_TOKEN}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	rep, err := Validate(nil, Options{SettingsFile: settings, LookupEnv: lookup})
	if err != nil || rep.Valid() || rep.Files[0].Errors[0].Path != "server.tokens[0].tokenEnv" || rep.Files[0].Errors[0].Line != 3 {
		t.Fatalf("unset: %v %+v", err, rep)
	}
	env["ETL_TOKEN"] = "  "
	if rep, _ = Validate(nil, Options{SettingsFile: settings, LookupEnv: lookup}); rep.Valid() || !strings.Contains(rep.Files[0].Errors[0].Msg, "is empty") {
		t.Fatalf("empty: %+v", rep)
	}
	env["ETL_TOKEN"] = "t0ken"
	if rep, _ = Validate(nil, Options{SettingsFile: settings, LookupEnv: lookup}); !rep.Valid() {
		t.Fatalf("set: %+v", rep)
	}
}

// Alert sink secrets are resolved as serve resolves them at start: an
// unset Slack token variable, a missing token file and an unset webhook
// signing secret are errors on their field's line; set, the file is valid.
func TestAlertSecretsAreResolvedAsServeDoes(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, "interlock.yaml")
	doc := `alerts:
  - {type: console}
  - {type: slack, channel: C1, tokenEnv: SLACK_TOKEN}
  - {type: slack, channel: C2, tokenFile: slack.token}
  - type: webhook
    url: https://hooks.example.com/x
    secretEnv: HOOK_SECRET
`
	if err := os.WriteFile(settings, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	rep, err := Validate(nil, Options{SettingsFile: settings, LookupEnv: lookup})
	if err != nil || rep.Valid() {
		t.Fatalf("unset: %v %+v", err, rep)
	}
	var got []string
	for _, e := range rep.Files[0].Errors {
		got = append(got, fmt.Sprintf("%d %s", e.Line, e.Path))
		if !strings.Contains(e.Msg, "serve would not start") {
			t.Errorf("%s: %s", e.Path, e.Msg)
		}
	}
	if want := []string{"3 alerts[1].tokenEnv", "4 alerts[2].tokenFile", "7 alerts[3].secretEnv"}; !slices.Equal(got, want) {
		t.Fatalf("errors %q, want %q", got, want)
	}
	env["SLACK_TOKEN"], env["HOOK_SECRET"] = "xoxb-1", "s3cret"
	if err := os.WriteFile(filepath.Join(dir, "slack.token"), []byte("xoxb-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if rep, _ = Validate(nil, Options{SettingsFile: settings, LookupEnv: lookup}); !rep.Valid() {
		t.Fatalf("set: %+v", rep)
	}
}

func TestGuardWarningUsesTheAllowList(t *testing.T) {
	p, err := pipeline.ParsePipeline("p.yaml", []byte("pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob:\n  type: http\n  config:\n    url: http://10.1.2.3/run\n"), pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root, _ := confdec.ParseDocument("p.yaml", []byte("pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob:\n  type: http\n  config:\n    url: http://10.1.2.3/run\n"))
	ws := ssrfWarnings("p.yaml", root, p, nil)
	if len(ws) != 1 || ws[0].Line != 6 || ws[0].Path != "job.config.url" || ws[0].Severity != SeverityWarning {
		t.Fatalf("warnings: %+v", ws)
	}
	if got := ws[0].String(); got != "p.yaml:6: job.config.url: warning: host 10.1.2.3 is a private address: the SSRF guard will refuse every call unless interlock.yaml triggers.allowAddresses covers it" {
		t.Fatalf("rendered: %s", got)
	}
	if ws := ssrfWarnings("p.yaml", root, p, []pipeline.AllowAddress{{Prefix: netip.MustParsePrefix("10.1.0.0/16")}}); len(ws) != 0 {
		t.Fatalf("allowed: %+v", ws)
	}
}

// A job's ${env:NAME} that is unset here is a warning on its field's line
// (serve may run elsewhere); set, nothing is said.
func TestUnsetJobVariablesAreWarnings(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	doc := `pipeline: {id: p}
schedule: {trigger: {key: k, check: exists}}
job:
  type: http
  config:
    url: https://api.example.com/run
    headers: {Authorization: "Bearer ${env:INTERLOCK_API_TOKEN}", X-Run: "${RUN_ID}"}
`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	rep, err := Validate([]string{file}, Options{LookupEnv: lookup})
	if err != nil || !rep.Valid() || len(rep.Files[0].Warnings) != 1 {
		t.Fatalf("unset: %v %+v", err, rep)
	}
	if w := rep.Files[0].Warnings[0]; w.Line != 7 || w.Path != "job.config.headers" || !strings.Contains(w.Msg, "INTERLOCK_API_TOKEN is not set") {
		t.Fatalf("warning %+v", w)
	}
	env["INTERLOCK_API_TOKEN"] = "t"
	if rep, _ = Validate([]string{file}, Options{LookupEnv: lookup}); len(rep.Files[0].Warnings) != 0 {
		t.Fatalf("set: %+v", rep.Files[0].Warnings)
	}
}

// TestDuplicateNamesNameTheFirstFile: a calendar name or pipeline id a
// second file defines again is an error of that file naming the first.
func TestDuplicateNamesNameTheFirstFile(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"a-cal.yaml": "name: holidays\ndates: [2026-12-25]\n",
		"b-cal.yaml": "name: holidays\ndates: [2026-12-26]\n",
		"a.yaml":     "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: glue, config: {jobName: j}}\n",
		"b.yaml":     "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: glue, config: {jobName: j}}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Validate([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"b-cal.yaml": `name: duplicate calendar name "holidays" (also in ` + filepath.Join(dir, "a-cal.yaml") + ")",
		"b.yaml":     `pipeline.id: duplicate pipeline id "p" (also in ` + filepath.Join(dir, "a.yaml") + ")",
	}
	for _, f := range rep.Files {
		var got []string
		for _, e := range f.Errors {
			got = append(got, e.Path+": "+e.Msg)
		}
		if w := want[filepath.Base(f.File)]; strings.Join(got, "\n") != w {
			t.Errorf("%s (%s): errors %q, want %q", filepath.Base(f.File), f.Name, got, w)
		}
	}
}
