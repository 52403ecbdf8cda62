// Package alerttest is the contract every alert sink passes (style habit
// 11, after Alertmanager's notify/test): one entry point, Run, called from
// each sink's tests with a Harness around a fake destination that speaks
// the real protocol (an httptest server for HTTP sinks). It checks what the
// Deliverer relies on: that alerts of every shape are delivered, that
// failures are classified (no answer, 5xx and 429 are worth retrying; a
// 4xx or a permanent refusal is not), that a sink recovers when its
// destination does, and that no secret appears in a name, an error or a
// log line.
package alerttest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/secret/secrettest"
)

// Mode is how the fake destination answers.
type Mode string

// Modes.
const (
	OK          Mode = "ok"           // the alert is accepted
	Unreachable Mode = "unreachable"  // no answer: the connection drops
	ServerError Mode = "server-error" // HTTP 5xx, or a local destination's transient failure
	Throttled   Mode = "throttled"    // HTTP 429 or the API's rate limit
	Rejected    Mode = "rejected"     // HTTP 4xx or a permanent refusal (unknown channel, closed file)
)

// Retryable is the classification the contract requires for m.
func (m Mode) Retryable() bool { return m == Unreachable || m == ServerError || m == Throttled }

var failures = []Mode{Unreachable, ServerError, Throttled, Rejected}

// Harness is one sink wired to a fresh fake destination.
type Harness struct {
	Sink alert.Sink
	// Set says how the destination answers the following deliveries.
	Set func(Mode)
	// Received returns the ids of the events the destination accepted, in
	// order.
	Received func() []string
	// Secrets are the credentials the sink's config holds (a token, a
	// signing secret, the secret part of a URL). None may appear, in any
	// wire form, in the sink's name, errors or logs. The fake should echo what it received
	// (headers included) in its failure answers, so a sink that copies
	// answers into errors fails here.
	Secrets []string
	// Logs returns what the sink logged (nil: it does not log).
	Logs func() string
	// Supports reports which modes the destination has (nil: all). The
	// subtests of an unsupported mode are skipped, and say so.
	Supports func(Mode) bool
	// ThrottleDelay: a Throttled answer carries a delay (Retry-After) the
	// sink must pass on with alert.WithRetryAfter.
	ThrottleDelay bool
}

func (h *Harness) supports(m Mode) bool { return h.Supports == nil || h.Supports(m) }

// Run checks the sink behind newHarness, which is called once per subtest.
func Run(t *testing.T, newHarness func(t *testing.T) *Harness) {
	t.Helper()
	probe := newHarness(t)
	if probe.Sink == nil || probe.Set == nil || probe.Received == nil {
		t.Fatal("alerttest: a harness needs Sink, Set and Received")
	}
	if !probe.supports(OK) {
		t.Fatal("alerttest: every sink must support mode ok")
	}

	t.Run("name", func(t *testing.T) {
		h := newHarness(t)
		n := h.Sink.Name()
		if n == "" {
			t.Fatal("Name() is empty: cursors and dead letters are stored under it")
		}
		if n != h.Sink.Name() {
			t.Fatal("Name() changed between calls: it must be stable")
		}
		h.noSecret(t, "Name()", n)
	})

	t.Run("deliver", func(t *testing.T) {
		h := newHarness(t)
		h.Set(OK)
		var want []string
		for _, e := range Events() {
			retry, err := h.Sink.Deliver(ctx(t), Alert(h.Sink, e))
			if err != nil {
				t.Fatalf("Deliver(%s %s): %v", e.Type, e.ID, err)
			}
			if retry {
				t.Errorf("Deliver(%s) succeeded with retry=true; retry means nothing without an error, keep it false", e.ID)
			}
			want = append(want, e.ID)
		}
		if got := h.Received(); !slices.Equal(got, want) {
			t.Fatalf("the destination received %q, want %q (every alert, in order)", got, want)
		}
	})

	t.Run("retry", func(t *testing.T) {
		for _, m := range failures {
			if !probe.supports(m) {
				t.Run(string(m)+"/skipped-unsupported", func(t *testing.T) { t.Skipf("the destination has no %s answer", m) })
				continue
			}
			t.Run(string(m), func(t *testing.T) {
				h := newHarness(t)
				h.Set(m)
				e := Events()[0]
				retry, err := h.Sink.Deliver(ctx(t), Alert(h.Sink, e))
				if err == nil {
					t.Fatalf("Deliver answered %s: want an error", m)
				}
				if retry != m.Retryable() {
					t.Fatalf("Deliver answered %s: retry=%v, want %v (err: %v)", m, retry, m.Retryable(), err)
				}
				if m == Throttled && h.ThrottleDelay {
					if d, ok := alert.RetryAfter(err); !ok || d <= 0 {
						t.Errorf("a throttled answer's Retry-After was not passed on: alert.RetryAfter(err) = %v, %v", d, ok)
					}
				}
				if slices.Contains(h.Received(), e.ID) {
					t.Errorf("the destination recorded %s as accepted although it answered %s", e.ID, m)
				}
				if !m.Retryable() {
					return
				}
				h.Set(OK)
				if _, err := h.Sink.Deliver(ctx(t), Alert(h.Sink, e)); err != nil {
					t.Fatalf("after %s the destination is back, but Deliver failed: %v", m, err)
				}
				if !slices.Contains(h.Received(), e.ID) {
					t.Fatalf("after %s the retried alert %s did not arrive", m, e.ID)
				}
			})
		}
	})

	t.Run("no-secret-leaks", func(t *testing.T) {
		if len(probe.Secrets) == 0 {
			t.Skip("the sink has no secret")
		}
		h := newHarness(t)
		for _, m := range append([]Mode{OK}, failures...) {
			if !h.supports(m) {
				continue
			}
			h.Set(m)
			for _, e := range Events() {
				_, err := h.Sink.Deliver(ctx(t), Alert(h.Sink, e))
				h.noSecretInError(t, fmt.Sprintf("%s: Deliver(%s) error", m, e.ID), err)
			}
		}
		if h.Logs != nil {
			h.noSecret(t, "logs", h.Logs())
		}
	})
}

