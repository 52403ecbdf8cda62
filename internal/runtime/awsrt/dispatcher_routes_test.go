package awsrt

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/alert/webhook"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// hookReceiver is a webhook endpoint: it answers 500 to the first
// failFirst requests and records the event ids of the ones it took.
type hookReceiver struct {
	*httptest.Server
	mu        sync.Mutex
	failFirst int
	requests  int
	took      []string
}

func newHookReceiver(t *testing.T, failFirst int) *hookReceiver {
	h := &hookReceiver{failFirst: failFirst}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.requests++
		if h.requests <= h.failFirst {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		h.took = append(h.took, r.Header.Get(webhook.HeaderEventID))
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.took)
}

// routesConfig is an ALERTS_CONFIG: errors to one channel, the SLA types
// to another, warnings and errors to the webhook at url; and maintenance.
func routesConfig(url, maintenance string) string {
	return `alerts:
  - {type: slack, channel: C0ERRORS, tokenEnv: TEST_SLACK_TOKEN, match: {levels: [error]}}
  - {type: slack, channel: C0SLA, tokenEnv: TEST_SLACK_TOKEN, match: {types: [SLA_WARNING, SLA_BREACH]}}
  - {type: webhook, url: "` + url + `", match: {levels: [warning, error]}}
` + maintenance
}

