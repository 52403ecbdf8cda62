package awsrt

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/alert/webhook"
	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
)

// storeAlertConfig stores interlock.yaml's alerts: and maintenance: as
// deploy-config does (app.AlertConfigOf, then a new version).
func storeAlertConfig(t *testing.T, st *ddbstore.Store, yaml string) {
	t.Helper()
	y, _, err := app.AlertConfigOf("interlock.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := app.StoreAlertConfig(t.Context(), st, "interlock.yaml", y, t0); err != nil {
		t.Fatal(err)
	}
}

// storedDispatcher is the dispatcher DispatcherFromEnv builds: its routes
// the stored alert config's (no ALERTS_CONFIG, no SLACK_CHANNEL_ID).
func storedDispatcher(t *testing.T, st *ddbstore.Store, fake *slacktest.Server, clk clock.Clock) *Dispatcher {
	t.Helper()
	lookup := func(k string) (string, bool) {
		if k == "TEST_SLACK_TOKEN" {
			return slackToken, true
		}
		return "", false
	}
	d, err := NewDispatcher(DispatcherConfig{Store: st, Settings: (&app.StoredAlertConfig{Store: st}).Settings, LookupEnv: lookup,
		APIURL: fake.APIURL(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDispatcherRoutesByTheStoredAlertConfig: the routes are the stored
// alert config's, read at each invocation. An info route (level info)
// gets the JOB_TRIGGERED the bus forwards — every Interlock event reaches
// the queue — and the error route its errors; once a new version drops
// the info route and adds a window, the same warm dispatcher posts no
// info and holds back what the window covers.
func TestDispatcherRoutesByTheStoredAlertConfig(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	p := newBusPath(t)
	st := newDDBEnv(t, 0).store
	storeAlertConfig(t, st, `server: {addr: "127.0.0.1:7070"}
alerts:
  - {type: slack, channel: C0INFO, tokenEnv: TEST_SLACK_TOKEN, match: {levels: [info]}}
  - {type: slack, channel: C0ERRORS, tokenEnv: TEST_SLACK_TOKEN, match: {levels: [error]}}
`)
	clk := clock.NewVirtual(t0)
	m := mapped(p, storedDispatcher(t, st, fake, clk))
	p.publish(t, append([]event.Event{ev("ev-0", event.JobTriggered, t0.Add(30*time.Minute), nil)}, slaEvents()...)...)
	drain(t, m)
	got := postsBy(fake)
	if len(got["C0INFO"]) != 1 || !strings.Contains(got["C0INFO"][0], "JOB_TRIGGERED") {
		t.Errorf("C0INFO got %q, want the JOB_TRIGGERED", got["C0INFO"])
	}
	if want := []string{"SLA_BREACH", "JOB_FAILED"}; !slices.Equal(typesIn(got["C0ERRORS"]), want) {
		t.Errorf("C0ERRORS got %q, want %v", got["C0ERRORS"], want)
	}

	// v2: no info route; the errors route and a window over the orders
	// pipeline's morning.
	storeAlertConfig(t, st, `alerts:
  - {type: slack, channel: C0ERRORS, tokenEnv: TEST_SLACK_TOKEN, match: {levels: [error]}}
maintenance:
  - {name: morning, cron: "0 6 * * *", duration: 3h, pipelines: [orders]}
`)
	before := len(fake.Posts())
	late := ev("ev-4", event.JobTriggered, t0.Add(4*time.Hour), nil)
	held := ev("ev-5", event.JobFailed, t0.Add(25*time.Hour), nil) // 07:00, in the window
	held.Date = "2099-03-08"
	out := ev("ev-6", event.JobFailed, t0.Add(28*time.Hour), nil) // 10:00, after it
	out.Date = "2099-03-09"
	p.publish(t, late, held, out)
	drain(t, m)
	posts := fake.Posts()[before:]
	if len(posts) != 1 || posts[0].Channel != "C0ERRORS" || !strings.Contains(posts[0].Text, "JOB_FAILED") {
		t.Errorf("after v2: posts %+v, want only the job failure after the window, to C0ERRORS", posts)
	}
}

// TestFailingSinkShowsInTheControlPlanesHealth: a webhook that answers
// 500 is recorded by the dispatcher as failing (since its first failed
// attempt, how many, the last error), which the control plane's
// /v1/health reads back from the tables, the stored routes' sinks listed
// as configured; once the webhook takes the redelivered alert, its last
// success is recorded and the failing run is over.
func TestFailingSinkShowsInTheControlPlanesHealth(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	hook := newHookReceiver(t, 2)
	p := newBusPath(t)
	st := newDDBEnv(t, 0).store
	storeAlertConfig(t, st, `alerts:
  - {type: slack, channel: C0ERRORS, tokenEnv: TEST_SLACK_TOKEN, match: {levels: [error]}}
  - {type: webhook, url: "`+hook.URL+`", match: {levels: [error]}}
`)
	m := mapped(p, storedDispatcher(t, st, fake, clock.NewVirtual(t0)))
	p.publish(t, ev("ev-3", event.JobFailed, t0.Add(3*time.Hour), nil))

	a, err := app.OpenControlPlane(t.Context(), st, "dynamodb://test", app.Options{Clock: clock.NewVirtual(t0.Add(4 * time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	h, err := local.ControlPlaneHandler(t.Context(), a, []api.Token{{Name: "viewer", Role: pipeline.RoleReader, Secret: "reader-token-0123456789"}})
	if err != nil {
		t.Fatal(err)
	}
	health := func() map[string]alert.SinkStatus {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/v1/health", nil)
		req.Header.Set("Authorization", "Bearer reader-token-0123456789")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /v1/health: %d %s", rec.Code, rec.Body)
		}
		var rep api.HealthReport
		if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		out := map[string]alert.SinkStatus{}
		for _, s := range rep.Sinks {
			out[s.Sink] = s
		}
		return out
	}
	hookName := webhook.Name(hook.URL)

	// Two receives, the webhook failing both.
	for range 2 {
		if _, err := m.Poll(t.Context()); err != nil {
			t.Fatal(err)
		}
		p.sqs.Advance(time.Minute)
	}
	sinks := health()
	s, ok := sinks[hookName]
	switch {
	case !ok:
		t.Fatalf("no webhook sink in /v1/health: %+v", sinks)
	case !s.Configured || s.Failing == nil || s.Failing.Attempts != 2 || !strings.Contains(s.Failing.LastError, "500") || s.LastSuccess != nil:
		t.Errorf("webhook sink %+v (failing %+v): want configured, failing after 2 attempts with the 500", s, s.Failing)
	}
	if slackSink := sinks["slack:C0ERRORS"]; !slackSink.Configured || slackSink.Failing != nil || slackSink.LastSuccess == nil {
		t.Errorf("slack sink %+v: want configured, its delivery recorded", slackSink)
	}

	drain(t, m)
	if s := health()[hookName]; s.Failing != nil || s.LastSuccess == nil {
		t.Errorf("after the webhook took it: %+v (failing %+v), want a last success and no failing run", s, s.Failing)
	}
	if n := len(fake.Posts()); n != 1 {
		t.Errorf("%d Slack posts, want 1 (the redeliveries skip the sink that took it)", n)
	}
}

// TestSLAMonitorArmsTheStoredWindowsEnds: storing an alert config (as
// deploy-config does) reaches the sla-monitor through the control
// table's stream, which arms each window's end timer — realised as its
// Scheduler schedule — and a new version with another cron moves it.
func TestSLAMonitorArmsTheStoredWindowsEnds(t *testing.T) {
	env := newMonitorEnv(t, t0.Add(-time.Hour)) // 05:00
	eng := engine.New(engine.Options{Store: env.store, Clock: env.clk, Jobs: noJobs{}, Passive: true,
		MaintenanceFrom: (&app.StoredAlertConfig{Store: env.store}).Maintenance})
	if err := eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	env.monitor.Engine = eng
	name := ScheduleName("maintenance-end/morning")

	storeAlertConfig(t, env.store, "maintenance:\n  - {name: morning, cron: \"0 6 * * *\", duration: 2h, pipelines: [sales]}\n")
	drainAll(t, env.stream)
	drainAll(t, env.stream) // the timer's own record
	if got, want := env.schedules()[name], "at(2099-03-07T08:00:00)"; got != want {
		t.Errorf("after v1: schedule %s is %q, want %q (all: %v)", name, got, want, env.schedules())
	}

	storeAlertConfig(t, env.store, "maintenance:\n  - {name: morning, cron: \"0 7 * * *\", duration: 2h, pipelines: [sales]}\n")
	drainAll(t, env.stream)
	drainAll(t, env.stream)
	if got, want := env.schedules()[name], "at(2099-03-07T09:00:00)"; got != want {
		t.Errorf("after v2: schedule %s is %q, want %q", name, got, want)
	}
}

// TestControlPlaneReadsTheStoredWindows: a control plane on the tables
// takes its maintenance windows from the stored alert config, as the
// functions do — the dashboard's silences page and board list them, and
// the events they cover are marked — and follows a new version without a
// restart.
func TestControlPlaneReadsTheStoredWindows(t *testing.T) {
	st := newDDBEnv(t, 0).store
	a, err := app.OpenControlPlane(t.Context(), st, "dynamodb://test", app.Options{Clock: clock.NewVirtual(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if ws, err := a.Engine.Maintenance(t.Context()); err != nil || len(ws) != 0 {
		t.Fatalf("before any is stored: %v (%v), want none", ws, err)
	}
	storeAlertConfig(t, st, "maintenance:\n  - {name: morning, cron: \"0 6 * * *\", duration: 2h, pipelines: [orders]}\n")
	ws, err := a.Engine.Maintenance(t.Context())
	if err != nil || len(ws) != 1 || ws[0].Name != "morning" {
		t.Fatalf("stored v1: %v (%v), want the morning window", ws, err)
	}
	ids, _, err := a.Engine.SilencedBy(t.Context(), []event.Event{ev("ev-1", event.SLAWarning, t0.Add(time.Hour), nil), ev("ev-3", event.JobFailed, t0.Add(3*time.Hour), nil)})
	if err != nil || ids[0] != ws[0].ID() || ids[1] != "" {
		t.Errorf("silenced by %q (%v): want the window's id for the 07:00 event only", ids, err)
	}
	storeAlertConfig(t, st, "maintenance: []\n")
	if ws, err := a.Engine.Maintenance(t.Context()); err != nil || len(ws) != 0 {
		t.Errorf("stored v2 without windows: %v (%v), want none", ws, err)
	}
}

// TestDispatcherWithoutRoutesDropsAndSaysSo: with no route anywhere (no
// stored alert config, no ALERTS_CONFIG, no SLACK_CHANNEL_ID) every
// event is logged and done — the bus forwards every event, so failing
// them would fill the alert DLQ — and once a config is stored, the next
// event goes out.
func TestDispatcherWithoutRoutesDropsAndSaysSo(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	p := newBusPath(t)
	st := newDDBEnv(t, 0).store
	m := mapped(p, storedDispatcher(t, st, fake, clock.NewVirtual(t0)))
	p.publish(t, ev("ev-1", event.JobFailed, t0.Add(time.Hour), nil))
	for _, r := range drain(t, m) {
		if r.Failed > 0 {
			t.Fatalf("poll %+v: a message failed with no route", r)
		}
	}
	if n := len(p.sqs.Messages("alerts")) + len(p.sqs.Messages("alerts-dlq")); n != 0 || len(fake.Posts()) != 0 {
		t.Fatalf("%d messages left, %d posts: want none", n, len(fake.Posts()))
	}
	storeAlertConfig(t, st, "alerts:\n  - {type: slack, channel: C0ERRORS, tokenEnv: TEST_SLACK_TOKEN}\n")
	p.publish(t, ev("ev-2", event.JobFailed, t0.Add(2*time.Hour), nil))
	drain(t, m)
	if posts := fake.Posts(); len(posts) != 1 || posts[0].Channel != "C0ERRORS" {
		t.Errorf("after the config was stored: %+v, want the one job failure", posts)
	}
}
