package webhook_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/alerttest"
	"github.com/interlockhq/interlock/internal/alert/webhook"
	"github.com/interlockhq/interlock/internal/event"
)

const (
	signingKey = "whsec-Signing-SECRET-4242"
	pathToken  = "T0K3N-in-the-path-9f8e7d"
)

// receiver is a webhook endpoint as a careful receiver writes it: it
// checks the signature and the event id header, deduplicates on the id,
// and answers as told. Its failure answers echo the request (URL and
// headers) so a sink that copies answers into errors leaks.
type receiver struct {
	*httptest.Server
	key []byte // nil: signatures are not checked

	mu       sync.Mutex
	status   int
	header   http.Header
	ids      []string
	bodies   [][]byte
	headers  []http.Header
	badSig   int
	requests int
}

func newReceiver(t *testing.T, key []byte) *receiver {
	r := &receiver{key: key, status: http.StatusOK}
	r.Server = httptest.NewServer(http.HandlerFunc(r.handle))
	t.Cleanup(r.Close)
	return r
}

// url is the webhook URL, with a secret path.
func (r *receiver) url() string { return r.URL + "/hooks/" + pathToken }

func (r *receiver) set(status int, h http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status, r.header = status, h
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	body, _ := io.ReadAll(req.Body)
	echo := fmt.Sprintf("you sent %s %s with %v", req.Method, req.URL, req.Header)
	if r.status == -1 {
		alerttest.Hangup(w)
		return
	}
	if r.key != nil && !webhook.Verify(r.key, body, req.Header.Get(webhook.HeaderSignature)) {
		r.badSig++
		http.Error(w, "bad signature; "+echo, http.StatusUnauthorized)
		return
	}
	for k, vs := range r.header {
		w.Header()[k] = vs
	}
	if r.status < 200 || r.status > 299 {
		if r.status >= 300 && r.status <= 399 {
			w.Header().Set("Location", "https://elsewhere.example.com/")
		}
		http.Error(w, "failing as told; "+echo, r.status)
		return
	}
	id := req.Header.Get(webhook.HeaderEventID)
	r.ids = append(r.ids, id)
	r.bodies = append(r.bodies, body)
	r.headers = append(r.headers, req.Header.Clone())
	w.WriteHeader(r.status)
}

func (r *receiver) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

func newSink(t *testing.T, url string, secret alert.Secret) *webhook.Sink {
	t.Helper()
	s, err := webhook.New(webhook.Config{URL: url, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	statuses := map[alerttest.Mode]int{
		alerttest.OK: 200, alerttest.Unreachable: -1, alerttest.ServerError: 503,
		alerttest.Throttled: 429, alerttest.Rejected: 404,
	}
	alerttest.Run(t, func(t *testing.T) *alerttest.Harness {
		r := newReceiver(t, []byte(signingKey))
		return &alerttest.Harness{
			Sink: newSink(t, r.url(), alert.StaticSecret(signingKey)),
			Set: func(m alerttest.Mode) {
				h := http.Header{}
				if m == alerttest.Throttled {
					h.Set("Retry-After", "7")
				}
				r.set(statuses[m], h)
			},
			Received:      r.received,
			Secrets:       []string{signingKey, pathToken},
			ThrottleDelay: true,
		}
	})
}

func TestEnvelopeHeadersAndSignature(t *testing.T) {
	r := newReceiver(t, []byte(signingKey))
	s := newSink(t, r.url(), alert.StaticSecret(signingKey))
	e := alerttest.Events()[0]
	if _, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err != nil {
		t.Fatal(err)
	}
	if r.badSig != 0 {
		t.Fatal("the receiver refused the signature")
	}
	h := r.headers[0]
	if h.Get(webhook.HeaderEventID) != e.ID || h.Get(webhook.HeaderEventType) != string(e.Type) || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", h)
	}
	if !strings.HasPrefix(h.Get(webhook.HeaderSignature), "sha256=") || strings.Contains(h.Get(webhook.HeaderSignature), signingKey) {
		t.Errorf("signature header %q", h.Get(webhook.HeaderSignature))
	}
	var env event.Envelope
	if err := json.Unmarshal(r.bodies[0], &env); err != nil {
		t.Fatal(err)
	}
	if env.ID != e.ID || env.Source != "interlock" || env.DetailType != e.Type || env.Detail.PipelineID != "orders" ||
		env.Detail.Date != "2026-03-07" || env.Detail.Level != event.LevelError || env.Detail.Detail == nil {
		t.Errorf("envelope %+v", env)
	}
	if want, _ := json.Marshal(e.Envelope()); string(r.bodies[0]) != string(want) {
		t.Errorf("body\n%s\nwant the event's envelope\n%s", r.bodies[0], want)
	}
}

func TestWrongSecretIsRefusedAndNotRetried(t *testing.T) {
	r := newReceiver(t, []byte(signingKey))
	s := newSink(t, r.url(), alert.StaticSecret("whsec-some-other-secret"))
	retry, err := s.Deliver(t.Context(), alerttest.Alert(s, alerttest.Events()[0]))
	if err == nil || retry || !strings.Contains(err.Error(), "HTTP 401") || r.badSig != 1 {
		t.Fatalf("retry=%v err=%v badSig=%d, want the receiver's 401, not retried", retry, err, r.badSig)
	}
}

func TestUnsigned(t *testing.T) {
	r := newReceiver(t, nil)
	s := newSink(t, r.url(), nil)
	if _, err := s.Deliver(t.Context(), alerttest.Alert(s, alerttest.Events()[1])); err != nil {
		t.Fatal(err)
	}
	if got := r.headers[0].Get(webhook.HeaderSignature); got != "" {
		t.Errorf("an unsigned sink sent %s: %q", webhook.HeaderSignature, got)
	}
}

func TestStatusClassification(t *testing.T) {
	tests := []struct {
		status     int
		retry      bool
		ok         bool
		retryAfter int // seconds
	}{
		{200, false, true, 0}, {202, false, true, 0}, {204, false, true, 0},
		{301, false, false, 0}, {307, false, false, 0},
		{400, false, false, 0}, {401, false, false, 0}, {403, false, false, 0}, {404, false, false, 0},
		{410, false, false, 0}, {422, false, false, 0},
		{408, true, false, 0}, {429, true, false, 30},
		{500, true, false, 0}, {502, true, false, 0}, {503, true, false, 120}, {504, true, false, 0},
	}
	r := newReceiver(t, nil)
	s := newSink(t, r.url(), nil)
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			h := http.Header{}
			if tt.retryAfter > 0 {
				h.Set("Retry-After", fmt.Sprint(tt.retryAfter))
			}
			r.set(tt.status, h)
			retry, err := s.Deliver(t.Context(), alerttest.Alert(s, alerttest.Events()[0]))
			if (err == nil) != tt.ok || retry != tt.retry {
				t.Fatalf("HTTP %d: retry=%v err=%v, want ok=%v retry=%v", tt.status, retry, err, tt.ok, tt.retry)
			}
			if d, _ := alert.RetryAfter(err); d != time.Duration(tt.retryAfter)*time.Second {
				t.Errorf("RetryAfter = %v, want %ds", d, tt.retryAfter)
			}
			if err != nil && (strings.Contains(err.Error(), pathToken) || strings.Contains(err.Error(), "elsewhere")) {
				t.Errorf("error %q shows the secret path or the redirect target", err)
			}
		})
	}
}

