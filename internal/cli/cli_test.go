package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run runs the command line as a user would and returns the exit code and
// what it printed.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), Env{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Version: "test"})
	return code, out.String(), errb.String()
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodPipeline = `pipeline: {id: orders}
schedule:
  trigger: {key: orders-landed, check: exists}
validation:
  rules: [{key: orders-landed, check: exists}]
job: {type: glue, config: {jobName: orders}}
`

// TestValidateAsANewUser tries the mistakes a newcomer makes; each must be
// refused with the file, the line and the field named.
func TestValidateAsANewUser(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want string // file:line: field: message fragment
	}{
		{"typo in a field name", strings.Replace(goodPipeline, "schedule:\n", "schedule:\n  timzone: UTC\n", 1),
			`p.yaml:3: schedule.timzone: unknown field, did you mean "timezone"?`},
		{"unknown operator", strings.Replace(goodPipeline, "check: exists}]", "check: equal}]", 1),
			`p.yaml:5: validation.rules[0].check: unknown operator "equal"`},
		{"bad cron", strings.Replace(goodPipeline, "schedule:\n", "schedule:\n  cron: \"61 * * * *\"\n", 1),
			`p.yaml:3: schedule.cron:`},
		{"bad time zone", strings.Replace(goodPipeline, "schedule:\n", "schedule:\n  timezone: America/New_Yrok\n", 1),
			`p.yaml:3: schedule.timezone:`},
		{"out-of-range retry budget", strings.Replace(goodPipeline, "jobName: orders}}", "jobName: orders}, maxRetries: 11}", 1),
			`p.yaml:6: job.maxRetries: 11 is out of range (want 0 to 10)`},
		{"missing required job field", strings.Replace(goodPipeline, "config: {jobName: orders}", "config: {arguments: {a: b}}", 1),
			`p.yaml:6: job.config.jobName: missing required field for job type glue`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			f := write(t, dir, "p.yaml", c.doc)
			code, out, _ := run(t, "validate", f)
			if code != ExitFailed {
				t.Fatalf("exit %d, want %d; output:\n%s", code, ExitFailed, out)
			}
			if !strings.Contains(out, filepath.Join(dir, c.want)) {
				t.Fatalf("output does not contain %q:\n%s", c.want, out)
			}
		})
	}
}

func TestValidateReportsEveryErrorOfEveryFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pipelines/a.yaml", strings.Replace(goodPipeline, "orders}", "a}", 1)+"dryRun: maybe\n")
	write(t, dir, "pipelines/b.yaml", strings.Replace(strings.Replace(goodPipeline, "orders}", "b}", 1), "check: exists}]", "check: nope}]", 1)+"extra: 1\n")
	write(t, dir, "pipelines/c.yaml", goodPipeline)
	write(t, dir, "pipelines/dup.yaml", goodPipeline)
	code, out, _ := run(t, "validate", "--output", "json", dir)
	if code != ExitFailed {
		t.Fatalf("exit %d; output:\n%s", code, out)
	}
	var rep struct {
		Valid bool
		Files []struct {
			File   string
			Kind   string
			Errors []struct {
				Line    int
				Path    string
				Message string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if rep.Valid || len(rep.Files) != 4 {
		t.Fatalf("report: %+v", rep)
	}
	count := map[string]int{}
	for _, f := range rep.Files {
		count[filepath.Base(f.File)] = len(f.Errors)
		if f.Kind != "pipeline" {
			t.Errorf("%s: kind %q", f.File, f.Kind)
		}
	}
	if count["a.yaml"] != 1 || count["b.yaml"] != 2 || count["c.yaml"] != 0 || count["dup.yaml"] != 1 {
		t.Fatalf("errors per file: %v\n%s", count, out)
	}
}

func TestValidateProjectAndKinds(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "interlock.yaml", "pipelines: ./pipelines\ncalendars: ./calendars\nwatchdog: {interval: 5m}\n")
	write(t, dir, "calendars/hol.yaml", "name: holidays\ndates: [\"2026-12-25\"]\n")
	write(t, dir, "pipelines/p.yaml", strings.Replace(goodPipeline, "schedule:\n", "schedule:\n  exclude: {calendar: holidays}\n", 1))
	code, out, errOut := run(t, "validate", "--config", filepath.Join(dir, "interlock.yaml"))
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"(settings)", "(calendar holidays)", "(pipeline orders)", "3 file(s): 3 valid"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	// A calendar the project does not have is an error naming it.
	write(t, dir, "pipelines/q.yaml", strings.Replace(strings.Replace(goodPipeline, "orders}", "q}", 1), "schedule:\n", "schedule:\n  exclude: {calendar: holidayz}\n", 1))
	code, out, _ = run(t, "validate", "--config", filepath.Join(dir, "interlock.yaml"))
	if code != ExitFailed || !strings.Contains(out, "schedule.exclude.calendar") || !strings.Contains(out, "holidayz") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestValidateUsage(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := run(t, "validate", "--config", filepath.Join(dir, "none.yaml")); code != ExitUsage || !strings.Contains(errOut, "nothing to validate") {
		t.Fatalf("no project: exit %d %s", code, errOut)
	}
	if code, _, _ := run(t, "validate", filepath.Join(dir, "missing.yaml")); code != ExitUsage {
		t.Fatalf("missing path: exit %d", code)
	}
	if code, _, errOut := run(t, "validate", "--output", "xml", dir); code != ExitUsage || !strings.Contains(errOut, "--output must be table or json") {
		t.Fatalf("bad flag: exit %d %s", code, errOut)
	}
	f := write(t, dir, "what.yaml", "hello: world\n")
	if code, out, _ := run(t, "validate", f); code != ExitFailed || !strings.Contains(out, "cannot tell what this file is") {
		t.Fatalf("unknown kind: exit %d %s", code, out)
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := run(t, "--help")
	if code != ExitOK || !strings.Contains(out, "validate") || !strings.Contains(out, "simulate") || !strings.Contains(out, "Exit codes") {
		t.Fatalf("help: %d\n%s", code, out)
	}
	for name := range commands {
		code, out, _ := run(t, name, "--help")
		if code != ExitOK || !strings.Contains(out, "Usage:") {
			t.Errorf("%s --help: exit %d\n%s", name, code, out)
		}
	}
	if code, _, errOut := run(t, "frobnicate"); code != ExitUsage || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: %d %s", code, errOut)
	}
	if code, out, _ := run(t, "version"); code != ExitOK || !strings.Contains(out, "interlock test") {
		t.Fatalf("version: %d %s", code, out)
	}
	if code, _, errOut := run(t, "help", "frobnicate"); code != ExitUsage || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Fatalf("help of an unknown command: %d %s", code, errOut)
	}
}

func TestClientFlagsThatCannotBeUsedAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"status", "--server", "127.0.0.1:7070"}, "want an http:// or https:// URL"},
		{[]string{"status", "--server", "ftp://example.com"}, "want an http:// or https:// URL"},
		{[]string{"explain", "p", "--config", filepath.Join(dir, "missing.yaml")}, "--config:"},
		{[]string{"events", "--config", write(t, dir, "bad.yaml", "server: [\n")}, "bad.yaml"},
	}
	for _, c := range cases {
		code, _, errOut := run(t, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errOut, ExitUsage, c.want)
		}
	}
}

// pause --until takes the durations every other flag takes, days included.
func TestPauseUntilParsesDays(t *testing.T) {
	if code, _, errOut := run(t, "pause", "p", "--until", "soon", "--server", "http://127.0.0.1:1"); code != ExitUsage || !strings.Contains(errOut, "--until") {
		t.Fatalf("--until soon: exit %d %s", code, errOut)
	}
	// 1d parses; the request then fails for want of a server, not of syntax.
	if code, _, errOut := run(t, "pause", "p", "--until", "1d", "--server", "http://127.0.0.1:1"); code != ExitRuntime {
		t.Fatalf("--until 1d: exit %d %s", code, errOut)
	}
}
