package command

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

// request builds a request from a command job's config, loaded the way a
// pipeline file is, so the test uses the real schema.
func request(t *testing.T, config string) trigger.Request {
	t.Helper()
	req, err := parseRequest(config)
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	return req
}

// requestFor is request for a process with no test to fail (see
// fakeServe); a config that does not load panics.
func requestFor(config string) trigger.Request {
	req, err := parseRequest(config)
	if err != nil {
		panic(err)
	}
	return req
}

func parseRequest(config string) (trigger.Request, error) {
	doc := "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: command, config: " + config + "}\n"
	p, err := pipeline.ParsePipeline("p.yaml", []byte(doc), pipeline.Options{})
	if err != nil {
		return trigger.Request{}, err
	}
	return trigger.Request{PipelineID: "p", Type: "command", Config: p.Job.Config,
		Vars: pipeline.TemplateVars{Pipeline: "p", Schedule: "stream", Date: "2026-03-10", RunID: "r1"}}, nil
}

func TestCommandResults(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	env := func(name string) (string, bool) {
		if name == "INTERLOCK_GREETING" {
			return "hello", true
		}
		return "", false
	}
	cases := []struct {
		name     string
		config   string
		status   trigger.Status
		category run.Category
		msg      string
	}{
		{"success", `{command: [/bin/true]}`, trigger.StatusSucceeded, "", ""},
		{"non-zero exit is a permanent failure", `{command: [/bin/sh, -c, "echo boom >&2; exit 3"]}`, trigger.StatusFailed, run.Permanent, "exited with status 3: boom"},
		{"timeout", `{command: [/bin/sleep, "5"], timeout: 100ms}`, trigger.StatusFailed, run.Timeout, "timed out after 100ms"},
		{"templates and env are expanded, no shell", `{command: [/bin/sh, -c, "echo \"$1 $GREETING\" > ` + out + `", x, "${DATE}"], env: {GREETING: "${env:INTERLOCK_GREETING}"}}`, trigger.StatusSucceeded, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := Runner{LookupEnv: env}.Start(context.Background(), request(t, c.config))
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			if st.Result == nil || st.Result.Status != c.status || st.Result.Category != c.category || !strings.Contains(st.Result.Message, c.msg) {
				t.Fatalf("result %+v", st.Result)
			}
		})
	}
	got, err := os.ReadFile(out)
	if err != nil || strings.TrimSpace(string(got)) != "2026-03-10 hello" {
		t.Fatalf("expanded output = %q, %v", got, err)
	}
}

func TestCommandThatCannotStartIsAnInfrastructureError(t *testing.T) {
	_, err := Runner{}.Start(context.Background(), request(t, `{command: [/nonexistent/etl]}`))
	if err == nil || !strings.Contains(err.Error(), "cannot run /nonexistent/etl") {
		t.Fatalf("err = %v", err)
	}
}

func TestUnsetEnvIsAnErrorNotAnEmptyString(t *testing.T) {
	_, err := Runner{LookupEnv: func(string) (string, bool) { return "", false }}.Start(context.Background(), request(t, `{command: [/bin/echo, "${env:INTERLOCK_MISSING}"]}`))
	if err == nil || !strings.Contains(err.Error(), "INTERLOCK_MISSING") {
		t.Fatalf("err = %v", err)
	}
}

func TestGuardRefusesDryRun(t *testing.T) {
	g := trigger.Guard{Next: Runner{}}
	req := request(t, `{command: [/bin/true]}`)
	req.DryRun = true
	if _, err := g.Start(context.Background(), req); err != trigger.ErrDryRun {
		t.Fatalf("err = %v", err)
	}
}
