package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// GET /v1/events/stream: the committed events as Server-Sent Events.
// Each message's id is the store cursor after its event and its data the
// event exactly as an item of GET /v1/events, so a client resumes with
// Last-Event-ID (browsers send it when they reconnect) or ?after= and
// sees every event once. Every stream reads the store itself, from its
// own cursor: a commit of this process wakes it at once (Notify), and it
// polls as well, so events committed by another replica sharing the store
// arrive too. It buffers at most one page of events.

// Stream timing defaults (EventStreams.Poll and Heartbeat).
const (
	// DefaultStreamPoll is how often a stream looks at the store without
	// being woken (events of other replicas).
	DefaultStreamPoll = 2 * time.Second
	// DefaultStreamHeartbeat is how often an idle stream sends a comment,
	// so proxies and browsers keep it open and a gone client is noticed.
	DefaultStreamHeartbeat = 15 * time.Second
)

const (
	// streamPage is how many events a stream reads from the store at once:
	// its buffer.
	streamPage = 100
	// streamWriteWindow is how long one write to a stream may take before
	// the client is given up (and the connection's write deadline, pushed
	// on before each write, so the server's WriteTimeout does not cut a
	// long stream).
	streamWriteWindow = time.Minute
)

// EventStreams wakes the open event streams when events are committed and
// ends them when the server shuts down. Its zero value is not usable: use
// NewEventStreams.
type EventStreams struct {
	// Poll and Heartbeat time the streams (0: DefaultStreamPoll,
	// DefaultStreamHeartbeat). Set them before the first stream opens.
	Poll, Heartbeat time.Duration

	mu     sync.Mutex
	subs   map[chan struct{}]struct{}
	closed bool
	done   chan struct{}
	// tail is a cursor near the end of the log, where a stream with no
	// cursor starts looking for the end (so only the first pays for
	// reading the log).
	tail store.Cursor
}

// NewEventStreams returns a hub with no stream.
func NewEventStreams() *EventStreams {
	return &EventStreams{subs: map[chan struct{}]struct{}{}, done: make(chan struct{})}
}

// Notify wakes every stream: events were committed. It never blocks (the
// engine calls it from its commit hook).
func (h *EventStreams) Notify() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		select {
		case c <- struct{}{}:
		default: // already woken: one wake reads everything
		}
	}
}

// Close ends every stream, and any opened later: the server is shutting
// down (http.Server.RegisterOnShutdown), and would otherwise wait for
// them.
func (h *EventStreams) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

// Open reports how many streams are open.
func (h *EventStreams) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

func (h *EventStreams) subscribe() (chan struct{}, func(), bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, false
	}
	c := make(chan struct{}, 1)
	h.subs[c] = struct{}{}
	return c, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, c)
	}, true
}

// logEnder is a store that reads the end of its event log directly (the
// DynamoDB store: its shards' counters).
type logEnder interface {
	EventLogEnd(ctx context.Context) (store.Cursor, error)
}

// logEnd returns a cursor at the end of the log: from the furthest point
// known (this hub's tail, the alert sinks' cursors, which keep up with the
// log), read forward.
func (h *EventStreams) logEnd(ctx context.Context, st store.Store) (store.Cursor, error) {
	h.mu.Lock()
	from := h.tail
	h.mu.Unlock()
	if e, ok := st.(logEnder); ok {
		// A log others write (an AWS deployment's functions) and no
		// sink here reads: its counters are its end, in one read.
		end, err := e.EventLogEnd(ctx)
		if err != nil {
			return from, err
		}
		from = maxCursor(from, end)
		h.mu.Lock()
		h.tail = maxCursor(h.tail, from)
		h.mu.Unlock()
		return from, nil
	}
	cursors, err := st.DeliveryCursorList(ctx)
	if err != nil {
		return from, err
	}
	for _, c := range cursors {
		from = maxCursor(from, c.Cursor)
	}
	const size = 1000
	for {
		page, err := st.EventList(ctx, store.EventListParams{After: from, Limit: size})
		if err != nil {
			return from, err
		}
		from = page.Next
		if len(page.Events) < size {
			break
		}
	}
	h.mu.Lock()
	h.tail = maxCursor(h.tail, from)
	h.mu.Unlock()
	return from, nil
}

func maxCursor(a, b store.Cursor) store.Cursor {
	for i := range a {
		a[i] = max(a[i], b[i])
	}
	return a
}

