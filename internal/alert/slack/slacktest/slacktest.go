// Package slacktest is a fake Slack Web API for tests: an httptest server
// that answers chat.postMessage as Slack does — bearer-token auth, JSON
// bodies, {"ok":true,"ts","channel"} on success, HTTP 200 with
// {"ok":false,"error":code} for refusals, HTTP 429 with Retry-After when
// rate limited — and records what it was sent. Failure answers echo the
// Authorization header they received, so a sink that copies answer bodies
// into its errors leaks the token and fails the no-secret checks.
package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/alert/alerttest"
	"github.com/interlockhq/interlock/internal/seen"
)

// Mode is how the fake answers a request.
type Mode string

// Modes.
const (
	OK          Mode = "ok"           // post the message
	Hangup      Mode = "hangup"       // drop the connection without an answer
	ServerError Mode = "server-error" // HTTP 500
	Throttled   Mode = "throttled"    // HTTP 429, Retry-After: 1, error ratelimited
	RateLimited Mode = "ratelimited"  // HTTP 200, ok:false, error ratelimited, Retry-After: 1
	Rejected    Mode = "rejected"     // HTTP 200, ok:false, error channel_not_found
	BadRequest  Mode = "bad-request"  // HTTP 400
)

// Post is one chat.postMessage call the fake answered with OK.
type Post struct {
	Channel        string // as sent
	ChannelID      string // as answered
	Text           string // the fallback text
	Blocks         []Block
	ThreadTS       string
	ReplyBroadcast bool
	TS             string // the ts the fake gave the message
}

// Block is a Block Kit block as received.
type Block struct {
	Type string `json:"type"`
	Text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"text"`
}

// Server is the fake.
type Server struct {
	*httptest.Server
	Token string

	mu       sync.Mutex
	mode     Mode
	script   []Mode
	posts    seen.List[Post]
	auths    seen.List[string]
	requests int
	ts       int
}

// New starts a fake that accepts token; it is closed when the test ends.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token, mode: OK}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// APIURL is the base URL to configure the sink with.
func (s *Server) APIURL() string { return s.URL + "/api/" }

// SetMode sets how every following request is answered.
func (s *Server) SetMode(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode, s.script = m, nil
}

// Script makes the next requests answer with modes, in order; after them
// the mode set by SetMode applies again.
func (s *Server) Script(modes ...Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, modes...)
}

// Posts returns the messages posted, in order.
func (s *Server) Posts() []Post {
	return s.posts.All()
}

// Requests is how many requests the fake received, answered or not.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Auths returns the Authorization headers received, in order.
func (s *Server) Auths() []string {
	return s.auths.All()
}

func (s *Server) next() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if len(s.script) > 0 {
		m := s.script[0]
		s.script = s.script[1:]
		return m
	}
	return s.mode
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	s.auths.Add(auth)
	if r.Method != http.MethodPost || r.URL.Path != "/api/chat.postMessage" {
		http.Error(w, "unknown method "+r.URL.Path, http.StatusNotFound)
		return
	}
	switch s.next() {
	case Hangup:
		alerttest.Hangup(w)
		return
	case ServerError:
		http.Error(w, "internal server error; you sent Authorization: "+auth, http.StatusInternalServerError)
		return
	case BadRequest:
		http.Error(w, "bad request; you sent Authorization: "+auth, http.StatusBadRequest)
		return
	case Throttled:
		w.Header().Set("Retry-After", "1")
		reply(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited", "echo": auth})
		return
	case RateLimited:
		w.Header().Set("Retry-After", "1")
		reply(w, http.StatusOK, map[string]any{"ok": false, "error": "ratelimited", "echo": auth})
		return
	case Rejected:
		reply(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found", "echo": auth})
		return
	}
	// Slack's own checks, in its order: auth, body, arguments.
	switch {
	case auth == "":
		reply(w, http.StatusOK, map[string]any{"ok": false, "error": "not_authed"})
		return
	case auth != "Bearer "+s.Token:
		reply(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth", "echo": auth})
		return
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		reply(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	var m struct {
		Channel        string  `json:"channel"`
		Text           string  `json:"text"`
		Blocks         []Block `json:"blocks"`
		ThreadTS       string  `json:"thread_ts"`
		ReplyBroadcast bool    `json:"reply_broadcast"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		reply(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_json"})
		return
	}
	switch {
	case m.Channel == "":
		reply(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	case m.Text == "" && len(m.Blocks) == 0:
		reply(w, http.StatusOK, map[string]any{"ok": false, "error": "no_text"})
		return
	}
	s.mu.Lock()
	s.ts++
	p := Post{
		Channel: m.Channel, ChannelID: channelID(m.Channel), Text: m.Text, Blocks: m.Blocks,
		ThreadTS: m.ThreadTS, ReplyBroadcast: m.ReplyBroadcast, TS: fmt.Sprintf("1700000000.%06d", s.ts),
	}
	s.posts.Add(p)
	s.mu.Unlock()
	reply(w, http.StatusOK, map[string]any{"ok": true, "channel": p.ChannelID, "ts": p.TS,
		"message": map[string]any{"text": m.Text, "ts": p.TS, "thread_ts": m.ThreadTS}})
}

// channelID answers like Slack: a channel id for a name.
func channelID(ch string) string {
	if name, ok := strings.CutPrefix(ch, "#"); ok {
		return "C" + strings.ToUpper(name)
	}
	return ch
}

func reply(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// BlockText returns the mrkdwn of the first block of p.
func (p Post) BlockText() string {
	if len(p.Blocks) == 0 {
		return ""
	}
	return p.Blocks[0].Text.Text
}
