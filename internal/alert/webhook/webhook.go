// Package webhook is the webhook sink: it POSTs each alert's JSON envelope
// (event.Envelope: source, detail-type, time, detail) to a URL.
//
// Headers: Content-Type: application/json; X-Interlock-Event-Id, the
// event id — delivery is at least once, so a receiver deduplicates on it;
// X-Interlock-Event-Type; and, when a signing secret is configured,
// X-Interlock-Signature: sha256=<hex HMAC-SHA256 of the body>, which a
// receiver checks with Verify (or the same HMAC in any language).
//
// A 2xx answer is success. 408, 429 and 5xx are worth retrying (honouring
// Retry-After); any other answer, redirects included (they are not
// followed: the signature must not travel to another address), is not.
// Errors show the URL's scheme and host only, since the path or query of
// a webhook URL is often its secret.
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/alerthttp"
)

// Headers.
const (
	HeaderEventID   = "X-Interlock-Event-Id"
	HeaderEventType = "X-Interlock-Event-Type"
	HeaderSignature = "X-Interlock-Signature"
)

// Config configures a Sink.
type Config struct {
	Name   string // default Name(URL)
	URL    string
	Secret alert.Secret // nil: bodies are not signed
	Client *http.Client // default alerthttp.NewClient()
}

// Sink posts alerts to a URL.
type Sink struct {
	alerthttp.Poster
	url string
}

var _ alert.Sink = (*Sink)(nil)

// New checks c and returns the sink; a configured secret is read once
// here so that a missing one fails at start.
func New(c Config) (*Sink, error) {
	p, err := alerthttp.NewPoster("webhook", c.Name, c.URL, c.Secret, "signing secret", c.Client)
	if err != nil {
		return nil, err
	}
	return &Sink{Poster: p, url: c.URL}, nil
}

// Name is the default sink name of a webhook URL: "webhook:" and the
// host, then a short hash of the whole URL, which tells two URLs on one
// host apart without showing a path that may be secret.
func Name(rawURL string) string { return alerthttp.SinkName("webhook", rawURL) }

// Deliver implements alert.Sink.
func (s *Sink) Deliver(ctx context.Context, a alert.Alert) (bool, error) {
	h := http.Header{}
	h.Set(HeaderEventID, a.Event.ID)
	h.Set(HeaderEventType, string(a.Event.Type))
	return s.Post(ctx, alerthttp.Delivery{URL: s.url, EventID: a.Event.ID, Body: a.Envelope(), Header: h,
		Authorize: func(h http.Header, key string, body []byte) { h.Set(HeaderSignature, Sign([]byte(key), body)) },
	})
}

// Sign returns the signature header value of body: "sha256=" and the hex
// HMAC-SHA256 of body under key.
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether header is the signature of body under key, in
// constant time. It is what a receiver written in Go runs.
func Verify(key, body []byte, header string) bool {
	got, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	mac, err := hex.DecodeString(got)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hmac.Equal(mac, m.Sum(nil))
}
