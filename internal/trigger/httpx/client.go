// Package httpx is the HTTP client shared by the HTTP-family job types
// (http, airflow, databricks). It owns the SSRF guard (product spec §3
// item 11): every connection — the first and each redirect's — is judged
// after DNS resolution, and loopback, private, link-local (cloud metadata),
// multicast, unspecified and other internal addresses are refused unless
// an entry of interlock.yaml triggers.allowAddresses allows them (address
// and port); a redirect stays within the entry that allowed the call's
// first request, or among public addresses if that was public. Every
// error and description built here goes through the call's secrets
// (package secret, via Secrets): it never carries a header value, the
// URL's user info, a credential from ${env:…} or ${file:…}, nor raw
// response bytes.
//
// It decides only what concerns the call itself (Retryable: throttling
// and server errors are retried by the engine) and the start call's
// contract every HTTP job type shares (Start: retried, refused, or an
// answer); what an answer means for the job is each job type's explicit
// decision.
package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/telemetry/tracehttp"
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

// NewClient returns a client whose guard allows the entries of allow.
func NewClient(allow []pipeline.AllowAddress) *Client {
	return newClient(allow, nil)
}

// newClient resolves names with resolver (nil: the default resolver).
func newClient(allow []pipeline.AllowAddress, resolver *net.Resolver) *Client {
	g := NewGuard(allow)
	rt := &guardedTransport{guard: g, resolver: resolver, redirects: map[string]*http.Transport{}}
	rt.first = rt.transport(g.control)
	// Traced when tracing is on: each request a client span whose
	// traceparent header carries the trace to the job's API.
	return &Client{hc: &http.Client{Transport: tracehttp.Transport(rt), CheckRedirect: checkRedirect}}
}

// guardedTransport sends each request of a call through a transport whose
// dialer judges the address connected to: the call's first request
// through one that admits what Guard.Check admits, each redirect through
// one that admits only the scope of the first request (Guard.checkHop).
// Connections are pooled per transport, so a redirect never reuses a
// connection that another scope's judgement let through.
type guardedTransport struct {
	guard    Guard
	resolver *net.Resolver
	first    *http.Transport

	mu        sync.Mutex
	redirects map[string]*http.Transport // by scope.key
}

// callKey holds a call's *callState in its requests' context: net/http
// gives a redirect's request the context of the first.
type callKey struct{}

// callState is what a call's later requests need from its first.
type callState struct {
	mu      sync.Mutex
	started bool
	first   netip.AddrPort // the address the first request connected to
}

// transport is an http.Transport whose every connection passes control.
func (rt *guardedTransport) transport(control func(context.Context, string, string, syscall.RawConn) error) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// With a proxy the guard would only see the proxy's address, never the
	// target's: environment proxies are not used.
	tr.Proxy = nil
	tr.DialContext = (&net.Dialer{
		Timeout:        DefaultTimeout,
		KeepAlive:      30 * time.Second,
		ControlContext: control,
		Resolver:       rt.resolver,
	}).DialContext
	return tr
}

func (rt *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	st, ok := req.Context().Value(callKey{}).(*callState)
	if !ok {
		return nil, errors.New("a request not sent by httpx.Client.Do")
	}
	st.mu.Lock()
	first, started := st.first, st.started
	st.started = true
	st.mu.Unlock()
	if !started {
		// Record the address the first request actually got its answer
		// from (after DNS, and after any retry on a fresh connection).
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			ap, err := netip.ParseAddrPort(info.Conn.RemoteAddr().String())
			if err != nil {
				ap = netip.AddrPort{} // unknown: redirects are refused
			}
			st.mu.Lock()
			st.first = ap
			st.mu.Unlock()
		}}
		return rt.first.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	}
	tr, err := rt.forRedirect(first)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return tr.RoundTrip(req)
}

// forRedirect is the transport for the redirects of a call whose first
// request connected to first.
func (rt *guardedTransport) forRedirect(first netip.AddrPort) (*http.Transport, error) {
	s, err := rt.guard.scopeOf(first)
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	tr := rt.redirects[s.key()]
	if tr == nil {
		tr = rt.transport(func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: cannot judge address %q", ErrBlocked, address)
			}
			return rt.guard.checkHop(s, ap)
		})
		rt.redirects[s.key()] = tr
	}
	return tr, nil
}

// CloseIdleConnections closes the idle connections of every transport
// (http.Client.CloseIdleConnections calls it).
func (rt *guardedTransport) CloseIdleConnections() {
	rt.first.CloseIdleConnections()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, tr := range rt.redirects {
		tr.CloseIdleConnections()
	}
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
// timeout. A response, whatever its status, is not an error. A nil Client
// is Default(): runners built without one use it.
func (c *Client) Do(ctx context.Context, call Call, sec *Secrets) (Response, error) {
	if c == nil {
		c = Default()
	}
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
	ctx = context.WithValue(ctx, callKey{}, &callState{})
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
	if b := Snippet(resp.Body, sec); b != "" {
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
