package e2e_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestSilenceCommandsAgainstServe drives `interlock silence add|list|expire`
// through the built binary against a real serve: a silence on JOB_TRIGGERED
// of gold keeps that event from the console sink (serve's log says it was
// silenced), `events` shows it marked, and expire ends it.
func TestSilenceCommandsAgainstServe(t *testing.T) {
	t.Parallel()
	airflow := newFakeAirflow(t)
	airflow.set("success")
	dir := t.TempDir()
	write := projectWriter(t, dir)
	write("interlock.yaml", `store: sqlite:./state.db
pipelines: ./pipelines
watchdog: {interval: 1h}
triggers: {allowAddresses: [127.0.0.1/32]}
alerts: [{type: console, match: {types: [JOB_TRIGGERED, JOB_COMPLETED]}}]
maintenance:
  - {name: sunday-vacuum, cron: "0 3 * * 0", duration: 2h, timezone: Europe/Berlin, owners: [analytics], comment: warehouse vacuum}
`)
	write("pipelines/gold.yaml", fmt.Sprintf(`pipeline: {id: gold, owner: analytics}
schedule:
  trigger: {key: upstream, check: exists}
validation:
  rules: [{key: upstream, check: exists}]
job:
  type: airflow
  config: {url: %q, dagId: gold}
  pollInterval: 1s
`, airflow.URL))
	srv := start(t, dir, nil)
	defer srv.stop(t)
	api := []string{"--server", srv.url}
	run := func(want int, args ...string) string {
		t.Helper()
		return mustCLI(t, dir, want, append(args, api...)...)
	}

	// Refused before anything is sent: no matcher, no end, two ends, a
	// flag of another verb.
	for _, args := range [][]string{
		{"silence", "add", "--duration", "2h"},
		{"silence", "add", "--pipeline", "gold"},
		{"silence", "add", "--pipeline", "gold", "--duration", "2h", "--until", "2099-01-01T00:00:00Z"},
		{"silence", "list", "--pipeline", "gold"},
		{"silence", "expire", "--all", "x"},
		{"silence", "mute"},
	} {
		if code, _, errOut := cli(t, dir, append(args, api...)...); code != 2 || errOut == "" {
			t.Errorf("interlock %s: exit %d, want 2 with a message: %s", strings.Join(args, " "), code, errOut)
		}
	}
	// Refused by the server, naming the field.
	if code, _, errOut := cli(t, dir, append([]string{"silence", "add", "--pipeline", "gold", "--until", "2020-01-01T00:00:00Z"}, api...)...); code != 1 || !strings.Contains(errOut, "until") {
		t.Fatalf("silence add with an end in the past: exit %d: %s", code, errOut)
	}
	if code, _, errOut := cli(t, dir, append([]string{"silence", "add", "--type", "SLA_BRAECH", "--duration", "1h"}, api...)...); code != 1 || !strings.Contains(errOut, "types[0]") {
		t.Fatalf("silence add with an unknown type: exit %d: %s", code, errOut)
	}

	out := run(0, "silence", "add", "--pipeline", "gold", "--type", "JOB_TRIGGERED", "--duration", "2h", "--comment", "e2e: quiet triggers")
	m := regexp.MustCompile(`^silence (\S+) until (\S+)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("silence add printed %q", out)
	}
	id := m[1]
	list := run(0, "silence", "list")
	if !regexpLine(list, `^`+regexp.QuoteMeta(id)+`\s+active\s.*pipeline=gold type=JOB_TRIGGERED\s+e2e: quiet triggers$`) {
		t.Fatalf("silence list does not show %s active:\n%s", id, list)
	}
	js := decode[struct {
		Silences []struct {
			ID     string `json:"id"`
			Active bool   `json:"active"`
		} `json:"silences"`
	}](t, "silence list --output json", run(0, "silence", "list", "--output", "json"))
	if len(js.Silences) != 1 || js.Silences[0].ID != id || !js.Silences[0].Active {
		t.Fatalf("silence list --output json: %+v", js)
	}

	// The job runs; its JOB_TRIGGERED is stored, shown marked, and not
	// sent to the console sink; JOB_COMPLETED is sent.
	run(0, "sensor", "put", "gold", "upstream", `{}`)
	eventually(t, "JOB_COMPLETED", func() bool { return strings.Contains(run(0, "events", "--pipeline", "gold"), "JOB_COMPLETED") })
	var triggered string
	for _, l := range strings.Split(run(0, "events", "--pipeline", "gold", "--output", "json"), "\n") {
		if strings.Contains(l, `"JOB_TRIGGERED"`) {
			triggered = l
		}
	}
	if !strings.Contains(triggered, `"silencedBy":"`+id+`"`) {
		t.Fatalf("events --output json: JOB_TRIGGERED is not marked silenced by %s: %s", id, triggered)
	}
	if table := run(0, "events", "--pipeline", "gold"); !regexpLine(table, `JOB_TRIGGERED .*\[silenced by `+regexp.QuoteMeta(id)+`\]$`) {
		t.Fatalf("events does not mark JOB_TRIGGERED silenced:\n%s", table)
	}
	silencedLine := regexp.MustCompile(`alert silenced.*JOB_TRIGGERED.*silence=` + regexp.QuoteMeta(id))
	eventually(t, "serve's log to say the alert was silenced", func() bool { return silencedLine.MatchString(srv.out.String()) })
	deliveredLine := regexp.MustCompile(`alert delivered.*JOB_COMPLETED`)
	eventually(t, "JOB_COMPLETED delivered to the console", func() bool { return deliveredLine.MatchString(srv.out.String()) })
	if regexp.MustCompile(`alert delivered.*JOB_TRIGGERED`).MatchString(srv.out.String()) {
		t.Fatal("the silenced JOB_TRIGGERED was delivered")
	}

	// expire ends it now; it is listed ended, and an unknown id is an error.
	if out := run(0, "silence", "expire", id); !strings.HasPrefix(out, "silence "+id+" ended at ") {
		t.Fatalf("silence expire printed %q", out)
	}
	if list := run(0, "silence", "list", "--all"); !regexpLine(list, `^`+regexp.QuoteMeta(id)+`\s+ended\s`) {
		t.Fatalf("silence list --all does not show %s ended:\n%s", id, list)
	}
	if code, _, errOut := cli(t, dir, append([]string{"silence", "expire", "nope"}, api...)...); code != 1 || !strings.Contains(errOut, "unknown silence") {
		t.Fatalf("silence expire nope: exit %d: %s", code, errOut)
	}
	if out := run(0, "events", "--type", "SILENCE_EXPIRED"); !strings.Contains(out, id) {
		t.Fatalf("no SILENCE_EXPIRED for %s:\n%s", id, out)
	}
}
