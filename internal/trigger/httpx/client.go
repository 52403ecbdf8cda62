// Package httpx is the HTTP client shared by the HTTP-family job types
// (http, airflow, databricks). It owns the SSRF guard (product spec §3
// item 11): every connection — the first and each redirect's — is judged
// after DNS resolution, and loopback, private, link-local (cloud metadata),
// multicast, unspecified and other internal addresses are refused unless
// interlock.yaml triggers.allowAddresses allows them. It also owns
// redaction: an error built here never carries a header value, an
// ${env:…} value or raw response bytes.
//
// It decides only what concerns the call itself (Retryable: throttling
// and server errors are retried by the engine); what a response means for
// the job is each job type's explicit decision.
package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"time"
)

// DefaultTimeout bounds a call (connect, send, read the response) when the
// job sets no timeout.
const DefaultTimeout = 30 * time.Second

// maxResponse bounds how much of a response is read. Job APIs answer with
// small JSON documents; more is cut, and a cut document does not decode.
const maxResponse = 1 << 20

// maxRedirects bounds a redirect chain.
const maxRedirects = 10

// Client sends job calls through the SSRF guard. It is safe for
// concurrent use; one Client is shared by all HTTP-family runners so they
// share connections.
type Client struct {
	hc *http.Client
}

// NewClient returns a client whose guard allows the networks in allow.
func NewClient(allow []netip.Prefix) *Client {
	return newClient(allow, nil)
}

// newClient resolves names with resolver (nil: the default resolver).
func newClient(allow []netip.Prefix, resolver *net.Resolver) *Client {
	g := NewGuard(allow)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// With a proxy the guard would only see the proxy's address, never the
	// target's: environment proxies are not used.
	tr.Proxy = nil
	tr.DialContext = (&net.Dialer{
		Timeout:        DefaultTimeout,
		KeepAlive:      30 * time.Second,
		ControlContext: g.control,
		Resolver:       resolver,
	}).DialContext
	return &Client{hc: &http.Client{Transport: tr, CheckRedirect: checkRedirect}}
}

var defaultClient = sync.OnceValue(func() *Client { return NewClient(nil) })

// Default is a shared client that allows no internal address; runners
// built without a Client use it.
func Default() *Client { return defaultClient() }

// checkRedirect follows at most maxRedirects redirects (each connection
// goes through the guard), never from https to http, and drops every
// header when the host changes. net/http itself drops only Authorization
// and cookies, but any configured header may carry a credential
// (X-Api-Key …) that a third host must not receive; for the same reason a
// request body is never resent to another host.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	first := via[0].URL
	if first.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("refused a redirect from https to %s", Endpoint(req.URL))
	}
	if req.URL.Host != first.Host {
		// A 307/308 keeps the method and the body, which may carry a
		// secret from ${env:} or ${file:}: never to another host.
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			return fmt.Errorf("refused a redirect that would resend the %s body to another host (%s)", req.Method, Endpoint(req.URL))
		}
		for k := range req.Header {
			if k != "Content-Type" && k != "Accept" {
				delete(req.Header, k)
			}
		}
	}
	return nil
}

// Call is one HTTP request of a job.
type Call struct {
	Method  string
	URL     string
	Header  http.Header
	Body    []byte        // nil: no body
	Timeout time.Duration // 0: DefaultTimeout
}

// Response is a call's answer, its body read (at most 1 MiB).
type Response struct {
	Status int
	Body   []byte
}

// Do sends call and reads the response. The error says what failed
// ("POST https://host/path: …"), redacted with sec; errors.Is finds
// ErrBlocked for a refused address and context.DeadlineExceeded for a
// timeout. A response, whatever its status, is not an error.
func (c *Client) Do(ctx context.Context, call Call, sec *Secrets) (Response, error) {
	timeout := call.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u, err := url.Parse(call.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Response{}, sec.Err(errors.New("the URL is not an absolute http or https URL"))
	}
	where := call.where()
	var body io.Reader
	if call.Body != nil {
		body = bytes.NewReader(call.Body)
	}
	req, err := http.NewRequestWithContext(ctx, call.Method, call.URL, body)
	if err != nil {
		return Response{}, sec.Err(fmt.Errorf("%s: %w", where, err))
	}
	if call.Header != nil {
		req.Header = call.Header.Clone()
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return Response{}, sec.Err(fmt.Errorf("%s: %w", where, cause(ctx, err, timeout)))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return Response{}, sec.Err(fmt.Errorf("%s: reading the response (status %d): %w", where, resp.StatusCode, cause(ctx, err, timeout)))
	}
	return Response{Status: resp.StatusCode, Body: data}, nil
}

// Retryable reports whether a response status is an infrastructure
// failure of the call that the engine retries with backoff: 408 (the
// server gave up waiting), 429 (throttled) and every 5xx.
func Retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500 && status <= 599
}

// Describe is a response for an error or a Result.Message: the call, the
// status and the start of the body, redacted.
func Describe(call Call, resp Response, sec *Secrets) string {
	msg := fmt.Sprintf("%s: status %d", call.where(), resp.Status)
	if b := sec.Snippet(resp.Body); b != "" {
		msg += ": " + b
	}
	return sec.Redact(msg)
}

func (c Call) where() string {
	u, err := url.Parse(c.URL)
	if err != nil {
		return c.Method + " (unparseable URL)"
	}
	return c.Method + " " + Endpoint(u)
}

// cause strips net/http's *url.Error (its text repeats the whole URL,
// query included) and names a timeout as such.
func cause(ctx context.Context, err error, timeout time.Duration) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no complete response within %s: %w", timeout, context.DeadlineExceeded)
	}
	return err
}

// Endpoint is u as messages show it: scheme, host and path, without
// credentials, query or fragment.
func Endpoint(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}
