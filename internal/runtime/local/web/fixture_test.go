package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/board"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/engine/enginebench"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/runtime/local/web"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// loadedAt is when the fixture's pipelines are loaded: 05:00 UTC on
// Tuesday 2026-03-10; now is three hours later, so SLA instants between
// the two are reported (SLA alerts are forward-only).
var (
	loadedAt = time.Date(2026, 3, 10, 5, 0, 0, 0, time.UTC)
	now      = time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	today    = "2026-03-10"
)

// xssValue is what a hostile sensor, config or job sends: it must render
// as text everywhere.
const xssValue = `<script>alert(1)</script>`

// The fixture's pipelines, one per board state (the comment says which).
var fixtureDocs = map[string]string{
	// triggering: its trigger sensor is written, its rules pass.
	"orders": `
pipeline: {id: orders, owner: sales, description: order intake}
schedule:
  trigger: {key: orders-landed, check: exists}
validation:
  rules: [{key: orders-landed, check: exists}]
sla: {deadline: "10:00", expectedDuration: 30m}
job: {type: glue, config: {jobName: orders}, pollInterval: 1m}
`,
	// breached: its 07:00 deadline passed without a run.
	"late": `
pipeline: {id: late, owner: finance}
schedule:
  trigger: {key: late-landed, check: exists}
sla: {deadline: "07:00"}
job: {type: glue, config: {jobName: late}}
`,
	// failed: a run that ended FAILED_FINAL (written to the store).
	"broken": `
pipeline: {id: broken, owner: platform}
schedule:
  trigger: {key: broken-landed, check: exists}
job: {type: glue, config: {jobName: broken}}
`,
	// at-risk: warning at 07:00, breach at 09:00.
	"atrisk": `
pipeline: {id: atrisk, owner: finance}
schedule:
  trigger: {key: atrisk-landed, check: exists}
sla: {deadline: "09:00", expectedDuration: 2h}
job: {type: glue, config: {jobName: atrisk}}
`,
	// evaluating: the trigger sensor came but the rules do not pass.
	"gated": `
pipeline: {id: gated, owner: platform}
schedule:
  trigger: {key: gate, check: exists}
validation:
  rules: [{key: gate, check: gte, field: count, value: 10}]
job: {type: glue, config: {jobName: gated}}
`,
	// running: a run RUNNING (written to the store).
	"busy": `
pipeline: {id: busy, owner: platform}
schedule:
  trigger: {key: busy-landed, check: exists}
job: {type: glue, config: {jobName: busy}}
`,
	// waiting: a nightly cron in New York, no run yet.
	"nightly": `
pipeline: {id: nightly, owner: platform}
schedule: {cron: "0 6 * * *", timezone: America/New_York}
validation: {rules: [{key: landed, check: exists}]}
job: {type: glue, config: {jobName: nightly}}
`,
	// waiting, with no deadline ahead (it sorts after nightly, whose next
	// tick is ahead, though its id comes first).
	"alpha": `
pipeline: {id: alpha, owner: platform}
schedule:
  trigger: {key: alpha-landed, check: exists}
job: {type: glue, config: {jobName: alpha}}
`,
	// paused by an operator.
	"held": `
pipeline: {id: held, owner: platform}
schedule:
  trigger: {key: held-landed, check: exists}
job: {type: glue, config: {jobName: held}}
`,
	// succeeded: a run COMPLETED (written to the store).
	"done": `
pipeline: {id: done, owner: sales}
schedule:
  trigger: {key: done-landed, check: exists}
sla: {deadline: "10:00"}
job: {type: glue, config: {jobName: done}}
`,
	// breached: a relative SLA of 1h from its first trigger sensor at 05:30.
	"relsla": `
pipeline: {id: relsla, owner: finance}
schedule:
  trigger: {key: rel-landed, check: exists}
sla: {maxDuration: 1h}
job: {type: glue, config: {jobName: relsla}}
`,
	// dry-run.
	"shadow": `
pipeline: {id: shadow, owner: platform}
schedule:
  trigger: {key: shadow-landed, check: exists}
job: {type: glue, config: {jobName: shadow}}
dryRun: true
`,
	// excluded today.
	"holiday": `
pipeline: {id: holiday, owner: platform}
schedule:
  trigger: {key: holiday-landed, check: exists}
  exclude: {dates: ["2026-03-10"]}
job: {type: glue, config: {jobName: holiday}}
`,
	// waiting, with hostile text in its owner, description and sensor.
	"xss": `
pipeline: {id: xss, owner: "<i>mallory</i>", description: "<b onmouseover=alert(2)>hi</b>"}
schedule:
  trigger: {key: evil, check: equals, field: status, value: ready}
validation:
  rules: [{key: evil, check: equals, field: status, value: ready}]
job: {type: glue, config: {jobName: xss}}
`,
}

