// Package alerthttp is what the HTTP sinks (slack, webhook, openlineage) share: one
// POST with a bounded answer, the status codes worth retrying, the
// Retry-After header, and transport errors rewritten so that neither the
// URL's path and query (a webhook URL may be the secret) nor a credential
// appears in them.
package alerthttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/telemetry/tracehttp"
)

// Timeout bounds one request of the default client.
const Timeout = 10 * time.Second

// maxBody bounds how much of an answer is read.
const maxBody = 64 << 10

// NewClient returns the default client of the HTTP sinks: a 10 s timeout,
// and redirects not followed — a redirect would carry the signature or the
// token to another address; a sink reports it as an error instead.
func NewClient() *http.Client {
	return &http.Client{
		Transport:     tracehttp.Transport(nil),
		Timeout:       Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Response is an HTTP answer with its body read (at most 64 KiB).
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Post sends body to rawURL with header. A transport failure (no answer)
// is returned as an error that names the method and SafeURL(rawURL), with
// every secret and the full URL redacted; it is always worth retrying.
func Post(ctx context.Context, c *http.Client, rawURL string, body []byte, header http.Header, secrets ...string) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return Response{}, fmt.Errorf("POST %s: invalid request", SafeURL(rawURL))
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return Response{}, transportError(rawURL, err, secrets)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Response{}, transportError(rawURL, err, secrets)
	}
	// Drain a little more so the connection can be reused.
	_, _ = io.CopyN(io.Discard, resp.Body, maxBody)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// maxErrorText bounds the cause kept from a transport error.
const maxErrorText = 512

// transportError rewrites err without the URL or a secret. net/http puts
// the full URL in its *url.Error; only the cause is kept, and it is text
// from outside (a malformed answer is quoted in it): cleaned, redacted
// (the URL, its path and query, every secret, in their wire forms) and
// bounded by secret.Set.Line. Context errors stay matchable with
// errors.Is.
func transportError(rawURL string, err error, secrets []string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var set secret.Set
	set.AddURL(rawURL)
	for _, s := range secrets {
		set.Add(s)
	}
	msg := set.Line(err.Error(), maxErrorText)
	for _, ce := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, ce) {
			return fmt.Errorf("POST %s: %s: %w", SafeURL(rawURL), msg, ce)
		}
	}
	return fmt.Errorf("POST %s: %s", SafeURL(rawURL), msg)
}

// SafeURL is rawURL reduced to what may be shown: scheme and host, and
// "/…" when it has a path or query.
func SafeURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	s := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		s += "/…"
	}
	return s
}

// RetryStatus reports whether an HTTP status is worth retrying: 408
// (request timeout), 429 (too many requests) and every 5xx.
func RetryStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// RetryAfter reads a Retry-After header given in seconds (what Slack and
// most APIs send). The HTTP-date form is ignored: reading it needs the
// current time, and the backoff covers it.
func RetryAfter(h http.Header) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// StatusError is the error for an HTTP answer that is not a success. It
// carries the Retry-After delay when the answer has one.
func StatusError(what string, resp Response) error {
	err := fmt.Errorf("%s: HTTP %d %s", what, resp.Status, http.StatusText(resp.Status))
	if d, ok := RetryAfter(resp.Header); ok {
		err = alert.WithRetryAfter(err, d)
	}
	return err
}

// SinkName is the default name of a sink posting to rawURL: kind, ":",
// the host, then a short hash of the whole URL, which tells two URLs on
// one host apart without showing a path that may be secret.
func SinkName(kind, rawURL string) string {
	host := "invalid"
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		host = u.Host
	}
	sum := sha256.Sum256([]byte(rawURL))
	return kind + ":" + host + "#" + hex.EncodeToString(sum[:4])
}

// Outcome classifies the answer to a sink's POST as alert.Sink.Deliver
// reports it: a 2xx is success; a redirect is an error not worth
// retrying (it is not followed: a credential must not travel to another
// address); otherwise RetryStatus says, with StatusError's error. what
// names the sink ("webhook https://host").
func Outcome(what string, resp Response) (retry bool, err error) {
	switch {
	case resp.Status >= 200 && resp.Status <= 299:
		return false, nil
	case resp.Status >= 300 && resp.Status <= 399:
		return false, fmt.Errorf("%s: HTTP %d redirect not followed: configure the final URL", what, resp.Status)
	}
	return RetryStatus(resp.Status), StatusError(what, resp)
}

// CheckSink checks what a sink posting to rawURL is configured with, at
// its start: an absolute http or https URL, and a credential (nil: none)
// that can be read now, so that a missing one fails the start. Errors
// name kind, what the credential is, and SafeURL only.
func CheckSink(kind, rawURL string, credential alert.Secret, what string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: want an absolute http or https URL, got %s", kind, SafeURL(rawURL))
	}
	if credential != nil {
		if _, err := credential(); err != nil {
			return fmt.Errorf("%s %s: %s: %w", kind, SafeURL(rawURL), what, err)
		}
	}
	return nil
}
