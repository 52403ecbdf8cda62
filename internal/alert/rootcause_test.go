package alert_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/console"
	"github.com/interlockhq/interlock/internal/alert/slack"
	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/alert/webhook"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// rootCauseEvents: the root raw's failure, a downstream breach blocked by
// it, and the downstream's resolve when the root recovered.
func rootCauseEvents(withRoot bool) []event.Event {
	root := deps.BlockedBy{PipelineID: "raw", ScheduleID: "cron", Date: "2026-03-07", Reason: deps.BlockFailed}
	blocked := event.Event{ID: "down-breach", Time: t0.Add(time.Hour), Type: event.SLABreach, PipelineID: "report", ScheduleID: "stream", Date: "2026-03-07",
		Message: "SLA deadline passed", Detail: sensor.NewObject(map[string]sensor.Value{deps.DetailBlockedBy: root.Value()})}
	resolved := event.Event{ID: "down-resolved", Time: t0.Add(2 * time.Hour), Type: event.RootCauseResolved, PipelineID: "report", ScheduleID: "stream", Date: "2026-03-07",
		Message: "SLA_BREACH cleared", Detail: deps.WithDetail(run.Detail("type", "SLA_BREACH"), deps.DetailBlockedBy, root.Value())}
	out := []event.Event{}
	if withRoot {
		out = append(out, event.Event{ID: "root-failed", Time: t0, Type: event.RetryExhausted, PipelineID: "raw", ScheduleID: "cron", Date: "2026-03-07", Message: "retry limit reached"})
	}
	return append(out, blocked, resolved)
}

func newRootCauseSlack(t *testing.T, st store.Store, fake *slacktest.Server) *slack.Sink {
	s, err := slack.New(slack.Config{Channel: "C0ALERTS", Token: alert.StaticSecret("xoxb-rootcause-TOKEN"), APIURL: fake.APIURL(),
		Threads: alert.StoreThreads{Store: st, Clock: clock.NewVirtual(t0)}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A blocked event is posted in the root period's thread, not broadcast to
// the channel, and its resolve follows it there: the default route
// recorded the downstream period as alerted when it delivered the blocked
// event, so the all-clear is not dropped.
func TestSlackListsBlockedUnderTheRoot(t *testing.T) {
	st := openStore(t, dbPath(t))
	fake := slacktest.New(t, "xoxb-rootcause-TOKEN")
	d := newDeliverer(t, st, alert.Options{}, route(newRootCauseSlack(t, st, fake), alert.Match{}))
	appendEvents(t, st, rootCauseEvents(true)...)
	deliver(t, d)
	ps := fake.Posts()
	if len(ps) != 3 {
		t.Fatalf("%d posts, want 3 (root, blocked, resolved): %+v", len(ps), ps)
	}
	if ps[0].ThreadTS != "" {
		t.Errorf("the root's alert must start its thread, thread_ts %q", ps[0].ThreadTS)
	}
	for i, p := range ps[1:] {
		if p.ThreadTS != ps[0].TS {
			t.Errorf("post %d (%s): thread_ts %q, want the root's %q", i+1, p.Text, p.ThreadTS, ps[0].TS)
		}
	}
	if ps[1].ReplyBroadcast {
		t.Error("a blocked error-level event is broadcast to the channel: it must not page on its own")
	}
	if txt := ps[1].BlockText(); !strings.Contains(txt, "Blocked by *raw* 2026-03-07 (failed)") {
		t.Errorf("blocked message does not name its root:\n%s", txt)
	}
}

// The root's own alert never reached the sink (a silence, another route):
// the blocked event starts the root period's thread.
func TestSlackBlockedStartsTheRootThreadWhenTheRootWasNotSent(t *testing.T) {
	st := openStore(t, dbPath(t))
	fake := slacktest.New(t, "xoxb-rootcause-TOKEN")
	d := newDeliverer(t, st, alert.Options{}, route(newRootCauseSlack(t, st, fake), alert.Match{}))
	appendEvents(t, st, rootCauseEvents(false)...)
	deliver(t, d)
	ps := fake.Posts()
	if len(ps) != 2 {
		t.Fatalf("%d posts, want 2 (blocked, resolved): %+v", len(ps), ps)
	}
	if ps[0].ThreadTS != "" || ps[1].ThreadTS != ps[0].TS {
		t.Errorf("thread_ts %q, %q: the blocked event starts the thread, the resolve replies in it", ps[0].ThreadTS, ps[1].ThreadTS)
	}
	// The thread is the root period's: a later alert of the root replies in it.
	appendEvents(t, st, event.Event{ID: "root-late", Time: t0.Add(3 * time.Hour), Type: event.SLABreach, PipelineID: "raw", ScheduleID: "cron", Date: "2026-03-07", Message: "late"})
	deliver(t, d)
	if ps := fake.Posts(); len(ps) != 3 || ps[2].ThreadTS != ps[0].TS {
		t.Errorf("the root's later alert did not reply in the thread its blocked downstream started: %+v", ps)
	}
}

// hookReceiver records webhook bodies.
type hookReceiver struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.bodies = append(h.bodies, b)
	h.mu.Unlock()
}

// The webhook payload carries blockedBy beside the level, and the
// resolve reaches the webhook that got the blocked event.
func TestWebhookPayloadCarriesBlockedBy(t *testing.T) {
	st := openStore(t, dbPath(t))
	h := &hookReceiver{}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s, err := webhook.New(webhook.Config{URL: srv.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	d := newDeliverer(t, st, alert.Options{}, route(s, alert.Match{}))
	appendEvents(t, st, rootCauseEvents(false)...)
	deliver(t, d)
	if len(h.bodies) != 2 {
		t.Fatalf("%d bodies, want the blocked event and its resolve", len(h.bodies))
	}
	for i, want := range []string{"SLA_BREACH", "ROOT_CAUSE_RESOLVED"} {
		var env struct {
			DetailType string `json:"detail-type"`
			Detail     struct {
				BlockedBy struct {
					PipelineID string `json:"pipelineId"`
					Date       string `json:"date"`
					Reason     string `json:"reason"`
				} `json:"blockedBy"`
			} `json:"detail"`
		}
		if err := json.Unmarshal(h.bodies[i], &env); err != nil {
			t.Fatal(err)
		}
		b := env.Detail.BlockedBy
		if env.DetailType != want || b.PipelineID != "raw" || b.Date != "2026-03-07" || b.Reason != "failed" {
			t.Errorf("body %d = %s, want %s with detail.blockedBy raw 2026-03-07 failed", i, h.bodies[i], want)
		}
	}
}

func TestConsoleMarksBlocked(t *testing.T) {
	es := rootCauseEvents(false)
	line := console.Line(alert.NewAlert(es[0], "console"))
	if !strings.Contains(line, "[blocked by raw 2026-03-07: failed]") {
		t.Errorf("console line %q does not mark the blocked event", line)
	}
	if line := console.Line(alert.NewAlert(event.Event{Type: event.SLABreach, PipelineID: "raw", Date: "2026-03-07"}, "console")); strings.Contains(line, "blocked") {
		t.Errorf("an unblocked event is marked: %q", line)
	}
}
