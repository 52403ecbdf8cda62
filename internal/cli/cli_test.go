package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
		// An AWS deployment's tables, named by a store URL that must parse.
		{[]string{"pause", "p", "--server", "dynamodb://bad prefix"}, "--server: dynamodb: store URL"},
		{[]string{"serve", "--store", "dynamodb://bad prefix"}, "--store: dynamodb: store URL"},
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

// `interlock help CMD` prints exactly what `interlock CMD --help` prints,
// flags included, for every command, help itself among them.
func TestHelpCommandIsCommandDashDashHelp(t *testing.T) {
	for _, name := range commandNames() {
		code, out, errOut := run(t, name, "--help")
		hcode, hout, herrOut := run(t, "help", name)
		if code != ExitOK || hcode != code || hout != out || herrOut != errOut {
			t.Errorf("help %s differs from %s --help:\nexit %d vs %d\n--- help %s:\n%s%s\n--- %s --help:\n%s%s", name, name, hcode, code, name, hout, herrOut, name, out, errOut)
		}
		if fs := flagsOf(commands[name]); fs != nil && flagDefaults(fs) != "" && !strings.Contains(hout, "\nFlags:\n") {
			t.Errorf("help %s lists no flags:\n%s", name, hout)
		}
		if _, aout, _ := run(t, "--help", name); aout != out {
			t.Errorf("interlock --help %s differs from %s --help:\n%s", name, name, aout)
		}
	}
	code, out, errOut := run(t, "help", "help")
	if code != ExitOK || !strings.Contains(out, "interlock help [COMMAND]") {
		t.Fatalf("help help: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, "help", "status", "events"); code != ExitUsage || !strings.Contains(errOut, "at most one COMMAND") {
		t.Fatalf("help with two commands: exit %d %s", code, errOut)
	}
}

// Help spells flags --name, as the README and the usage lines do; the
// flag package still takes -name too.
func TestHelpSpellsFlagsWithTwoDashes(t *testing.T) {
	for _, name := range commandNames() {
		fs := flagsOf(commands[name])
		if fs == nil {
			t.Errorf("%s does not parse its flags with parseFlags before doing anything: help and completion cannot list them", name)
			continue
		}
		_, out, _ := run(t, name, "--help")
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(out, "\n  --"+f.Name+" ") && !strings.Contains(out, "\n  --"+f.Name+"\n") {
				t.Errorf("%s --help does not show --%s:\n%s", name, f.Name, out)
			}
		})
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, " \t"), "-") && !strings.HasPrefix(strings.TrimLeft(l, " \t"), "--") {
				t.Errorf("%s --help has a single-dash flag: %q", name, l)
			}
		}
	}
	// One dash still parses: --until's value reaches the check that
	// refuses it, and a good one reaches the (absent) server.
	if code, _, errOut := run(t, "pause", "p", "-until", "soon", "-server", "http://127.0.0.1:1"); code != ExitUsage || !strings.Contains(errOut, `--until "soon"`) {
		t.Fatalf("-until soon: exit %d %s", code, errOut)
	}
	if code, _, errOut := run(t, "pause", "p", "-until", "1d", "-server", "http://127.0.0.1:1"); code != ExitRuntime {
		t.Fatalf("-until 1d: exit %d %s", code, errOut)
	}
	// The flag package's own errors name flags with two dashes too.
	for args, want := range map[string]string{
		"events --since":      "flag needs an argument: --since",
		"rerun p --period":    "flag needs an argument: --period",
		"status --nosuchflag": "flag provided but not defined: --nosuchflag",
		"events --limit x":    `invalid value "x" for flag --limit`,
	} {
		code, _, errOut := run(t, strings.Fields(args)...)
		if code != ExitUsage || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, want 2 and %q in:\n%s", args, code, want, errOut)
		}
	}
}

