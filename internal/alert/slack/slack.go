// Package slack is the Slack sink: it posts each alert with
// chat.postMessage as a bot (Authorization: Bearer <bot token>), as a
// Block Kit section in mrkdwn with a plain-text fallback, and keeps one
// thread per pipeline, schedule and period: the first alert of a period
// starts it, its ts is stored durably (alert.Threads), and every later
// alert of the period — recoveries and SLA_MET included — replies in it.
// An error-level reply is also broadcast to the channel, so a breach that
// follows a warning is not buried in a thread.
//
// It must never put the token in an error or a log line: errors name the
// channel and Slack's error code, never an answer body.
package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/alerthttp"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// DefaultAPIURL is Slack's Web API.
const DefaultAPIURL = "https://slack.com/api/"

// Config configures a Sink.
type Config struct {
	Name    string // default "slack:<channel>"
	Channel string // a channel id (C0123…) or name
	Token   alert.Secret
	APIURL  string       // default DefaultAPIURL; tests point it at a fake
	Client  *http.Client // default alerthttp.NewClient()
	// Threads remembers the thread of each period; nil: every alert is a
	// new top-level message.
	Threads alert.Threads
	Logger  *slog.Logger
}

// Sink posts alerts to a Slack channel.
type Sink struct {
	name    string
	channel string
	token   alert.Secret
	url     string
	client  *http.Client
	threads alert.Threads
	log     *slog.Logger
}

var _ alert.Sink = (*Sink)(nil)

// New checks c and returns the sink. The token is read once here so that
// a missing one fails at start, not at the first alert.
func New(c Config) (*Sink, error) {
	if c.Channel == "" {
		return nil, fmt.Errorf("slack: a channel is required")
	}
	if c.Token == nil {
		return nil, fmt.Errorf("slack: channel %s: a bot token is required", c.Channel)
	}
	if _, err := c.Token(); err != nil {
		return nil, fmt.Errorf("slack: channel %s: bot token: %w", c.Channel, err)
	}
	s := &Sink{name: c.Name, channel: c.Channel, token: c.Token, url: c.APIURL, client: c.Client, threads: c.Threads, log: c.Logger}
	if s.name == "" {
		s.name = "slack:" + c.Channel
	}
	if s.url == "" {
		s.url = DefaultAPIURL
	}
	s.url = strings.TrimSuffix(s.url, "/") + "/chat.postMessage"
	if s.client == nil {
		s.client = alerthttp.NewClient()
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Name implements alert.Sink.
func (s *Sink) Name() string { return s.name }

// message is the chat.postMessage request body.
type message struct {
	Channel        string  `json:"channel"`
	Text           string  `json:"text"`
	Blocks         []block `json:"blocks"`
	ThreadTS       string  `json:"thread_ts,omitempty"`
	ReplyBroadcast bool    `json:"reply_broadcast,omitempty"`
	UnfurlLinks    bool    `json:"unfurl_links"`
	UnfurlMedia    bool    `json:"unfurl_media"`
}

type block struct {
	Type string    `json:"type"`
	Text blockText `json:"text"`
}

type blockText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// answer is the chat.postMessage response body.
type answer struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error"`
	TS      string `json:"ts"`
	Channel string `json:"channel"`
}

// Deliver implements alert.Sink.
func (s *Sink) Deliver(ctx context.Context, a alert.Alert) (bool, error) {
	token, err := s.token()
	if err != nil {
		// A token file being rotated may be back soon.
		return true, fmt.Errorf("slack: channel %s: bot token: %w", s.channel, err)
	}
	m := message{
		Channel: s.channel,
		Text:    Fallback(a.Event),
		Blocks:  []block{{Type: "section", Text: blockText{Type: "mrkdwn", Text: Text(a.Event)}}},
	}
	threaded := s.threads != nil && a.Thread != (run.Key{})
	var existing bool
	if threaded {
		t, ok, err := s.threads.ThreadGet(ctx, s.name, a.Thread)
		if err != nil {
			// Posting without the thread would split the period's
			// conversation; the store is likely back soon.
			return true, fmt.Errorf("slack: channel %s: %w", s.channel, err)
		}
		if ok {
			existing = true
			m.ThreadTS = t.ID
			if t.Channel != "" {
				m.Channel = t.Channel
			}
			// A blocked event is listed under its root's alert, not
			// paged on its own: never broadcast.
			_, blocked := a.Blocked()
			m.ReplyBroadcast = a.Level() == event.LevelError && !blocked
		}
	}
	body, err := json.Marshal(m)
	if err != nil {
		return false, fmt.Errorf("slack: channel %s: encode message: %v", s.channel, err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Authorization", "Bearer "+token)
	resp, err := alerthttp.Post(ctx, s.client, s.url, body, h, token)
	if err != nil {
		return true, fmt.Errorf("slack: channel %s: %w", s.channel, err)
	}
	what := "slack: chat.postMessage to " + s.channel
	if resp.Status < 200 || resp.Status > 299 {
		return alerthttp.RetryStatus(resp.Status), alerthttp.StatusError(what, resp)
	}
	var ans answer
	if err := json.Unmarshal(resp.Body, &ans); err != nil {
		// A 200 that is not Slack's JSON is a proxy or an outage page.
		return true, fmt.Errorf("%s: answer is not Slack JSON", what)
	}
	if !ans.OK {
		code := errorCode(ans.Error)
		err := fmt.Errorf("%s: %s", what, code)
		if retryCodes[code] {
			if d, ok := alerthttp.RetryAfter(resp.Header); ok {
				err = alert.WithRetryAfter(err, d)
			}
			return true, err
		}
		return false, err
	}
	if threaded && !existing && ans.TS != "" {
		ch := ans.Channel
		if ch == "" {
			ch = s.channel
		}
		if err := s.threads.ThreadPut(ctx, s.name, a.Thread, alert.Thread{ID: ans.TS, Channel: ch}); err != nil {
			// The alert is out; failing now would post it twice. The
			// period's next alert starts a new thread.
			s.log.Warn("slack thread not recorded", "sink", s.name, "pipeline", a.Thread.PipelineID,
				"schedule", a.Thread.ScheduleID, "period", a.Thread.Period, "err", err)
		}
	}
	return false, nil
}

// retryCodes are the ok:false error codes that are transient.
var retryCodes = map[string]bool{
	"ratelimited":         true,
	"rate_limited":        true,
	"internal_error":      true,
	"fatal_error":         true,
	"service_unavailable": true,
	"request_timeout":     true,
}

var codePattern = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// errorCode keeps a Slack error code only if it looks like one, so an odd
// answer cannot smuggle text (or an echoed header) into the error.
func errorCode(s string) string {
	if codePattern.MatchString(s) {
		return s
	}
	return "unknown_error"
}
