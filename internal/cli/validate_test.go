package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// initProject scaffolds a project with `interlock init` and returns its
// directory.
func initProject(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	if code, out, errOut := run(t, "init", dir); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	return dir
}

// `interlock validate` without paths covers the scenarios/ folder that
// init creates, and says where it looked.
func TestValidateProjectCoversScenarios(t *testing.T) {
	dir := initProject(t)
	config := filepath.Join(dir, "interlock.yaml")
	code, out, errOut := run(t, "validate", "--config", config)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"scenarios in " + filepath.Join(dir, "scenarios") + " (1 file(s))",
		filepath.Join(dir, "scenarios", "example.yaml") + " (scenario ",
		"4 file(s): 4 valid",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	// A broken scenario now fails the project, with its file and line.
	sc := filepath.Join(dir, "scenarios", "example.yaml")
	data, err := os.ReadFile(sc)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "scenarios/example.yaml", strings.Replace(string(data), "jobs:\n", "jbos: {}\njobs:\n", 1))
	code, out, _ = run(t, "validate", "--config", config)
	if code != ExitFailed || !strings.Contains(out, sc+":") || !strings.Contains(out, "jbos: unknown field") {
		t.Fatalf("broken scenario: exit %d\n%s", code, out)
	}
	// The JSON report says what the project covered.
	_, out, _ = run(t, "validate", "--config", config, "--output", "json")
	var rep struct {
		Project struct {
			Settings string
			Dirs     []struct {
				What  string
				Path  string
				Files int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Project.Settings != config || len(rep.Project.Dirs) != 3 || rep.Project.Dirs[2].What != "scenarios" || rep.Project.Dirs[2].Files != 1 {
		t.Fatalf("project scope: %+v (%v)\n%s", rep.Project, err, out)
	}
	// The help says it too.
	if _, out, _ = run(t, "validate", "--help"); !strings.Contains(out, "scenarios/") {
		t.Errorf("help does not mention scenarios/:\n%s", out)
	}
	// A project without scenarios/ validates as before.
	if err := os.RemoveAll(filepath.Join(dir, "scenarios")); err != nil {
		t.Fatal(err)
	}
	if code, out, _ = run(t, "validate", "--config", config); code != ExitOK || !strings.Contains(out, "(0 file(s))") {
		t.Fatalf("no scenarios/: exit %d\n%s", code, out)
	}
}

// simulate given a pipeline, a calendar or interlock.yaml says what the
// file is instead of listing a scenario's missing fields, and exits 2.
func TestSimulateNamesAFileThatIsNotAScenario(t *testing.T) {
	dir := initProject(t)
	for file, what := range map[string]string{
		"pipelines/example.yaml":  "a pipeline file",
		"calendars/holidays.yaml": "a calendar file",
		"interlock.yaml":          "an interlock.yaml settings file",
	} {
		path := filepath.Join(dir, file)
		code, out, errOut := run(t, "simulate", path)
		want := path + " is " + what + ", not a scenario (simulate takes scenario files; see docs/scenarios.md"
		if code != ExitUsage || !strings.Contains(errOut, want) || strings.Contains(errOut, "required") {
			t.Errorf("simulate %s: exit %d\nstderr: %s\nstdout: %s\nwant %q", file, code, errOut, out, want)
		}
	}
	// A scenario with mistakes still gets its schema errors.
	bad := write(t, dir, "scenarios/bad.yaml", "name: x\ntimeline: []\n")
	if code, _, errOut := run(t, "simulate", bad); code != ExitUsage || !strings.Contains(errOut, "start: required") {
		t.Errorf("broken scenario: exit %d\n%s", code, errOut)
	}
}

// validate refuses, with file:line: field, what serve refuses at start;
// both say the same words.
func TestValidateRefusesWhatServeRefuses(t *testing.T) {
	const unset = "INTERLOCK_VALIDATE_TEST_UNSET_TOKEN"
	t.Setenv(unset, "x")
	os.Unsetenv(unset) // t.Setenv restores it afterwards
	t.Setenv("INTERLOCK_VALIDATE_TEST_TOKEN", "s3cret-value")
	cases := []struct {
		name, settings, files string
		wantLine, serveSays   string
	}{
		{"postgres URL without a database", "store: postgres://interlock@db.internal\n", "",
			`interlock.yaml:1: store: bad PostgreSQL URL:`, // (the line's URL would not survive filepath.Join)
			`interlock.yaml:1: store: bad PostgreSQL URL: postgres://interlock@db.internal: no database name`},
		{"postgres URL with an unknown sslmode", "store: postgres://interlock@db.internal/interlock?sslmode=sometimes\n", "",
			`interlock.yaml:1: store: bad PostgreSQL URL:`,
			`interlock.yaml:1: store: bad PostgreSQL URL: postgres://interlock@db.internal/interlock?sslmode=sometimes: cannot parse`},
		{"unset token variable", "server:\n  tokens:\n    - {name: ok, role: admin, tokenEnv: INTERLOCK_VALIDATE_TEST_TOKEN}\n    - {name: etl, role: writer, tokenEnv: " + unset + "}\n", "",
			`interlock.yaml:4: server.tokens[1].tokenEnv: api token "etl": environment variable ` + unset + ` is not set (serve would not start)`,
			`api token "etl": environment variable ` + unset + ` is not set`},
		{"missing token file", "server:\n  tokens:\n    - {name: ops, role: reader, tokenFile: ./secrets/ops-token}\n", "",
			`interlock.yaml:3: server.tokens[0].tokenFile: api token "ops": token file ./secrets/ops-token: no such file or directory (serve would not start)`,
			`api token "ops": token file ./secrets/ops-token: no such file or directory`},
		{"empty token file", "server:\n  tokens:\n    - {name: ops, role: reader, tokenFile: ./secrets/ops-token}\n", "secrets/ops-token",
			`interlock.yaml:3: server.tokens[0].tokenFile: api token "ops": token file ./secrets/ops-token is empty`,
			`api token "ops": token file ./secrets/ops-token is empty`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			config := write(t, dir, "interlock.yaml", c.settings)
			if c.files != "" {
				write(t, dir, c.files, "\n")
			}
			code, out, errOut := run(t, "validate", "--config", config)
			if code != ExitFailed || !strings.Contains(out, filepath.Join(dir, c.wantLine)) {
				t.Fatalf("validate: exit %d, want %d with %q\n%s%s", code, ExitFailed, c.wantLine, out, errOut)
			}
			if strings.Contains(out, "s3cret-value") {
				t.Fatal("a token value was printed")
			}
			code, _, errOut = run(t, "serve", "--config", config)
			if code != ExitRuntime || !strings.Contains(errOut, c.serveSays) {
				t.Fatalf("serve: exit %d, want %d with %q\n%s", code, ExitRuntime, c.serveSays, errOut)
			}
		})
	}
	// serve --store is checked as store: is, and names the flag.
	dir0 := t.TempDir()
	config0 := write(t, dir0, "interlock.yaml", "store: sqlite:./x.db\n")
	for flag, says := range map[string]string{
		"postgres://u:pw@db/interlock": "interlock serve: --store: a password must not be written in the store URL: use PGPASSWORD or a .pgpass file",
		"postgres://db":                "interlock serve: --store: bad PostgreSQL URL: postgres://db: no database name",
		"mysql://db/x":                 `interlock serve: --store: unknown store "mysql://db/x"`,
	} {
		code, _, errOut := run(t, "serve", "--config", config0, "--store", flag)
		if code != ExitUsage || !strings.Contains(errOut, says) || strings.Contains(errOut, ":pw@") {
			t.Errorf("serve --store %s: exit %d, want %d with %q\n%s", flag, code, ExitUsage, says, errOut)
		}
	}
	// Set variables and readable files pass.
	dir := t.TempDir()
	write(t, dir, "secrets/ops-token", "another-value\n")
	config := write(t, dir, "interlock.yaml", "server:\n  tokens:\n    - {name: ok, role: admin, tokenEnv: INTERLOCK_VALIDATE_TEST_TOKEN}\n    - {name: ops, role: reader, tokenFile: ./secrets/ops-token}\n")
	if code, out, _ := run(t, "validate", "--config", config); code != ExitOK {
		t.Fatalf("resolvable tokens: exit %d\n%s", code, out)
	}
	// Two tokens with one value are refused as serve refuses them.
	write(t, dir, "secrets/ops-token", "s3cret-value\n")
	if code, out, _ := run(t, "validate", "--config", config); code != ExitFailed || !strings.Contains(out, `interlock.yaml:3: server.tokens: api token "ops": has the same value as token "ok"`) {
		t.Fatalf("duplicate token values: exit %d\n%s", code, out)
	}
}

// A job URL naming an address the SSRF guard refuses is a warning: shown
// with file, line and field (and a severity in JSON), exit status
// unchanged. allowAddresses, DNS names and template hosts silence it.
func TestValidateWarnsAboutGuardedJobAddresses(t *testing.T) {
	// Set, so that the template host case is judged for its address only
	// (an unset variable is a warning of its own).
	t.Setenv("INTERLOCK_HOST", "10.1.2.3")
	job := func(typ, field, url string) string {
		extra := map[string]string{"http": "", "airflow": ", dagId: d", "databricks": ", jobId: \"1\""}[typ]
		return "pipeline: {id: p}\nschedule:\n  trigger: {key: k, check: exists}\njob:\n  type: " + typ + "\n  config: {" + field + ": \"" + url + "\"" + extra + "}\n"
	}
	cases := []struct {
		name, doc, allow, want string // want "": no warning
	}{
		{"private IP", job("http", "url", "http://10.1.2.3:8080/run"), "",
			`p.yaml:6: job.config.url: warning: host 10.1.2.3 is a private address: the SSRF guard will refuse every call unless interlock.yaml triggers.allowAddresses covers it`},
		{"metadata address in databricks", job("databricks", "workspaceUrl", "http://169.254.169.254"), "",
			`p.yaml:6: job.config.workspaceUrl: warning: host 169.254.169.254 is a link-local address`},
		{"localhost in airflow", job("airflow", "url", "http://localhost:8080"), "",
			`p.yaml:6: job.config.url: warning: host localhost (127.0.0.1, ::1) is a loopback address`},
		{"IPv6 loopback", job("http", "url", "http://[::1]:8080/"), "", `p.yaml:6: job.config.url: warning: host ::1 is a loopback address`},
		{"template in the path only", job("http", "url", "http://127.0.0.1/run/${DATE}"), "", `p.yaml:6: job.config.url: warning: host 127.0.0.1 is a loopback address`},
		{"covered by allowAddresses", job("http", "url", "http://10.1.2.3:8080/run"), "triggers: {allowAddresses: [10.0.0.0/8]}\n", ""},
		{"localhost allowed on one family", job("http", "url", "http://localhost/"), "triggers: {allowAddresses: [\"::1\"]}\n", ""},
		{"public IP", job("http", "url", "https://93.184.216.34/run"), "", ""},
		{"DNS name", job("http", "url", "https://airflow.internal.example.com/"), "", ""},
		{"template host", job("http", "url", "http://${env:INTERLOCK_HOST}:8080/run"), "", ""},
		{"template credentials", job("http", "url", "http://${file:/run/secrets/u}@example.com/"), "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			config := write(t, dir, "interlock.yaml", "pipelines: ./pipelines\n"+c.allow)
			f := write(t, dir, "p.yaml", c.doc)
			code, out, errOut := run(t, "validate", "--config", config, f)
			if code != ExitOK {
				t.Fatalf("exit %d (a warning must not change it)\n%s%s", code, out, errOut)
			}
			if c.want == "" {
				if strings.Contains(out, "warning") {
					t.Fatalf("unexpected warning:\n%s", out)
				}
				return
			}
			if !strings.Contains(out, filepath.Join(dir, c.want)) || !strings.Contains(out, "1 warning(s)") {
				t.Fatalf("want %q in:\n%s", c.want, out)
			}
			code, out, _ = run(t, "validate", "--config", config, "--output", "json", f)
			var rep struct {
				Valid bool
				Files []struct {
					Warnings []struct {
						Line     int
						Path     string
						Message  string
						Severity string
					}
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitOK || !rep.Valid || len(rep.Files) != 1 || len(rep.Files[0].Warnings) != 1 {
				t.Fatalf("json: exit %d %v\n%s", code, err, out)
			}
			if w := rep.Files[0].Warnings[0]; w.Severity != "warning" || w.Line != 6 || !strings.HasPrefix(w.Path, "job.config.") || !strings.Contains(w.Message, "SSRF guard") {
				t.Fatalf("json warning: %+v", w)
			}
		})
	}
}

func TestValidateSuggestsTimeZone(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "p.yaml", strings.Replace(goodPipeline, "schedule:\n", "schedule:\n  timezone: America/NewYork\n", 1))
	code, out, _ := run(t, "validate", f)
	want := filepath.Join(dir, `p.yaml:3: schedule.timezone: unknown time zone "America/NewYork" (did you mean "America/New_York"?)`)
	if code != ExitFailed || !strings.Contains(out, want) {
		t.Fatalf("exit %d, want %q in:\n%s", code, want, out)
	}
}