// routedDispatcher is a dispatcher over st with the routes and windows of
// config (ALERTS_CONFIG), its Slack token from the environment it is
// given.
func routedDispatcher(t *testing.T, st store.Store, fake *slacktest.Server, config string, clk clock.Clock) *Dispatcher {
	t.Helper()
	s, err := ParseAlertsConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) {
		if k == "TEST_SLACK_TOKEN" {
			return slackToken, true
		}
		return "", false
	}
	d, err := NewDispatcher(DispatcherConfig{Store: st, Alerts: s.Alerts, Maintenance: s.Maintenance, LookupEnv: lookup,
		APIURL: fake.APIURL(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// postsBy lists each channel's posted event types, in order.
func postsBy(fake *slacktest.Server) map[string][]string {
	out := map[string][]string{}
	for _, p := range fake.Posts() {
		out[p.Channel] = append(out[p.Channel], p.Text)
	}
	return out
}

func typesIn(texts []string) []string {
	var out []string
	for _, s := range texts {
		for _, typ := range []string{"SLA_WARNING", "SLA_BREACH", "JOB_FAILED"} {
			if strings.Contains(s, typ) {
				out = append(out, typ)
			}
		}
	}
	return out
}

// TestDispatcherRoutesByTheProjectsAlerts: a period's warning, breach and
// job failure reach each route its match selects — errors to one
// channel, the SLA types to another, warnings and errors to the webhook —
// and the webhook failing once fails the message for the webhook only:
// the redelivery posts nothing twice to Slack and delivers the webhook's
// once.
func TestDispatcherRoutesByTheProjectsAlerts(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	hook := newHookReceiver(t, 1)
	p := newBusPath(t)
	st := newStore(t)
	d := routedDispatcher(t, st, fake, routesConfig(hook.URL, ""), clock.NewVirtual(t0))
	p.publish(t, slaEvents()...)
	res := drain(t, mapped(p, d))

	got := postsBy(fake)
	if want := []string{"SLA_BREACH", "JOB_FAILED"}; !slices.Equal(typesIn(got["C0ERRORS"]), want) {
		t.Errorf("C0ERRORS got %q, want %v", got["C0ERRORS"], want)
	}
	if want := []string{"SLA_WARNING", "SLA_BREACH"}; !slices.Equal(typesIn(got["C0SLA"]), want) {
		t.Errorf("C0SLA got %q, want %v", got["C0SLA"], want)
	}
	if len(got) != 2 || len(fake.Posts()) != 4 {
		t.Errorf("posts %v", got)
	}
	if ids := hook.events(); !slices.Equal(ids, []string{"ev-1", "ev-2", "ev-3"}) && !slices.Equal(ids, []string{"ev-2", "ev-3", "ev-1"}) {
		t.Errorf("webhook took %v", ids)
	}
	failed := 0
	for _, r := range res {
		failed += r.Failed
	}
	if failed != 1 || hook.requests != 4 {
		t.Errorf("polls %+v, webhook requests %d: want one failure, then a redelivery", res, hook.requests)
	}
	if n := len(p.sqs.Messages("alerts")) + len(p.sqs.Messages("alerts-dlq")); n != 0 {
		t.Fatalf("%d messages left", n)
	}
	// The threads are the local sink's: per channel, the period's first
	// post starts it.
	for _, ch := range []string{"C0ERRORS", "C0SLA"} {
		var first string
		for _, p := range fake.Posts() {
			if p.Channel != ch {
				continue
			}
			if first == "" {
				first = p.TS
				continue
			}
			if p.ThreadTS != first {
				t.Errorf("%s: %+v not in the period's thread %s", ch, p, first)
			}
		}
	}
}

// TestDispatcherSkipsSilencedEvents: a silence made through the engine
// (as the API makes it) suppresses the posts and webhook calls of the
// events it covers; the events it does not cover go out.
func TestDispatcherSkipsSilencedEvents(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	hook := newHookReceiver(t, 0)
	p := newBusPath(t)
	st := newStore(t)
	clk := clock.NewVirtual(t0)
	eng := engine.New(engine.Options{Store: st, Clock: clk, Passive: true})
	// ev-1 (t0+1h) and ev-2 (t0+2h) fall in it; ev-3 (t0+3h) does not.
	if _, err := eng.CreateSilence(t.Context(), engine.SilenceRequest{ID: "deploy", Matchers: silence.Matchers{Pipelines: []string{"orders"}},
		Duration: 150 * time.Minute, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	p.publish(t, slaEvents()...)
	drain(t, mapped(p, routedDispatcher(t, st, fake, routesConfig(hook.URL, ""), clk)))
	if got := postsBy(fake); len(fake.Posts()) != 1 || !slices.Equal(typesIn(got["C0ERRORS"]), []string{"JOB_FAILED"}) {
		t.Errorf("posts %v: want only the job failure, after the silence", got)
	}
	if ids := hook.events(); !slices.Equal(ids, []string{"ev-3"}) {
		t.Errorf("webhook took %v", ids)
	}
}

// TestDispatcherSkipsEventsInAMaintenanceWindow: ALERTS_CONFIG's
// maintenance window covers the morning's events as a silence would.
func TestDispatcherSkipsEventsInAMaintenanceWindow(t *testing.T) {
	fake := slacktest.New(t, slackToken)
	hook := newHookReceiver(t, 0)
	p := newBusPath(t)
	st := newStore(t)
	window := `maintenance:
  - {name: morning, cron: "0 6 * * *", duration: 150m, pipelines: [orders]}
`
	p.publish(t, slaEvents()...)
	drain(t, mapped(p, routedDispatcher(t, st, fake, routesConfig(hook.URL, window), clock.NewVirtual(t0))))
	if got := postsBy(fake); len(fake.Posts()) != 1 || !slices.Equal(typesIn(got["C0ERRORS"]), []string{"JOB_FAILED"}) {
		t.Errorf("posts %v: want only the job failure, after the window", got)
	}
	if ids := hook.events(); !slices.Equal(ids, []string{"ev-3"}) {
		t.Errorf("webhook took %v", ids)
	}
}

func TestDispatcherRefusesABadAlertsConfig(t *testing.T) {
	if _, err := ParseAlertsConfig("alerts:\n  - {type: slack, tokenEnv: X}\n"); err == nil || !strings.Contains(err.Error(), EnvAlertsConfig) || !strings.Contains(err.Error(), "channel") {
		t.Errorf("no channel: %v", err)
	}
	s, err := ParseAlertsConfig("alerts:\n  - {type: file, path: /tmp/x}\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewDispatcher(DispatcherConfig{Store: sqliteStore(t), Alerts: s.Alerts}); err == nil || !strings.Contains(err.Error(), "alerts[0]") {
		t.Errorf("a file route: %v", err)
	}
	if _, err := NewDispatcher(DispatcherConfig{Store: sqliteStore(t)}); err == nil || !strings.Contains(err.Error(), EnvAlertsConfig) {
		t.Errorf("no route: %v", err)
	}
}
