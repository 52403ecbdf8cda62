package slack_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/alerttest"
	"github.com/interlockhq/interlock/internal/alert/slack"
	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

const token = "xoxb-1234-5678-SECRETtokenVALUE"

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "interlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func threads(t *testing.T, st store.Store) alert.StoreThreads {
	return alert.StoreThreads{Store: st, Clock: clock.NewVirtual(alerttest.At)}
}

func newSink(t *testing.T, fake *slacktest.Server, th alert.Threads, log *slog.Logger) *slack.Sink {
	t.Helper()
	s, err := slack.New(slack.Config{Channel: "#data-alerts", Token: alert.StaticSecret(token), APIURL: fake.APIURL(), Threads: th, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	modes := map[alerttest.Mode]slacktest.Mode{
		alerttest.OK: slacktest.OK, alerttest.Unreachable: slacktest.Hangup, alerttest.ServerError: slacktest.ServerError,
		alerttest.Throttled: slacktest.Throttled, alerttest.Rejected: slacktest.Rejected,
	}
	// Slack messages carry no event id: recognise them by their fallback.
	ids := map[string]string{}
	for _, e := range alerttest.Events() {
		ids[slack.Fallback(e)] = e.ID
	}
	alerttest.Run(t, func(t *testing.T) *alerttest.Harness {
		fake := slacktest.New(t, token)
		var logs bytes.Buffer
		s := newSink(t, fake, threads(t, openStore(t)), slog.New(slog.NewTextHandler(&logs, nil)))
		return &alerttest.Harness{
			Sink: s,
			Set:  func(m alerttest.Mode) { fake.SetMode(modes[m]) },
			Received: func() []string {
				var out []string
				for _, p := range fake.Posts() {
					out = append(out, ids[p.Text])
				}
				return out
			},
			Secrets:       []string{token},
			Logs:          logs.String,
			ThrottleDelay: true,
		}
	})
}

func TestMessage(t *testing.T) {
	es := alerttest.Events()
	tests := []struct {
		name string
		e    event.Event
		want string
	}{
		{"error with detail", es[0], "🔴 *SLA_BREACH* | orders | 2026-03-07\npipeline orders: SLA_BREACH\n" +
			"Deadline 07:00 (2026-03-07T07:00:00Z) · Status: RUNNING · Source: schedule\n→ check the orders job"},
		{"warning without detail", es[1], "🟡 *SLA_WARNING* | orders | 2026-03-07\npipeline orders: SLA_WARNING"},
		{"cron as code", es[2], "🔴 *SCHEDULE_MISSED* | gold.daily-v2 | 2026-03-07T05\nmissed schedule for gold.daily-v2 on 2026-03-07T05\n" +
			"Source: watchdog · Cron: `0 * * * *`\n→ cron 0 * * * * expected to fire — no trigger found"},
		{"all-clear", es[3], "✅ *SLA_MET* | orders | 2026-03-07\npipeline orders: SLA_MET"},
		{"escaped, no period", es[4], "🔴 *CONFIG_INVALID* | orders\norders.yaml refused (1 error(s)); &lt;!channel&gt; &amp; \"quotes\"\nsecond line"},
		{"no pipeline", es[5], "🔴 *WATCHDOG_DEGRADED*\nwatchdog checks failed: missed-schedules"},
		{"info", event.Event{Type: event.RerunAccepted, PipelineID: "p", Date: "2026-03-07", Message: "rerun accepted"}, "ℹ️ *RERUN_ACCEPTED* | p | 2026-03-07\nrerun accepted"},
		{"recovered", event.Event{Type: event.ScheduleRecovered, PipelineID: "p", Date: "2026-03-07"}, "✅ *SCHEDULE_RECOVERED* | p | 2026-03-07"},
		{"breachAt only", event.Event{Type: event.RelativeSLABreach, PipelineID: "p", Detail: run.Detail("breachAt", "2026-03-07T08:00:00Z")},
			"🔴 *RELATIVE_SLA_BREACH* | p\nBreach at 2026-03-07T08:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := slack.Text(tt.e); got != tt.want {
				t.Errorf("Text =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	t.Run("long text is cut to a section's limit", func(t *testing.T) {
		got := slack.Text(es[6])
		if len(got) > 3000 || !strings.HasSuffix(got, "…") {
			t.Errorf("len %d, suffix %q: want at most 3000 bytes ending in …", len(got), got[len(got)-5:])
		}
	})
	t.Run("fallback", func(t *testing.T) {
		if got, want := slack.Fallback(es[1]), "SLA_WARNING | orders | 2026-03-07: pipeline orders: SLA_WARNING"; got != want {
			t.Errorf("Fallback = %q, want %q", got, want)
		}
	})
}

func TestRequest(t *testing.T) {
	fake := slacktest.New(t, token)
	s := newSink(t, fake, nil, nil)
	e := alerttest.Events()[0]
	if _, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err != nil {
		t.Fatal(err)
	}
	p := fake.Posts()[0]
	if p.Channel != "#data-alerts" || p.Text != slack.Fallback(e) || p.BlockText() != slack.Text(e) || p.Blocks[0].Type != "section" || p.Blocks[0].Text.Type != "mrkdwn" {
		t.Errorf("posted %+v", p)
	}
	if got := fake.Auths(); len(got) != 1 || got[0] != "Bearer "+token {
		t.Errorf("Authorization %q, want the bearer token", got)
	}
	if s.Name() != "slack:#data-alerts" {
		t.Errorf("Name = %q", s.Name())
	}
}

// Three alerts of one period make one thread: the first starts it, the
// others reply with its ts. Another period starts another thread; an
// event without a period never threads; a restarted sink keeps replying in
// the stored thread.
func TestThreadPerPeriod(t *testing.T) {
	fake := slacktest.New(t, token)
	st := openStore(t)
	s := newSink(t, fake, threads(t, st), nil)
	day := func(id string, typ event.Type, date string) event.Event {
		return event.Event{ID: id, Time: alerttest.At, Type: typ, PipelineID: "orders", ScheduleID: "cron", Date: date, Message: id}
	}
	send := func(s alert.Sink, e event.Event) {
		t.Helper()
		if _, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err != nil {
			t.Fatal(err)
		}
	}
	send(s, day("w", event.SLAWarning, "2026-03-07"))
	send(s, day("b", event.SLABreach, "2026-03-07"))
	send(s, day("met", event.SLAMet, "2026-03-07"))
	send(s, day("next", event.SLAWarning, "2026-03-08"))
	send(s, event.Event{ID: "cfg", Type: event.ConfigInvalid, PipelineID: "orders", Message: "refused"})
	send(newSink(t, fake, threads(t, st), nil), day("late", event.LateDataArrival, "2026-03-07"))

	ps := fake.Posts()
	if len(ps) != 6 {
		t.Fatalf("%d posts, want 6", len(ps))
	}
	first := ps[0]
	if first.ThreadTS != "" {
		t.Errorf("the period's first alert has thread_ts %q, want none", first.ThreadTS)
	}
	for _, i := range []int{1, 2, 5} {
		if ps[i].ThreadTS != first.TS {
			t.Errorf("post %d (%s) thread_ts %q, want the first's ts %q", i, ps[i].Text, ps[i].ThreadTS, first.TS)
		}
		if ps[i].Channel != first.ChannelID {
			t.Errorf("post %d replies in channel %q, want the thread's channel id %q", i, ps[i].Channel, first.ChannelID)
		}
	}
	if !ps[1].ReplyBroadcast || ps[2].ReplyBroadcast || ps[5].ReplyBroadcast {
		t.Errorf("reply_broadcast = %v, %v, %v: want only the error-level reply (SLA_BREACH) broadcast", ps[1].ReplyBroadcast, ps[2].ReplyBroadcast, ps[5].ReplyBroadcast)
	}
	if ps[3].ThreadTS != "" || ps[4].ThreadTS != "" {
		t.Errorf("another period and a period-less event must start top-level: thread_ts %q, %q", ps[3].ThreadTS, ps[4].ThreadTS)
	}
	// The next alert of the second period replies in its own thread.
	send(s, day("next-b", event.SLABreach, "2026-03-08"))
	if got := fake.Posts()[6].ThreadTS; got != ps[3].TS {
		t.Errorf("second period reply thread_ts %q, want %q", got, ps[3].TS)
	}
}

func TestFailedPostStartsNoThread(t *testing.T) {
	fake := slacktest.New(t, token)
	s := newSink(t, fake, threads(t, openStore(t)), nil)
	e := event.Event{ID: "a", Type: event.SLAWarning, PipelineID: "orders", ScheduleID: "cron", Date: "2026-03-07"}
	fake.Script(slacktest.RateLimited)
	if retry, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err == nil || !retry {
		t.Fatalf("ratelimited: retry=%v err=%v, want a retryable error", retry, err)
	}
	if _, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err != nil {
		t.Fatal(err)
	}
	if ps := fake.Posts(); len(ps) != 1 || ps[0].ThreadTS != "" {
		t.Fatalf("posts %+v: the retried first alert must start the thread", ps)
	}
}

func TestAnswers(t *testing.T) {
	e := alerttest.Events()[1]
	tests := []struct {
		mode       slacktest.Mode
		retry      bool
		retryAfter time.Duration
		code       string
	}{
		{slacktest.RateLimited, true, time.Second, "ratelimited"},
		{slacktest.Throttled, true, time.Second, "HTTP 429"},
		{slacktest.ServerError, true, 0, "HTTP 500"},
		{slacktest.Hangup, true, 0, "POST https://"},
		{slacktest.Rejected, false, 0, "channel_not_found"},
		{slacktest.BadRequest, false, 0, "HTTP 400"},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			fake := slacktest.New(t, token)
			s := newSink(t, fake, nil, nil)
			fake.SetMode(tt.mode)
			retry, err := s.Deliver(t.Context(), alerttest.Alert(s, e))
			if err == nil || retry != tt.retry {
				t.Fatalf("retry=%v err=%v, want retry=%v", retry, err, tt.retry)
			}
			if tt.mode == slacktest.Hangup {
				tt.code = "POST http://" // the fake is plain HTTP
			}
			if !strings.Contains(err.Error(), tt.code) {
				t.Errorf("error %q does not say %q", err, tt.code)
			}
			if d, _ := alert.RetryAfter(err); d != tt.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", d, tt.retryAfter)
			}
		})
	}
	t.Run("invalid token", func(t *testing.T) {
		fake := slacktest.New(t, "xoxb-the-right-one")
		s := newSink(t, fake, nil, nil)
		retry, err := s.Deliver(t.Context(), alerttest.Alert(s, e))
		if err == nil || retry || !strings.Contains(err.Error(), "invalid_auth") || strings.Contains(err.Error(), token) {
			t.Fatalf("retry=%v err=%v, want invalid_auth, not retried, without the token", retry, err)
		}
	})
}

func TestToken(t *testing.T) {
	fake := slacktest.New(t, token)
	t.Run("missing at start", func(t *testing.T) {
		_, err := slack.New(slack.Config{Channel: "C1", Token: alert.EnvSecret("SLACK_BOT_TOKEN", func(string) (string, bool) { return "", false })})
		if err == nil || !strings.Contains(err.Error(), "SLACK_BOT_TOKEN is not set") {
			t.Fatalf("err = %v, want the variable named", err)
		}
	})
	t.Run("file is read per delivery", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(path, []byte("xoxb-old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := slack.New(slack.Config{Channel: "C1", Token: alert.FileSecret(path), APIURL: fake.APIURL()})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Deliver(t.Context(), alerttest.Alert(s, alerttest.Events()[0])); err != nil {
			t.Fatalf("after rotating the token file: %v", err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		retry, err := s.Deliver(t.Context(), alerttest.Alert(s, alerttest.Events()[0]))
		if err == nil || !retry || !strings.Contains(err.Error(), path) {
			t.Fatalf("token file gone: retry=%v err=%v, want a retryable error naming the file", retry, err)
		}
	})
}
