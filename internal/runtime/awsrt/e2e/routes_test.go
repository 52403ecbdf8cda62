package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/testenv/sfnlocal"
)

// TestInfoRouteOnAWS: a stored alert config's route asking for an info
// type (types: [JOB_TRIGGERED]) gets its post on the AWS wiring — the
// bus's alert rule forwards every Interlock event, and the dispatcher
// routes it — while its default route (the world's channel, stored as a
// route of its own) posts what the local default route posts (check).
func TestInfoRouteOnAWS(t *testing.T) {
	path := filepath.Join(sfnlocal.RepoRoot(t), "testdata", "scenarios", "shared", "03-retry-then-success.yaml")
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, w := playOnAWS(t, sc, `alerts:
  - {type: slack, channel: `+slackChannel+`, tokenEnv: `+alertTokenEnv+`}
  - {type: slack, channel: C0STARTS, tokenEnv: `+alertTokenEnv+`, match: {types: [JOB_TRIGGERED]}}
`)
	triggered := 0
	for _, e := range evs {
		if e.Type == event.JobTriggered {
			triggered++
		}
	}
	var starts []string
	for _, p := range w.slack.Posts() {
		if p.Channel == "C0STARTS" {
			starts = append(starts, p.Text)
		}
	}
	if triggered == 0 || len(starts) != triggered {
		t.Fatalf("C0STARTS got %d posts %q, want one per JOB_TRIGGERED (%d)", len(starts), starts, triggered)
	}
	for _, s := range starts {
		if !strings.Contains(s, "JOB_TRIGGERED") {
			t.Errorf("C0STARTS post %q is not a JOB_TRIGGERED", s)
		}
	}
}