// wantStates is the board state of each fixture pipeline at now.
var wantStates = map[string]board.State{
	"orders": board.Triggering, "late": board.Breached, "relsla": board.Breached, "broken": board.Failed, "atrisk": board.AtRisk,
	"gated": board.Evaluating, "busy": board.Running, "nightly": board.Waiting, "alpha": board.Waiting, "held": board.Paused,
	"done": board.Succeeded, "shadow": board.DryRun, "holiday": board.Excluded, "xss": board.Waiting,
}

type fixture struct {
	clk *clock.Virtual
	st  store.Store
	eng *engine.Engine
	h   http.Handler
}

// Test tokens.
const (
	readerSecret = "rd-7a1c3e5b9d2f4a60aa"
	adminSecret  = "ad-2b4d6f8a0c1e3g57bb"
)

type fixtureOptions struct {
	tokens   bool // configure a reader and an admin token
	pageSize int
	docs     map[string]string // nil: fixtureDocs, with their states set up
	windows  []silence.Window  // interlock.yaml's maintenance windows
}

// newFixture starts a real engine on SQLite at loadedAt, loads the
// pipelines, moves the clock to now and brings each pipeline to its
// state through the engine where it can (sensors, pause) and by writing
// runs where only a job system could (failed, running, succeeded); then
// puts the API with the dashboard in front.
func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{clk: clock.NewVirtual(loadedAt)}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "web.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f.st = st
	log := slog.New(slog.DiscardHandler)
	f.eng = engine.New(engine.Options{Store: st, Clock: f.clk, Jobs: enginebench.NoJobs{}, Logger: log, Maintenance: fo.windows})
	if err := f.eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	docs := fo.docs
	if docs == nil {
		docs = fixtureDocs
	}
	for id, doc := range docs {
		if _, err := f.eng.ApplyConfig(ctx, id+".yaml", []byte(doc)); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	f.clk.Set(now)
	if fo.docs == nil {
		f.setUp(t)
	}
	health := &api.Health{Engine: f.eng,
		Sinks: func(context.Context) ([]alert.SinkStatus, error) {
			dl := fixtureDeadLetter()
			return []alert.SinkStatus{
				{Sink: "slack", Configured: true, Backlog: 3, DeadLetters: 1, LastDeadLetter: &dl},
				{Sink: "console", Configured: true},
			}, nil
		},
		DeadLetters: func(context.Context) ([]alert.DeadLetter, error) { return []alert.DeadLetter{fixtureDeadLetter()}, nil },
		Refused: func() []api.RefusedConfig {
			return []api.RefusedConfig{{File: "pipelines/bad.yaml", Errors: []confdec.Error{{File: "pipelines/bad.yaml", Line: 7, Path: "job.type", Msg: "unknown job type " + xssValue}}}}
		},
	}
	dash, err := web.New(web.Options{Engine: f.eng, PageSize: fo.pageSize, Health: health.Report})
	if err != nil {
		t.Fatal(err)
	}
	var tokens []api.Token
	if fo.tokens {
		tokens = []api.Token{
			{Name: "dash", Role: pipeline.RoleReader, Secret: readerSecret},
			{Name: "ops", Role: pipeline.RoleAdmin, Secret: adminSecret},
		}
	}
	h, err := api.New(api.Options{Engine: f.eng, Tokens: tokens, Logger: log, Dashboard: dash})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	return f
}

