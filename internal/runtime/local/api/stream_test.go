package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// sseMsg is one message of an event stream; a comment has only comment.
type sseMsg struct {
	id, event, data, comment string
}

// sseClient reads a stream over real HTTP.
type sseClient struct {
	resp   *http.Response
	cancel context.CancelFunc
	msgs   chan sseMsg
}

// openStream opens GET target on srv with the reader token and the given
// headers, and checks it is an event stream.
func openStream(t *testing.T, srv *httptest.Server, target string, header http.Header) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+readerSecret)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("stream %s: %d %s %s", target, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	c := &sseClient{resp: resp, cancel: cancel, msgs: make(chan sseMsg, 1000)}
	go func() {
		defer close(c.msgs)
		rd := bufio.NewReader(resp.Body)
		var m sseMsg
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				if m != (sseMsg{}) {
					c.msgs <- m
				}
				m = sseMsg{}
			case strings.HasPrefix(line, ":"):
				m.comment += strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "id: "):
				m.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				m.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				m.data = line[6:]
			}
		}
	}()
	t.Cleanup(c.close)
	return c
}

func (c *sseClient) close() { c.cancel(); c.resp.Body.Close() }

// events returns the next n event messages (skipping comments), failing
// after a bound.
func (c *sseClient) events(t *testing.T, n int) []sseMsg {
	t.Helper()
	var out []sseMsg
	deadline := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				t.Fatalf("stream ended after %d of %d events", len(out), n)
			}
			if m.data != "" {
				out = append(out, m)
			}
		case <-deadline:
			t.Fatalf("got %d of %d events in time: %+v", len(out), n, out)
		}
	}
	return out
}

// caughtUp waits for the stream to have sent everything before now.
func (c *sseClient) caughtUp(t *testing.T) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				t.Fatal("stream ended before it caught up")
			}
			if m.data != "" {
				t.Fatalf("unexpected event %+v", m)
			}
			if m.comment == "caught up" {
				return
			}
		case <-deadline:
			t.Fatal("the stream did not catch up")
		}
	}
}

// quiet checks no event message comes within d.
func (c *sseClient) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	timer := time.After(d)
	for {
		select {
		case m, ok := <-c.msgs:
			if ok && m.data != "" {
				t.Fatalf("unexpected event %+v", m)
			}
			if !ok {
				return
			}
		case <-timer:
			return
		}
	}
}

// eventItems are the raw items of GET /v1/events with the query q.
func eventItems(t *testing.T, f *fixture, q string) []json.RawMessage {
	t.Helper()
	page := want[struct {
		Events []json.RawMessage `json:"events"`
	}](t, f.do(t, "GET", "/v1/events?limit=1000"+q, readerSecret, ""), http.StatusOK)
	return page.Events
}

func eventType(t *testing.T, data string) string {
	t.Helper()
	var e struct {
		Type string `json:"detail-type"`
	}
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		t.Fatal(err)
	}
	return e.Type
}

// timedStreams is a hub whose streams poll and beat as given.
func timedStreams(poll, beat time.Duration) *api.EventStreams {
	h := api.NewEventStreams()
	h.Poll, h.Heartbeat = poll, beat
	return h
}