// A receiver that is down: the transport error (which net/http builds
// with the full URL) must not show the URL's secret path or query.
func TestTransportErrorHidesURL(t *testing.T) {
	r := newReceiver(t, nil)
	u := r.url() + "?token=" + pathToken + "q"
	r.Close()
	s := newSink(t, u, nil)
	retry, err := s.Deliver(t.Context(), alerttest.Alert(s, alerttest.Events()[0]))
	if err == nil || !retry {
		t.Fatalf("retry=%v err=%v, want a retryable error", retry, err)
	}
	if strings.Contains(err.Error(), pathToken) || strings.Contains(err.Error(), "hooks") {
		t.Errorf("error %q shows the URL's path or query", err)
	}
	if !strings.Contains(err.Error(), "http://127.0.0.1") {
		t.Errorf("error %q does not name the host", err)
	}
}

func TestName(t *testing.T) {
	a, b := webhook.Name("https://hooks.example.com/a/"+pathToken), webhook.Name("https://hooks.example.com/b")
	if a == b || !strings.HasPrefix(a, "webhook:hooks.example.com#") || strings.Contains(a, pathToken) {
		t.Errorf("names %q, %q: want distinct, host-only, no path", a, b)
	}
	if a != webhook.Name("https://hooks.example.com/a/"+pathToken) {
		t.Error("Name is not stable")
	}
}

func TestNewChecks(t *testing.T) {
	if _, err := webhook.New(webhook.Config{URL: "ftp://x/" + pathToken}); err == nil || strings.Contains(err.Error(), pathToken) {
		t.Errorf("err = %v, want a refusal without the URL's path", err)
	}
	_, err := webhook.New(webhook.Config{URL: "https://x.example.com/h", Secret: alert.EnvSecret("HOOK_SECRET", func(string) (string, bool) { return " ", true })})
	if err == nil || !strings.Contains(err.Error(), "HOOK_SECRET is empty") {
		t.Errorf("err = %v, want the empty variable named", err)
	}
	// A sink is named Name(URL) unless its config names it.
	u := "https://hooks.example.com/a/" + pathToken
	for name, want := range map[string]string{"": webhook.Name(u), "ops-hook": "ops-hook"} {
		s, err := webhook.New(webhook.Config{URL: u, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if s.Name() != want {
			t.Errorf("New with name %q: the sink is named %s, want %s", name, s.Name(), want)
		}
	}
}

func TestVerify(t *testing.T) {
	body := []byte(`{"id":"x"}`)
	sig := webhook.Sign([]byte("k3y-value"), body)
	switch {
	case !webhook.Verify([]byte("k3y-value"), body, sig):
		t.Error("Verify refused its own signature")
	case webhook.Verify([]byte("k3y-value"), []byte(`{"id":"y"}`), sig):
		t.Error("Verify accepted a changed body")
	case webhook.Verify([]byte("other"), body, sig):
		t.Error("Verify accepted another key")
	case webhook.Verify([]byte("k3y-value"), body, strings.TrimPrefix(sig, "sha256=")):
		t.Error("Verify accepted a signature without its scheme")
	}
}
