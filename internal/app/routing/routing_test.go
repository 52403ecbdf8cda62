package routing_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/app/routing"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
)

const settings = `
alerts:
  - {type: slack, channel: C0123, tokenEnv: SLACK_BOT_TOKEN, match: {types: [SLA_BREACH, JOB_FAILED]}}
  - {type: webhook, url: "https://hooks.example.com/interlock/T0K3N-secret-path", secretEnv: HOOK_SECRET}
  - {type: console, match: {pipelines: ["gold-*"], levels: [error]}}
  - {type: file, path: alerts.jsonl}
  - {type: console}
`

func parse(t *testing.T, doc string) []pipeline.Alert {
	t.Helper()
	s, err := pipeline.ParseSettings("interlock.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s.Alerts
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestBuild(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	rs, err := routing.Build(parse(t, settings), routing.Options{
		LookupEnv: env(map[string]string{"SLACK_BOT_TOKEN": "xoxb-secret", "HOOK_SECRET": "whsec-secret"}),
		Path:      func(p string) string { return filepath.Join(dir, p) },
		Console:   &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var names []string
	for _, r := range rs {
		names = append(names, r.Sink.Name())
	}
	want := []string{"slack:C0123", "", "console", "file:alerts.jsonl", "console#2"}
	for i := range want {
		if want[i] != "" && names[i] != want[i] {
			t.Errorf("sink %d named %q, want %q", i, names[i], want[i])
		}
	}
	if !strings.HasPrefix(names[1], "webhook:hooks.example.com#") || strings.Contains(names[1], "T0K3N") {
		t.Errorf("webhook sink named %q: want host and hash, no path", names[1])
	}
	if !slices.Equal(rs[0].Match.Types, []event.Type{event.SLABreach, event.JobFailed}) ||
		!slices.Equal(rs[2].Match.Pipelines, []string{"gold-*"}) || !slices.Equal(rs[2].Match.Levels, []event.Level{event.LevelError}) ||
		!rs[1].Match.Default() || !rs[4].Match.Default() {
		t.Errorf("matches: %+v", rs)
	}
	if _, err := os.Stat(filepath.Join(dir, "alerts.jsonl")); err != nil {
		t.Errorf("the file sink did not create its file at start: %v", err)
	}
	e := event.Event{ID: "x", Type: event.JobFailed, PipelineID: "gold-orders", Date: "2026-03-07", Message: "boom"}
	if _, err := rs[2].Sink.Deliver(t.Context(), alert.NewAlert(e, rs[2].Sink.Name())); err != nil || out.String() != "ERROR gold-orders 2026-03-07 JOB_FAILED boom\n" {
		t.Errorf("console wrote %q, err %v", out.String(), err)
	}
}

// Every broken entry is reported at once, naming the entry and where the
// secret should come from, never a secret; nothing stays open.
func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	doc := `
alerts:
  - {type: file, path: ok.jsonl}
  - {type: slack, channel: C0123, tokenEnv: SLACK_BOT_TOKEN}
  - {type: slack, channel: C0456, tokenFile: missing-token}
  - {type: webhook, url: "https://hooks.example.com/h", secretEnv: HOOK_SECRET}
  - {type: file, path: no-such-dir/alerts.jsonl}
`
	_, err := routing.Build(parse(t, doc), routing.Options{
		LookupEnv: env(map[string]string{"HOOK_SECRET": "   "}),
		Path:      func(p string) string { return filepath.Join(dir, p) },
	})
	if err == nil {
		t.Fatal("Build succeeded")
	}
	for _, want := range []string{
		"alerts[1] (slack): slack: channel C0123: bot token: environment variable SLACK_BOT_TOKEN is not set",
		"alerts[2] (slack): slack: channel C0456: bot token: read secret file " + filepath.Join(dir, "missing-token"),
		"alerts[3] (webhook): webhook https://hooks.example.com/…: signing secret: environment variable HOOK_SECRET is empty",
		"alerts[4] (file): file sink: open " + filepath.Join(dir, "no-such-dir/alerts.jsonl"),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error\n%v\ndoes not say\n%s", err, want)
		}
	}
	if strings.Contains(err.Error(), "alerts[0]") {
		t.Errorf("the valid entry is reported: %v", err)
	}
}
