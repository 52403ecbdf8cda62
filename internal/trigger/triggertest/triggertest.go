// Package triggertest is the contract every job type passes (style habit
// 11): one entry point, Run, called from each type's tests with a Harness
// around a fake provider that speaks the provider's real protocol (an
// httptest server for HTTP APIs). It checks what the engine relies on:
// which outcomes are errors (retried as infrastructure failures) and which
// are failed jobs with an explicit category, that no secret leaks, that
// status polls are authenticated like the start, and that a job can be
// polled by another process from its JobRunID and Meta alone.
//
// No secret may leak in any form it takes on the wire (product spec §8):
// the kit looks for the harness's Secret as the encoders of several
// languages print it (percent-encoded in either case, JSON with \/ or
// encoded twice, HTML-escaped, Python's repr, shell escapes, mixtures),
// in base64, for base64 of a URL's user info as a Basic header carries
// it, and reads every text as a person would, with invisible characters
// and their escapes removed, and decoded (secrettest.Leak). Fakes echo
// what they received and Echo — the secret split by control and format
// characters and in every form — in their error answers and failure
// messages, each form first in one round, so a runner that cleans after
// redacting, or knows only some forms, fails here.
package triggertest

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/secret/secrettest"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Mode is how the fake provider answers.
type Mode string

// Start modes say how the fake answers the trigger call; status modes say
// what it reports for the job (on status calls, or within the start call
// of a synchronous type).
const (
	StartOK          Mode = "start-ok"           // the job is accepted
	StartThrottled   Mode = "start-throttled"    // throttled (HTTP 429, ThrottlingException)
	StartServerError Mode = "start-server-error" // the provider fails (HTTP 5xx)
	StartRejected    Mode = "start-rejected"     // the request is refused (unknown job, invalid input: HTTP 4xx)

	JobRunning   Mode = "running"
	JobSucceeded Mode = "succeeded"
	JobFailed    Mode = "failed"
	JobTimedOut  Mode = "timed-out"
)

// Harness is one job type wired to a fresh fake provider.
type Harness struct {
	Runner    trigger.Runner
	NewRunner func() trigger.Runner // a fresh runner (a restarted process): polling with the stored Meta must still work
	Request   trigger.Request       // a valid request whose config points at the fake provider
	// Set says how the fake answers the next start and the following
	// status calls. For a Synchronous type the status is the job's result
	// within the start call.
	Set func(start, status Mode)
	// Secret is a secret the config uses (via ${env:…} or the credential
	// chain); it must appear, in no form, in any error, message, output or
	// meta. It must hold a character JSON escaping changes (" or \) and
	// one URL escaping changes, so those forms differ from the value. The
	// fake should echo what it received (headers included) and
	// Echo(Secret, Userinfo) in its error answers and failure messages, so
	// that a runner that passes them on fails here.
	Secret string
	// Userinfo is the user and password when the config also sends a
	// credential as a URL's user info (http://user:${env:…}@host/); nil
	// if it does not. Neither the password nor base64 of "user:password"
	// may leak.
	Userinfo    *url.Userinfo
	Synchronous bool // the job finishes within Start (http, lambda)
	// StartAuth is the auth header value the fake saw on the last start
	// ("" if the type has none). For a signed protocol whose header
	// changes with every request (SigV4), return its stable credential
	// part (the access key id and scope).
	StartAuth func() string
	PollAuth  func() []string // auth header values the fake saw on status calls, in the same form
	// Supports reports which modes the provider has an equivalent for
	// (nil: all). An unsupported mode's subtests are skipped, and say so
	// in their name.
	Supports func(Mode) bool
}

var (
	startModes  = []Mode{StartOK, StartThrottled, StartServerError, StartRejected}
	statusModes = []Mode{JobRunning, JobSucceeded, JobFailed, JobTimedOut}
)

