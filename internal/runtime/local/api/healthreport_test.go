package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/store"
)

// brokenYAML has an error on its line 4 (an unknown check).
const brokenYAML = `
pipeline: {id: broken, owner: sales}
schedule: {cron: "0 6 * * *"}
validation: {rules: [{key: landed, check: nosuchcheck}]}
job: {type: glue, config: {jobName: broken}}
`

// GET /v1/health: the watchdog's last pass (late when it never ran or
// stopped), its degraded checks, the sinks and dead letters, and the
// refused files with file:line — the report the health page renders.
func TestHealthReport(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	ctx := context.Background()
	_, applyErr := f.eng.ApplyConfig(ctx, "pipelines/broken.yaml", []byte(brokenYAML))
	if applyErr == nil {
		t.Fatal("the broken pipeline loaded")
	}
	dl := alert.DeadLetter{Sink: "ops-slack", EventID: "e1", Error: "channel_not_found"}
	health := &api.Health{
		Engine: f.eng, Settings: pipeline.DefaultSettings(),
		Sinks: func(context.Context) ([]alert.SinkStatus, error) {
			return []alert.SinkStatus{{Sink: "ops-slack", Configured: true, Backlog: 3, DeadLetters: 1, LastDeadLetter: &dl}}, nil
		},
		DeadLetters: func(context.Context) ([]alert.DeadLetter, error) { return []alert.DeadLetter{dl}, nil },
		Refused: func() []api.RefusedConfig {
			return []api.RefusedConfig{api.RefusalOf("pipelines/broken.yaml", applyErr)}
		},
	}
	h, err := api.New(api.Options{Engine: f.eng, Tokens: testTokens(), Health: health})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	get := func() api.HealthReport {
		t.Helper()
		return want[api.HealthReport](t, f.do(t, "GET", "/v1/health", readerSecret, ""), http.StatusOK)
	}

	rep := get()
	if rep.Watchdog.LastPass != nil || !rep.Watchdog.Late || rep.Watchdog.Interval != "5m0s" {
		t.Errorf("before any pass: %+v; want no last pass, late, interval 5m0s", rep.Watchdog)
	}
	if len(rep.Sinks) != 1 || rep.Sinks[0].Backlog != 3 || len(rep.DeadLetters) != 1 || rep.DeadLetters[0].Error != "channel_not_found" {
		t.Errorf("sinks %+v, dead letters %+v", rep.Sinks, rep.DeadLetters)
	}
	if len(rep.RefusedConfigs) != 1 {
		t.Fatalf("refused %+v, want broken.yaml", rep.RefusedConfigs)
	}
	rc := rep.RefusedConfigs[0]
	if rc.File != "pipelines/broken.yaml" || len(rc.Errors) == 0 || rc.Errors[0].Line != 4 || rc.Errors[0].File != "pipelines/broken.yaml" || rc.Errors[0].Msg == "" {
		t.Errorf("refusal %+v, want broken.yaml with an error on line 4", rc)
	}

	if _, err := f.eng.WatchdogPass(ctx, 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	rep = get()
	if rep.Watchdog.LastPass == nil || !rep.Watchdog.LastPass.Equal(t0) || rep.Watchdog.Late || len(rep.Watchdog.Degraded) != 0 {
		t.Errorf("after a pass: %+v; want last pass %v, not late, not degraded", rep.Watchdog, t0)
	}
	// Three intervals without a pass are fine; a moment more is late.
	f.clk.Advance(15 * time.Minute)
	if rep = get(); rep.Watchdog.Late {
		t.Errorf("15m after the pass (three intervals): late")
	}
	f.clk.Advance(time.Second)
	if rep = get(); !rep.Watchdog.Late {
		t.Errorf("15m01s after the pass: not late")
	}

	// A degraded pass, as recordPass leaves it.
	at := f.clk.Now()
	if err := f.st.Commit(ctx, store.Change{Markers: []store.MarkerWrite{
		{Marker: store.Marker{Kind: run.MarkerWatchdogPass, At: at, Detail: run.Detail("findings", 2, "failed", "stale-runs, sla-scheduling")}},
		{Marker: store.Marker{Kind: run.MarkerWatchdogDegraded, At: at.Add(-time.Minute), Detail: run.Detail("failed", "stale-runs, sla-scheduling")}},
	}}); err != nil {
		t.Fatal(err)
	}
	rep = get()
	if w := rep.Watchdog; w.Findings != 2 || len(w.Degraded) != 2 || w.Degraded[0] != "stale-runs" || w.Degraded[1] != "sla-scheduling" ||
		w.DegradedSince == nil || !w.DegradedSince.Equal(at.Add(-time.Minute)) {
		t.Errorf("degraded pass: %+v; want 2 findings, stale-runs and sla-scheduling degraded since %v", w, at.Add(-time.Minute))
	}

	// Readers may read it; nobody else.
	wantError(t, f.do(t, "GET", "/v1/health", "", ""), http.StatusUnauthorized, "unauthorized")
	wantError(t, f.do(t, "GET", "/v1/health?x=1", readerSecret, ""), http.StatusBadRequest, "bad_request")
}

// A file refused for a reason outside its own text (a second file with
// the same pipeline id) is one error naming the file.
func TestRefusalOfAPlainError(t *testing.T) {
	rc := api.RefusalOf("b.yaml", errString("b.yaml: pipeline.id: pipeline \"x\" is already defined in a.yaml"))
	if len(rc.Errors) != 1 || rc.Errors[0].File != "b.yaml" || rc.Errors[0].Msg != `pipeline.id: pipeline "x" is already defined in a.yaml` {
		t.Fatalf("%+v", rc)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