// streamEvents answers GET /v1/events/stream: ?pipeline=, ?type=, ?level=
// and ?since= filter as GET /v1/events does; Last-Event-ID or ?after=
// says where to resume; without either, the stream starts at the end of
// the log (only new events), or with ?since= at that time.
func (s *server) streamEvents(w http.ResponseWriter, r *http.Request) error {
	q, p, err := s.eventQuery(r, "pipeline", "type", "level", "since", "after")
	if err != nil {
		return err
	}
	levels, err := eventLevels(q)
	if err != nil {
		return err
	}
	after, resume, err := streamCursor(r, q)
	if err != nil {
		return err
	}
	ctx := r.Context()
	st := s.eng.Store()
	if !resume && p.Since.IsZero() {
		if after, err = s.stream.logEnd(ctx, st); err != nil {
			return err
		}
	}
	wake, unsubscribe, ok := s.stream.subscribe()
	if !ok {
		return errorf(http.StatusServiceUnavailable, codeUnavailable, "the server is shutting down")
	}
	defer unsubscribe()

	rc := http.NewResponseController(w)
	// (net/http clears the read deadline once the request is read, so the
	// server's ReadTimeout does not end a stream; its WriteTimeout would:
	// sseWriter pushes the deadline on.)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: pass each message on at once
	w.WriteHeader(http.StatusOK)
	out := &sseWriter{w: w, rc: rc}
	// The first message tells the client where it stands, and how long
	// to wait before it reconnects.
	out.printf("retry: 3000\n: stream from %s\n\n", after.String())
	if err := out.flush(); err != nil {
		return nil // the client is gone
	}

	every, heartbeat := cmp.Or(s.stream.Poll, DefaultStreamPoll), cmp.Or(s.stream.Heartbeat, DefaultStreamHeartbeat)
	poll := time.NewTicker(every)
	defer poll.Stop()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	p.Limit = streamPage
	caughtUp := false
	for {
		for { // read what is there, a page at a time
			p.After = after
			page, err := st.EventList(ctx, p)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				s.log.Warn("event stream: reading the log failed; retrying", "err", err)
				break
			}
			views, err := s.eventViews(ctx, page.Events)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				s.log.Warn("event stream: reading the silences failed; retrying", "err", err)
				break
			}
			for i, e := range page.Events {
				after = after.Advance(e)
				if len(levels) > 0 && !slices.Contains(levels, e.Level()) {
					continue
				}
				data, err := json.Marshal(views[i])
				if err != nil {
					return fmt.Errorf("event stream: encode event %s: %w", e.ID, err)
				}
				out.printf("id: %s\nevent: %s\ndata: %s\n\n", after.String(), sseField(string(e.Type)), data)
			}
			after = maxCursor(after, page.Next)
			if len(page.Events) > 0 {
				if err := out.flush(); err != nil {
					return nil
				}
				beat.Reset(heartbeat)
			}
			if len(page.Events) < p.Limit {
				break
			}
		}
		if !caughtUp {
			// Everything before now is out: say so once (a client or a
			// test may wait for it before it acts).
			caughtUp = true
			out.printf(": caught up\n\n")
			if err := out.flush(); err != nil {
				return nil
			}
		}
		select {
		case <-ctx.Done(): // the client went away
			return nil
		case <-s.stream.done: // the server is shutting down
			return nil
		case <-wake:
		case <-poll.C:
		case <-beat.C:
			out.printf(": heartbeat\n\n")
			if err := out.flush(); err != nil {
				return nil
			}
		}
	}
}

// sseWriter writes a stream's messages, each flush under a fresh write
// deadline.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
}

func (o *sseWriter) printf(format string, args ...any) { fmt.Fprintf(&o.buf, format, args...) }

func (o *sseWriter) flush() error {
	if err := o.rc.SetWriteDeadline(clock.Real{}.Now().Add(streamWriteWindow)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := o.w.Write(o.buf.Bytes()); err != nil {
		return err
	}
	o.buf.Reset()
	if err := o.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// sseField keeps a value on one line of the stream.
func sseField(v string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, v)
}

// streamCursor reads where a stream resumes: the Last-Event-ID header (a
// reconnecting browser sends the last id it saw) or ?after=; both given
// must agree. resume is false when neither is.
func streamCursor(r *http.Request, q url.Values) (store.Cursor, bool, error) {
	after, err := cursorParam(q)
	if err != nil {
		return after, false, err
	}
	_, hasAfter := q["after"]
	last := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if last == "" {
		return after, hasAfter, nil
	}
	c, err := store.ParseCursor(last)
	if err != nil {
		return c, false, errorf(http.StatusBadRequest, codeBadRequest, "Last-Event-ID %q: want the id of a message of this stream (%v)", truncate(last, 100), err)
	}
	// A browser reconnecting to a URL with ?after= sends the later
	// Last-Event-ID: it wins.
	return c, true, nil
}

// eventLevels reads ?level= (repeatable, or comma-separated): info,
// warning, error.
func eventLevels(q url.Values) ([]event.Level, error) {
	var out []event.Level
	for _, v := range q["level"] {
		for _, name := range strings.Split(v, ",") {
			l := event.Level(strings.ToLower(strings.TrimSpace(name)))
			if !slices.Contains(event.Levels(), l) {
				return nil, errorf(http.StatusBadRequest, codeBadRequest, "level %q is not an event level: info, warning or error", name)
			}
			out = append(out, l)
		}
	}
	return out, nil
}