// Run checks the job type behind newHarness, which is called once per
// subtest (and once to learn what the type supports).
func Run(t *testing.T, newHarness func(t *testing.T) *Harness) {
	t.Helper()
	probe := newHarness(t)
	checkHarness(t, probe)
	if !probe.supports(StartOK) {
		t.Fatalf("triggertest: every job type must support %s", StartOK)
	}
	// skip names a subtest that does not apply and skips it visibly.
	skip := func(t *testing.T, name, why string) bool {
		t.Helper()
		if why == "" {
			return false
		}
		t.Run(name+"/skipped-"+why, func(t *testing.T) { t.Skipf("%s does not apply: %s", name, why) })
		return true
	}

	t.Run("start", func(t *testing.T) {
		for _, m := range startModes {
			if skip(t, string(m), probe.unsupported(m)) {
				continue
			}
			t.Run(string(m), func(t *testing.T) {
				h := newHarness(t)
				h.Set(m, JobSucceeded)
				st, err := h.Runner.Start(ctx(t), h.Request)
				checkStart(t, h, m, st, err)
			})
		}
	})

	t.Run("status", func(t *testing.T) {
		for _, m := range statusModes {
			why := probe.unsupported(m)
			if m == JobRunning && probe.Synchronous && why == "" {
				why = "synchronous" // a synchronous job has finished when Start returns
			}
			if skip(t, string(m), why) {
				continue
			}
			t.Run(string(m), func(t *testing.T) {
				h := newHarness(t)
				h.Set(StartOK, m)
				res := h.result(t)
				checkStatus(t, m, res)
			})
		}
	})

	t.Run("no-secret-leaks", func(t *testing.T) {
		// Messages are cut (an answer's first 512 bytes, an AWS message's
		// 300), so one echo shows only its first forms. Each round has
		// the fake echo from another part on (Echo), with a fresh harness
		// (a fake that writes its echo when it is built sees the round's):
		// every form is at the start of a message once. The first round
		// checks every case; the others the cases whose answer is echoed.
		defer echoRound.Store(0)
		for round := range len(secrettest.Parts(probe.Secret, probe.Userinfo)) {
			echoRound.Store(int64(round))
			h := newHarness(t)
			var cases [][2]Mode // start, status
			for _, sm := range startModes {
				switch {
				case !h.supports(sm):
				case sm != StartOK: // the job never starts: its status does not matter
					cases = append(cases, [2]Mode{sm, JobSucceeded})
				default:
					for _, jm := range statusModes {
						if h.supports(jm) && !(h.Synchronous && jm == JobRunning) && (round == 0 || jm == JobFailed || jm == JobTimedOut) {
							cases = append(cases, [2]Mode{sm, jm})
						}
					}
				}
			}
			for _, c := range cases {
				h.Set(c[0], c[1])
				where := fmt.Sprintf("echo round %d (first %.60q) %s/%s", round, secrettest.Parts(h.Secret, h.Userinfo)[round], c[0], c[1])
				st, err := h.Runner.Start(ctx(t), h.Request)
				h.noSecret(t, where+" start error", err)
				h.noSecretInStarted(t, where, st)
				if c[0] == StartRejected && st.Result != nil && !strings.Contains(st.Result.Message+st.Result.Output, secret.Redacted) {
					t.Errorf("%s: the rejection shows nothing redacted (%q): the fake must echo the secret (Echo) or this check proves nothing", where, st.Result.Message)
				}
				if err != nil || st.Result != nil {
					continue
				}
				for i := range 2 {
					res, err := h.Runner.Poll(ctx(t), h.polled(st))
					h.noSecret(t, fmt.Sprintf("%s poll %d error", where, i+1), err)
					h.noSecretIn(t, fmt.Sprintf("%s poll %d Result.Message", where, i+1), res.Message)
					h.noSecretIn(t, fmt.Sprintf("%s poll %d Result.Output", where, i+1), res.Output)
				}
			}
			if t.Failed() {
				return // one round's failures say enough
			}
		}
	})

	t.Run("poll-auth", func(t *testing.T) {
		if skip(t, "same-auth-as-start", probe.notPolled()) {
			return
		}
		t.Run("same-auth-as-start", func(t *testing.T) {
			h := newHarness(t)
			if h.StartAuth == nil || h.PollAuth == nil {
				t.Fatal("triggertest: a polled job type's harness needs StartAuth and PollAuth")
			}
			h.Set(StartOK, JobRunning)
			st, err := h.Runner.Start(ctx(t), h.Request)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			for range 2 {
				if _, err := h.Runner.Poll(ctx(t), h.polled(st)); err != nil {
					t.Fatalf("Poll: %v", err)
				}
			}
			start, polls := h.StartAuth(), h.PollAuth()
			if len(polls) < 2 {
				t.Fatalf("the fake saw %d status calls, want 2", len(polls))
			}
			for i, a := range polls {
				if a != start {
					t.Errorf("status call %d sent auth %q, the start sent %q: polls must authenticate like the trigger", i+1, a, start)
				}
			}
		})
	})

	t.Run("fresh-runner", func(t *testing.T) {
		if skip(t, "polls-stored-job", probe.notPolled()) {
			return
		}
		t.Run("polls-stored-job", func(t *testing.T) {
			h := newHarness(t)
			if h.NewRunner == nil {
				t.Fatal("triggertest: a polled job type's harness needs NewRunner")
			}
			h.Set(StartOK, JobSucceeded)
			st, err := h.Runner.Start(ctx(t), h.Request)
			if err != nil || st.Result != nil {
				t.Fatalf("Start = %+v, %v", st, err)
			}
			res, err := h.NewRunner().Poll(ctx(t), h.polled(st))
			if err != nil {
				t.Fatalf("a fresh runner cannot poll a stored job (JobRunID %q, Meta %v): %v", st.JobRunID, st.Meta, err)
			}
			if res.Status != trigger.StatusSucceeded {
				t.Fatalf("a fresh runner polled %+v, want succeeded", res)
			}
		})
	})
}