// The stream's data is exactly GET /v1/events' items; each id resumes
// after its event, from Last-Event-ID or ?after=; filters apply.
func TestStreamResumesAndFilters(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens(), streams: timedStreams(time.Hour, time.Hour)})
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed", writerSecret, `{}`), http.StatusOK)
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/nightly/sensors/landed", writerSecret, `{}`), http.StatusOK)
	want[map[string]any](t, f.do(t, "POST", "/v1/pipelines/orders/pause", adminSecret, `{}`), http.StatusOK)
	want[map[string]any](t, f.do(t, "POST", "/v1/pipelines/orders/resume", adminSecret, ``), http.StatusOK)
	if _, err := f.eng.ApplyConfig(t.Context(), "nightly.yaml", []byte(strings.Replace(nightlyYAML, "check: exists", "check: nosuch", 1))); err == nil {
		t.Fatal("the broken config loaded")
	}
	all := eventItems(t, f, "")
	if len(all) < 3 {
		t.Fatalf("only %d events to stream", len(all))
	}

	s := openStream(t, srv, "/v1/events/stream?after=v1", nil)
	got := s.events(t, len(all))
	for i, m := range got {
		if m.data != string(all[i]) {
			t.Fatalf("message %d data\n%s\nwant the item of GET /v1/events\n%s", i, m.data, all[i])
		}
		if m.event != eventType(t, m.data) {
			t.Errorf("message %d: event %q, type %q", i, m.event, eventType(t, m.data))
		}
	}
	s.quiet(t, 50*time.Millisecond)
	s.close()

	// Resume after the first: the rest, once each.
	s = openStream(t, srv, "/v1/events/stream", http.Header{"Last-Event-ID": {got[0].id}})
	rest := s.events(t, len(all)-1)
	for i, m := range rest {
		if m.data != got[i+1].data || m.id != got[i+1].id {
			t.Fatalf("resumed message %d: %+v, want %+v", i, m, got[i+1])
		}
	}
	s.quiet(t, 50*time.Millisecond)
	// ?after= is a cursor as good as an id.
	s = openStream(t, srv, "/v1/events/stream?after="+got[len(got)-2].id, nil)
	if m := s.events(t, 1)[0]; m.data != got[len(got)-1].data {
		t.Fatalf("after the last but one: %s", m.data)
	}
	// A reconnecting browser sends Last-Event-ID to the URL with ?after=:
	// the id wins.
	s = openStream(t, srv, "/v1/events/stream?after=v1", http.Header{"Last-Event-ID": {got[len(got)-1].id}})
	s.quiet(t, 50*time.Millisecond)

	// Filters, as GET /v1/events has them.
	for _, q := range []string{"&pipeline=nightly", "&type=PIPELINE_PAUSED,CONFIG_INVALID", "&pipeline=orders&type=PIPELINE_RESUMED"} {
		items := eventItems(t, f, q)
		s = openStream(t, srv, "/v1/events/stream?after=v1"+q, nil)
		if len(items) == 0 || len(items) == len(all) {
			t.Fatalf("%s: %d of %d events: the filter is not tested", q, len(items), len(all))
		}
		for i, m := range s.events(t, len(items)) {
			if m.data != string(items[i]) {
				t.Fatalf("%s: message %d %s, want %s", q, i, m.data, items[i])
			}
		}
		s.quiet(t, 50*time.Millisecond)
	}
	// ?level= keeps the events of the levels named.
	s = openStream(t, srv, "/v1/events/stream?after=v1&level=info", nil)
	n := 0
	for _, it := range all {
		var e struct {
			Detail struct {
				Level string `json:"level"`
			} `json:"detail"`
		}
		if err := json.Unmarshal(it, &e); err != nil {
			t.Fatal(err)
		}
		if e.Detail.Level == "info" {
			n++
		}
	}
	if n == 0 || n == len(all) {
		t.Fatalf("%d of %d events are info: the level filter is not tested", n, len(all))
	}
	for _, m := range s.events(t, n) {
		if !strings.Contains(m.data, `"level":"info"`) {
			t.Fatalf("level=info streamed %s", m.data)
		}
	}
	s.quiet(t, 50*time.Millisecond)
}

