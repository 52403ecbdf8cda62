package engine_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/command"
)

// TestCommandOutputInEventsAndExplain runs real programs through the
// engine: the end of what a command printed, redacted, is in its
// JOB_FAILED and JOB_COMPLETED detail and in explain.
func TestCommandOutputInEventsAndExplain(t *testing.T) {
	const secret = "s3cr3t-db-password"
	env := func(name string) (string, bool) { return secret, name == "INTERLOCK_DB_PASSWORD" }
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "e.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	eng := engine.New(engine.Options{Store: st, Clock: clock.NewVirtual(t0), LookupEnv: env,
		Jobs: trigger.Registry{"command": command.Runner{LookupEnv: env}}})
	if err := eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{
		// Fails twice (one code retry), printing its run id (which
		// names the attempt) and the password it was given.
		"failing.yaml": `
pipeline: {id: failing}
schedule: {trigger: {key: k, check: exists}}
job:
  type: command
  config: {command: [/bin/sh, -c, 'echo "run $1 with $2"; echo "connection refused" >&2; exit 3', sh, "${RUN_ID}", "${env:INTERLOCK_DB_PASSWORD}"]}
  maxCodeRetries: 1
`,
		"passing.yaml": `
pipeline: {id: passing}
schedule: {trigger: {key: k, check: exists}}
job: {type: command, config: {command: [/bin/echo, "wrote 42 rows"]}}
`,
		"silent.yaml": `
pipeline: {id: silent}
schedule: {trigger: {key: k, check: exists}}
job: {type: command, config: {command: [/bin/true]}}
`,
	} {
		if _, err := eng.ApplyConfig(t.Context(), name, []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"failing", "passing", "silent"} {
		if _, err := eng.PutSensor(t.Context(), p, "k", obj("n", 1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	events := func(p string, typ event.Type) []event.Event {
		t.Helper()
		evsPage, err := st.EventList(t.Context(), store.EventListParams{PipelineID: p, Types: []event.Type{typ}})
		evs := evsPage.Events
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	output := func(ev event.Event) string {
		v, _ := ev.Detail.Get("output")
		s, _ := v.Str()
		return s
	}

	failed := events("failing", event.JobFailed)
	if len(failed) != 2 {
		t.Fatalf("JOB_FAILED: %d events, want 2", len(failed))
	}
	for i, ev := range failed {
		want := fmt.Sprintf("[stdout]\nrun failing-stream-2026-03-10-g0-a%d with [redacted]\n[stderr]\nconnection refused", i+1)
		if got := output(ev); got != want {
			t.Fatalf("JOB_FAILED %d output = %q, want %q", i+1, got, want)
		}
	}
	if got := output(events("passing", event.JobCompleted)[0]); got != "[stdout]\nwrote 42 rows" {
		t.Fatalf("JOB_COMPLETED output = %q", got)
	}
	if _, ok := events("silent", event.JobCompleted)[0].Detail.Get("output"); ok {
		t.Fatal("a job that printed nothing has an output field")
	}

	// explain shows the last attempt's output.
	x, err := eng.Explain(t.Context(), "failing", "2026-03-10")
	if err != nil {
		t.Fatal(err)
	}
	if x.Run == nil || x.Run.LastOutput == nil {
		t.Fatalf("explain: no last output: %+v", x.Run)
	}
	if o := x.Run.LastOutput; o.Event != event.JobFailed || o.Attempt != 2 || o.Output != output(failed[1]) {
		t.Fatalf("explain last output = %+v", o)
	}
	if x, err := eng.Explain(t.Context(), "passing", "2026-03-10"); err != nil || x.Run.LastOutput == nil || x.Run.LastOutput.Event != event.JobCompleted || x.Run.LastOutput.Output != "[stdout]\nwrote 42 rows" {
		t.Fatalf("explain passing: %+v, %v", x.Run, err)
	}
	if x, err := eng.Explain(t.Context(), "silent", "2026-03-10"); err != nil || x.Run.LastOutput != nil {
		t.Fatalf("explain silent: %+v, %v", x.Run, err)
	}

	// The secret is nowhere in the event log or the explanation.
	allPage, err := st.EventList(t.Context(), store.EventListParams{})
	all := allPage.Events
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(all)
	xb, _ := json.Marshal(x)
	if strings.Contains(string(b), secret) || strings.Contains(string(xb), secret) {
		t.Fatal("the secret shows in the events or the explanation")
	}
}