// Each completion script names every command and every flag of every
// command, and the shells that are installed accept it and complete with it.
func TestCompletionScripts(t *testing.T) {
	dir := t.TempDir()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, script, errOut := run(t, "completion", shell)
		if code != ExitOK {
			t.Fatalf("completion %s: exit %d %s", shell, code, errOut)
		}
		for _, name := range commandNames() {
			// Offered as a command, and given its own flags.
			forms := map[string][]string{
				"bash": {"compgen -W '" + strings.Join(commandNames(), " ") + "'", "\n    '" + name + "')\n"},
				"zsh":  {"\n    '" + name + ":", "\n    (" + name + ")\n"},
				"fish": {"-n __fish_use_subcommand -a '" + name + "' -d "},
			}[shell]
			for _, want := range forms {
				if !strings.Contains(script, want) {
					t.Errorf("the %s script does not offer the command %s: no %q", shell, name, want)
				}
			}
			flagsOf(commands[name]).VisitAll(func(f *flag.Flag) {
				want := "--" + f.Name
				if shell == "fish" {
					want = "'__fish_seen_subcommand_from " + name + "' -l " + f.Name + " "
				}
				if !strings.Contains(script, want) {
					t.Errorf("the %s script does not offer %s for %s", shell, want, name)
				}
			})
		}
		file := write(t, dir, "interlock."+shell, script)
		check := map[string][]string{"bash": {"bash", "-n", file}, "zsh": {"zsh", "-n", file}, "fish": {"fish", "--no-execute", file}}[shell]
		if _, err := exec.LookPath(check[0]); err != nil {
			t.Logf("%s not installed: the script's syntax is not checked", shell)
			continue
		}
		if out, err := exec.Command(check[0], check[1:]...).CombinedOutput(); err != nil {
			t.Errorf("%s rejects its completion script: %v\n%s", shell, err, out)
		}
	}
	if code, _, errOut := run(t, "completion", "powershell"); code != ExitUsage || !strings.Contains(errOut, `unknown shell "powershell"`) {
		t.Fatalf("completion powershell: exit %d %s", code, errOut)
	}
	if code, _, _ := run(t, "completion"); code != ExitUsage {
		t.Fatalf("completion without a shell: exit %d", code)
	}
}

// completes asks a shell to complete each line with the script loaded.
var completes = []struct {
	line string // what was typed; the cursor is at its end
	want string // the completions, space-separated, in order
}{
	{"interlock sta", "status"},
	{"interlock events --ty", "--type"},
	{"interlock events --type PIPELINE_P", "PIPELINE_PAUSED"},
	{"interlock status --output ", "json table"},
	{"interlock sensor ", "put"},
	{"interlock help watch", "watchdog"},
	{"interlock completion ", "bash fish zsh"},
	{"interlock watchdog --o", "--once --output"},
}

func TestBashCompletionCompletes(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	_, script, _ := run(t, "completion", "bash")
	file := write(t, t.TempDir(), "interlock.bash", script)
	for _, c := range completes {
		// COMP_WORDS as bash splits the line, the last word the one
		// being completed (empty after a space).
		words := strings.Fields(c.line)
		if strings.HasSuffix(c.line, " ") {
			words = append(words, "")
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = shQuote(w)
		}
		prog := fmt.Sprintf("source %s\nCOMP_WORDS=(%s); COMP_CWORD=%d\n_interlock\nprintf '%%s\\n' \"${COMPREPLY[@]}\" | sort | xargs",
			shQuote(file), strings.Join(quoted, " "), len(words)-1)
		out, err := exec.Command("bash", "-c", prog).CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != c.want {
			t.Errorf("bash completes %q to %q (err %v), want %q", c.line, got, err, c.want)
		}
	}
}

func TestFishCompletionCompletes(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish not installed")
	}
	_, script, _ := run(t, "completion", "fish")
	file := write(t, t.TempDir(), "interlock.fish", script)
	for _, c := range completes {
		out, err := exec.Command("fish", "--no-config", "-c", fmt.Sprintf("source %s; complete -C %s", fishQuote(file), fishQuote(c.line))).CombinedOutput()
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			got = append(got, strings.SplitN(l, "\t", 2)[0]) // the candidate, not its description
		}
		sort.Strings(got)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("fish completes %q to %q (err %v), want %q", c.line, got, err, c.want)
		}
	}
}

// A command line a command cannot use says what is wrong and shows that
// command's help, whichever command it is.
func TestUsageErrorsShowTheCommandsHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explain"}, "interlock explain: want one PIPELINE\n\n"},
		{[]string{"rerun", "orders"}, "interlock rerun: want PIPELINE and --period\n\n"},
		{[]string{"help", "a", "b"}, "interlock help: at most one COMMAND\n\n"},
	} {
		code, _, errOut := run(t, tc.args...)
		if code != ExitUsage || !strings.HasPrefix(errOut, tc.want) || !strings.Contains(errOut, "\nUsage:\n  interlock "+tc.args[0]+" ") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d, %q then the command's help", tc.args, code, errOut, ExitUsage, tc.want)
		}
	}
}