// A stream with no cursor starts at the end of the log; a commit of this
// engine wakes it at once (no polling here), and events another engine
// commits to the same store arrive by polling.
func TestStreamIsLive(t *testing.T) {
	streams := timedStreams(time.Hour, time.Hour)
	f := newFixture(t, fixtureOptions{tokens: testTokens(), streams: streams})
	f.eng.OnEventsCommitted(func([]event.Event) { streams.Notify() })
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed", writerSecret, `{}`), http.StatusOK)

	s := openStream(t, srv, "/v1/events/stream?pipeline=nightly", nil)
	s.caughtUp(t) // nothing old
	pauseNightlyLive(t, f, s)

	// Another engine (a replica) on the same SQLite file: no Notify
	// reaches this process; polling brings its events.
	// (A second API over the same engine, whose streams poll often.)
	h2, err := api.New(api.Options{Engine: f.eng, Tokens: testTokens(), Streams: timedStreams(20*time.Millisecond, time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(h2)
	t.Cleanup(srv2.Close)
	polled := openStream(t, srv2, "/v1/events/stream?pipeline=orders", nil)
	polled.caughtUp(t)
	st2, err := sqlite.Open(t.Context(), f.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	eng2 := engine.New(engine.Options{Store: st2, Clock: f.clk, Jobs: noJobs{}})
	if err := eng2.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := eng2.ApplyConfig(t.Context(), "orders.yaml", []byte(strings.Replace(ordersYAML, "check: exists}\nvalidation", "check: nosuch}\nvalidation", 1))); err == nil {
		t.Fatal("the broken config loaded")
	}
	m := polled.events(t, 1)[0]
	if eventType(t, m.data) != "CONFIG_INVALID" {
		t.Fatalf("from the other engine: %s", m.data)
	}
}

// pauseNightlyLive pauses nightly and checks that the stream s, following
// nightly, shows its events as GET /v1/events lists them.
func pauseNightlyLive(t *testing.T, f *fixture, s *sseClient) {
	t.Helper()
	want[map[string]any](t, f.do(t, "POST", "/v1/pipelines/nightly/pause", adminSecret, `{}`), http.StatusOK)
	items := eventItems(t, f, "&pipeline=nightly")
	if len(items) == 0 {
		t.Fatal("pausing recorded no event")
	}
	for i, m := range s.events(t, len(items)) {
		if m.data != string(items[i]) {
			t.Fatalf("live message %d: %s, want %s", i, m.data, items[i])
		}
	}
}

// A stream ends when its client goes, and when the hub closes (server
// shutdown); idle, it sends heartbeats.
func TestStreamEnds(t *testing.T) {
	streams := timedStreams(time.Hour, 20*time.Millisecond)
	f := newFixture(t, fixtureOptions{tokens: testTokens(), streams: streams})
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	waitOpen := func(n int) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for streams.Open() != n {
			select {
			case <-deadline:
				t.Fatalf("%d streams open, want %d", streams.Open(), n)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	a := openStream(t, srv, "/v1/events/stream", nil)
	b := openStream(t, srv, "/v1/events/stream", nil)
	waitOpen(2)
	beats := 0
	for beats < 2 {
		select {
		case m := <-a.msgs:
			if m.comment == "heartbeat" {
				beats++
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no heartbeat")
		}
	}
	a.close()
	waitOpen(1)
	streams.Close()
	waitOpen(0)
	select {
	case <-drained(b.msgs):
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end when the hub closed")
	}
	// Once closed, a new stream is refused.
	wantError(t, f.do(t, "GET", "/v1/events/stream", readerSecret, ""), http.StatusServiceUnavailable, "unavailable")
}

// drained closes once c is closed.
func drained(c <-chan sseMsg) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range c {
		}
		close(done)
	}()
	return done
}

// Bad requests are refused before the stream starts, as JSON.
func TestStreamRefusesBadRequests(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	for _, tc := range []struct {
		target, lastID string
		status         int
	}{
		{"/v1/events/stream?level=loud", "", 400},
		{"/v1/events/stream?type=NOPE", "", 400},
		{"/v1/events/stream?after=x", "", 400},
		{"/v1/events/stream?limit=3", "", 400},
		{"/v1/events/stream", "not-a-cursor", 400},
	} {
		h := http.Header{"Authorization": {"Bearer " + readerSecret}}
		if tc.lastID != "" {
			h.Set("Last-Event-ID", tc.lastID)
		}
		wantError(t, f.doWith(t, "GET", tc.target, h, ""), tc.status, "bad_request")
	}
	wantError(t, f.do(t, "GET", "/v1/events/stream", "", ""), http.StatusUnauthorized, "unauthorized")
}

// A stream outlives the server's read and write timeouts (serve's are a
// minute and two): net/http clears the read deadline once the request is
// read, and the stream pushes the write deadline on with each write.
func TestStreamOutlivesServerTimeouts(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens(), streams: timedStreams(time.Hour, 20*time.Millisecond)})
	srv := httptest.NewUnstartedServer(f.h)
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = 100*time.Millisecond, 100*time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	s := openStream(t, srv, "/v1/events/stream", nil)
	s.caughtUp(t)
	beats := 0
	deadline := time.After(10 * time.Second)
	for beats < 25 { // 25 × 20 ms: five times the timeouts
		select {
		case m, ok := <-s.msgs:
			if !ok {
				t.Fatalf("the stream ended after %d heartbeats", beats)
			}
			if m.comment == "heartbeat" {
				beats++
			}
		case <-deadline:
			t.Fatalf("%d heartbeats in time", beats)
		}
	}
}