func fixtureDeadLetter() alert.DeadLetter {
	return alert.DeadLetter{Sink: "slack", EventID: "ev-broken-1", Type: event.JobFailed, PipelineID: "broken", Period: today,
		EventTime: now.Add(-time.Hour), Attempts: 8, Error: "slack: channel_not_found " + xssValue, At: now.Add(-30 * time.Minute)}
}

func obj(t testing.TB, js string) sensor.Object {
	t.Helper()
	o, err := sensor.ParseBody([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (f *fixture) setUp(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	put := func(id, key, js string) {
		if _, err := f.eng.PutSensor(ctx, id, key, obj(t, js)); err != nil {
			t.Fatalf("sensor %s/%s: %v", id, key, err)
		}
	}
	f.clk.Set(loadedAt.Add(30 * time.Minute))
	put("relsla", "rel-landed", `{"rows": 1}`)
	f.clk.Set(now)
	put("orders", "orders-landed", `{"rows": 10}`)
	put("gated", "gate", `{"count": 1}`)
	put("xss", "evil", `{"status": "`+strings.ReplaceAll(xssValue, `"`, `\"`)+`"}`)
	if err := f.eng.Pause(ctx, "held", time.Time{}, "test"); err != nil {
		t.Fatal(err)
	}
	f.writeRun(t, "broken", run.FailedFinal, run.OutcomeRetriesExhausted, now.Add(-time.Hour))
	f.writeRun(t, "busy", run.Running, "", time.Time{})
	f.writeRun(t, "done", run.Completed, run.OutcomeSucceeded, now.Add(-30*time.Minute))
	f.commit(t, store.Change{Events: []event.Event{{
		ID: "ev-broken-1", Time: now.Add(-time.Hour), Type: event.JobFailed, PipelineID: "broken", ScheduleID: "stream", Date: today,
		Message: "job failed: " + xssValue,
	}}})
}

func (f *fixture) commit(t testing.TB, c store.Change) {
	t.Helper()
	if err := f.st.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// writeRun writes the current period's run of a trigger-only pipeline.
func (f *fixture) writeRun(t testing.TB, id string, st run.State, out run.Outcome, ended time.Time) {
	t.Helper()
	r := run.Run{Key: run.Key{PipelineID: id, ScheduleID: pipeline.ScheduleStream, Period: today}, State: st, Outcome: out, Cause: run.CauseSensor,
		Attempt: 1, CreatedAt: now.Add(-2 * time.Hour), UpdatedAt: now.Add(-time.Hour), StateSince: now.Add(-time.Hour), EndedAt: ended, JobRunID: "jr-" + id}
	if !st.Terminal() {
		r.ExpiresAt = now.Add(24 * time.Hour)
		r.PollDeadline = now.Add(time.Hour)
	}
	f.commit(t, store.Change{Runs: []store.RunWrite{{Run: r}}})
}

// get sends a GET; token "" sends none.
func (f *fixture) get(t testing.TB, target, token string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

// page GETs an HTML page and checks its status.
func (f *fixture) page(t testing.TB, target string, status int) string {
	t.Helper()
	rec := f.get(t, target, "")
	if rec.Code != status {
		t.Fatalf("GET %s: status %d, want %d; body %s", target, rec.Code, status, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("GET %s: Content-Type %q", target, ct)
	}
	return rec.Body.String()
}

var rowRE = regexp.MustCompile(`<tr class="row" id="row-[^"]*" data-pipeline="([^"]*)" data-state="([^"]*)"[^>]*>`)

// rows returns the overview rows in order: pipeline and state.
func rows(body string) [][2]string {
	var out [][2]string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, [2]string{m[1], m[2]})
	}
	return out
}

func rowIDs(body string) []string {
	var out []string
	for _, r := range rows(body) {
		out = append(out, r[0])
	}
	return out
}