func checkHarness(t *testing.T, h *Harness) {
	t.Helper()
	switch {
	case h == nil:
		t.Fatal("triggertest: newHarness returned nil")
	case h.Runner == nil || h.Set == nil:
		t.Fatal("triggertest: the harness needs Runner and Set")
	case h.Secret == "":
		t.Fatal("triggertest: the harness needs the Secret its config uses, or the leak checks prove nothing")
	case !strings.ContainsAny(h.Secret, `"\`) || url.QueryEscape(h.Secret) == h.Secret:
		t.Fatalf("triggertest: the Secret %q needs a character JSON escaping changes and one URL escaping changes, or those forms go unchecked", h.Secret)
	}
}

func (h *Harness) supports(m Mode) bool { return h.Supports == nil || h.Supports(m) }

func (h *Harness) unsupported(m Mode) string {
	if h.supports(m) {
		return ""
	}
	return "unsupported"
}

func (h *Harness) notPolled() string {
	if h.Synchronous {
		return "synchronous"
	}
	return ""
}

// polled is the request the engine makes to poll st: the harness's request
// with only what a store keeps from the start.
func (h *Harness) polled(st trigger.Started) trigger.Request {
	req := h.Request
	req.JobRunID, req.Meta = st.JobRunID, maps.Clone(st.Meta)
	return req
}

// result is the job's status after a successful start: within the start
// for a synchronous type, else from one poll.
func (h *Harness) result(t *testing.T) trigger.Result {
	t.Helper()
	st, err := h.Runner.Start(ctx(t), h.Request)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if h.Synchronous {
		if st.Result == nil {
			t.Fatal("a synchronous job type returned no Result from Start")
		}
		return *st.Result
	}
	if st.Result != nil {
		t.Fatalf("a polled job type returned a Result from a successful start: %+v", *st.Result)
	}
	res, err := h.Runner.Poll(ctx(t), h.polled(st))
	if err != nil {
		t.Fatalf("Poll: %v", err)
	}
	return res
}

func checkStart(t *testing.T, h *Harness, m Mode, st trigger.Started, err error) {
	t.Helper()
	switch m {
	case StartOK:
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		if h.Synchronous {
			if st.Result == nil || st.Result.Status != trigger.StatusSucceeded {
				t.Fatalf("synchronous start-ok: Result = %+v, want succeeded", st.Result)
			}
			return
		}
		if st.JobRunID == "" || len(st.Meta) == 0 {
			t.Errorf("polled start-ok: JobRunID %q, Meta %v: both must be set for polling", st.JobRunID, st.Meta)
		}
		if st.Result != nil {
			t.Errorf("polled start-ok: Result = %+v, want none (the job is polled)", *st.Result)
		}
	case StartThrottled, StartServerError:
		if err == nil {
			t.Fatalf("%s: Start = %+v, want an error (an infrastructure failure the engine retries)", m, st)
		}
		if st.Result != nil {
			t.Errorf("%s: Start returned a Result with its error: %+v", m, *st.Result)
		}
	case StartRejected:
		if err != nil {
			t.Fatalf("start-rejected: Start returned an error (%v), want a failed PERMANENT Result: the request is wrong, retrying the call won't help", err)
		}
		if st.Result == nil || st.Result.Status != trigger.StatusFailed || st.Result.Category != run.Permanent || st.Result.Message == "" {
			t.Fatalf("start-rejected: Result = %+v, want failed PERMANENT with a message", st.Result)
		}
	}
}

func checkStatus(t *testing.T, m Mode, res trigger.Result) {
	t.Helper()
	switch m {
	case JobRunning:
		if res.Status != trigger.StatusRunning {
			t.Fatalf("running: %+v", res)
		}
	case JobSucceeded:
		if res.Status != trigger.StatusSucceeded || res.Category != "" {
			t.Fatalf("succeeded: %+v", res)
		}
	case JobFailed:
		if res.Status != trigger.StatusFailed || !slices.Contains([]run.Category{run.Transient, run.Permanent}, res.Category) || res.Message == "" {
			t.Fatalf("failed: %+v, want failed with an explicit TRANSIENT or PERMANENT category and a message", res)
		}
	case JobTimedOut:
		if res.Status != trigger.StatusFailed || res.Category != run.Timeout || res.Message == "" {
			t.Fatalf("timed-out: %+v, want failed TIMEOUT with a message", res)
		}
	}
}

func (h *Harness) noSecretInStarted(t *testing.T, where string, st trigger.Started) {
	t.Helper()
	h.noSecretIn(t, where+" JobRunID", st.JobRunID)
	for k, v := range st.Meta {
		h.noSecretIn(t, where+" Meta key", k)
		h.noSecretIn(t, where+" Meta["+k+"]", v)
	}
	if st.Result != nil {
		h.noSecretIn(t, where+" Result.Message", st.Result.Message)
		h.noSecretIn(t, where+" Result.Output", st.Result.Output)
	}
}

// noSecret checks err and every error it wraps: a redacted message that
// still wraps the raw error leaks through any %+v or errors.Unwrap.
func (h *Harness) noSecret(t *testing.T, where string, err error) {
	t.Helper()
	for _, e := range chain(err) {
		h.noSecretIn(t, where, e.Error())
		h.noSecretIn(t, where, fmt.Sprintf("%+v", e))
	}
}

func (h *Harness) noSecretIn(t *testing.T, where, s string) {
	t.Helper()
	if leak := secrettest.Leak(s, h.Secret, h.Userinfo); leak != "" {
		t.Errorf("%s reveals the secret as %q: %q", where, leak, s)
	}
}

// Echo is what a careless provider echoes of secret and userinfo (nil:
// none) besides the request: the secret split by invisible characters
// and in every wire form, as Go and other languages' encoders print it
// (secrettest.Echo), beginning with the part the running round of the
// no-secret-leaks check puts first. Fakes put it in their error answers
// and failure messages.
func Echo(secret string, userinfo *url.Userinfo) string {
	return secrettest.EchoFrom(secret, userinfo, int(echoRound.Load()))
}

// echoRound is the part of secrettest.Parts that Echo begins with.
var echoRound atomic.Int64

func chain(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = append(out, chain(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, chain(e)...)
		}
	}
	return out
}

// ctx bounds each call: a fake that never answers fails the test instead
// of hanging it.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}