func (h *Harness) noSecretInError(t *testing.T, where string, err error) {
	t.Helper()
	for e := err; e != nil; e = errors.Unwrap(e) {
		h.noSecret(t, where, e.Error())
	}
	if err != nil {
		h.noSecret(t, where+" (%+v)", fmt.Sprintf("%+v", err))
	}
}

// noSecret checks s for every secret in every form it takes on the wire
// (escaped as Go's and other languages' encoders print it, base64), read
// as a person reads it: with invisible characters and their escapes
// removed, and decoded (secrettest.Leak).
func (h *Harness) noSecret(t *testing.T, where, s string) {
	t.Helper()
	for _, sec := range h.Secrets {
		if sec == "" {
			continue
		}
		if leak := secrettest.Leak(s, sec, nil); leak != "" {
			t.Errorf("%s contains a secret as %q: %q", where, leak, s)
		}
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// Alert routes e to sink, as the Deliverer does.
func Alert(sink alert.Sink, e event.Event) alert.Alert { return alert.NewAlert(e, sink.Name()) }

// At is the time of the sample events.
var At = time.Date(2026, 3, 7, 6, 30, 0, 0, time.UTC)

// Events are sample alerts of every shape a sink must render: each level,
// with and without detail, without a period, without a pipeline, an
// unknown type, and text that needs escaping.
func Events() []event.Event {
	return []event.Event{
		{ID: "alerttest-1", Seq: 1, Time: At, Type: event.SLABreach, PipelineID: "orders", ScheduleID: "cron", Date: "2026-03-07",
			Message: "pipeline orders: SLA_BREACH",
			Detail:  run.Detail("status", "RUNNING", "source", "schedule", "deadline", "07:00", "breachAt", "2026-03-07T07:00:00Z", "actionHint", "check the orders job")},
		{ID: "alerttest-2", Seq: 2, Time: At.Add(time.Minute), Type: event.SLAWarning, PipelineID: "orders", ScheduleID: "cron", Date: "2026-03-07",
			Message: "pipeline orders: SLA_WARNING"},
		{ID: "alerttest-3", Seq: 3, Time: At.Add(2 * time.Minute), Type: event.ScheduleMissed, PipelineID: "gold.daily-v2", ScheduleID: "cron", Date: "2026-03-07T05",
			Message: "missed schedule for gold.daily-v2 on 2026-03-07T05",
			Detail:  run.Detail("source", "watchdog", "cron", "0 * * * *", "actionHint", "cron 0 * * * * expected to fire — no trigger found")},
		{ID: "alerttest-4", Seq: 4, Time: At.Add(3 * time.Minute), Type: event.SLAMet, PipelineID: "orders", ScheduleID: "cron", Date: "2026-03-07",
			Message: "pipeline orders: SLA_MET"},
		{ID: "alerttest-5", Seq: 5, Time: At.Add(4 * time.Minute), Type: event.ConfigInvalid, PipelineID: "orders",
			Message: "orders.yaml refused (1 error(s)); <!channel> & \"quotes\"\nsecond line"},
		{ID: "alerttest-6", Seq: 6, Time: At.Add(5 * time.Minute), Type: event.WatchdogDegraded,
			Message: "watchdog checks failed: missed-schedules"},
		{ID: "alerttest-7", Seq: 7, Time: At.Add(6 * time.Minute), Type: event.Type("FUTURE_EVENT"), PipelineID: "orders", ScheduleID: "stream", Date: "2026-03-08",
			Message: strings.Repeat("très long message ", 400)},
	}
}

// Hangup closes the connection of an httptest handler without answering:
// the client sees a network error, as when a destination is unreachable.
func Hangup(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
