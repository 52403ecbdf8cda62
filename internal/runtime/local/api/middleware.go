package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// reqInfo is what the outer middleware learns from the route that handled
// a request: its pattern (for the log and the metrics) and its caller.
// Route handlers fill it in; the outer middleware reads it when the
// request is done. It never holds a body or a header.
type reqInfo struct {
	method string
	route  string // the ServeMux pattern; "" when no route matched
	caller principal
}

type infoKey struct{}

// Caller is who made a request, as a handler mounted in the API (the
// dashboard) sees it.
type Caller struct {
	Name string        // the token's name; "" without tokens configured
	Role pipeline.Role // admin when no tokens are configured
	// CSRF is the token a state-changing request made with this caller's
	// session cookie must carry; "" when the caller did not sign in with
	// a cookie.
	CSRF string
}

type callerKey struct{}

// CallerFrom returns the caller of the request whose context ctx is; the
// zero Caller on a route open to everyone.
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

func infoFrom(ctx context.Context) *reqInfo {
	if info, ok := ctx.Value(infoKey{}).(*reqInfo); ok {
		return info
	}
	return &reqInfo{}
}

// outer wraps the router: it recovers panics, turns the router's own 404
// and 405 answers into JSON, and logs and counts every request.
func (s *server) outer(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elapsed := stopwatch()
		info := &reqInfo{method: r.Method}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
		rw := &responseWriter{ResponseWriter: w, info: info}
		defer s.logRequest(r, rw, info, elapsed)
		securityHeaders(rw.Header())
		if err := checkCleanPath(r); err != nil {
			writeError(rw, err)
			return
		}
		s.serveRecovering(rw, r, mux)
	})
}

// checkCleanPath refuses a path that is not in canonical form — an empty
// segment ("//"), a "." or ".." segment — with a JSON 400 naming the
// problem. http.ServeMux would answer such a path with a redirect to its
// cleaned form: an HTML page (or, for a PUT, an empty body) before any
// token is checked, and an answer a client following it would silently
// resend elsewhere. Nothing here redirects. The check is made on the
// escaped path, as the router cleans it: a %2F or %2E inside a sensor
// key is part of the key, not a separator.
func checkCleanPath(r *http.Request) *apiError {
	if r.Method == http.MethodConnect {
		return nil // the router does not clean CONNECT paths either
	}
	p := r.URL.EscapedPath()
	if p != "" && p[0] == '/' {
		clean := path.Clean(p) // as the router's cleanPath: a trailing slash stays
		if strings.HasSuffix(p, "/") && clean != "/" {
			clean += "/"
		}
		if clean == p {
			return nil
		}
	}
	problem := "it is not an absolute path"
	switch segs := strings.Split(strings.TrimPrefix(p, "/"), "/"); {
	case p == "" || p[0] != '/':
	case slices.Contains(segs[:len(segs)-1], ""):
		problem = `it has an empty segment ("//")`
	case slices.Contains(segs, "."):
		problem = `it has a "." segment`
	case slices.Contains(segs, ".."):
		problem = `it has a ".." segment`
	default:
		problem = "it is not in canonical form"
	}
	return errorf(http.StatusBadRequest, codeBadRequest, "path %q: %s; send the path in canonical form (this API does not redirect)", truncate(p, 200), problem)
}

// truncate cuts s to at most n bytes for a message, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// serveRecovering serves r and turns a panic into a logged 500 (product
// spec §8: no panic on any API input takes the process down). A panic
// after the response started is logged and becomes http.ErrAbortHandler,
// net/http's way to abort a response without a stack dump; a handler's
// own ErrAbortHandler is passed on as it is.
func (s *server) serveRecovering(w *responseWriter, r *http.Request, h http.Handler) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		s.log.LogAttrs(r.Context(), slog.LevelError, "panic serving request",
			slog.String("method", r.Method), slog.String("route", routeLabel(w.info.route)),
			slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
		if w.wroteHeader {
			// Part of the answer is out: abort the connection so the client
			// sees a broken response, not a short one that looks whole.
			w.status = http.StatusInternalServerError
			panic(http.ErrAbortHandler)
		}
		writeError(w, errorf(http.StatusInternalServerError, codeInternal, "internal error"))
	}()
	h.ServeHTTP(w, r)
}

// logRequest logs method, route pattern, status, duration and the token
// name (never its value, a header or a body) and counts the request.
func (s *server) logRequest(r *http.Request, w *responseWriter, info *reqInfo, elapsed func() time.Duration) {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	route := routeLabel(info.route)
	s.metrics.countRequest(route, status)
	level := slog.LevelInfo
	switch {
	case status >= 500:
		level = slog.LevelError
	case info.route == "GET /healthz" || info.route == "GET /readyz":
		level = slog.LevelDebug
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Duration("duration", elapsed()),
	}
	if info.caller.name != "" {
		attrs = append(attrs, slog.String("token", info.caller.name))
	}
	s.log.LogAttrs(r.Context(), level, "http request", attrs...)
}

// routeLabel is the route of a request in logs and metrics: its pattern,
// or "unmatched", so that arbitrary paths never become label values.
func routeLabel(pattern string) string {
	if pattern == "" {
		return "unmatched"
	}
	return pattern
}

// route wraps a handler: it records the route, authenticates and
// authorizes the caller, and answers the handler's error in the API's
// error shape.
func (s *server) route(need pipeline.Role, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveRoute(w, r, need, h, false) })
}

// pageRoute is route for a page of the dashboard: a caller without valid
// credentials is sent to sign in (303 to /sign-in?next=…) rather than
// answered a JSON 401.
func (s *server) pageRoute(need pipeline.Role, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveRoute(w, r, need, h, true) })
}

func (s *server) serveRoute(w http.ResponseWriter, r *http.Request, need pipeline.Role, h handlerFunc, page bool) {
	info := infoFrom(r.Context())
	info.route = r.Pattern
	caller, aerr := s.auth.authorize(r, need)
	info.caller = caller
	r = r.WithContext(context.WithValue(r.Context(), callerKey{}, Caller{Name: caller.name, Role: caller.role, CSRF: caller.csrf}))
	if aerr != nil {
		if aerr.status == http.StatusUnauthorized {
			if page && r.Method == http.MethodGet {
				http.Redirect(w, r, "/sign-in?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			challenge := `Bearer realm="interlock"`
			if r.Header.Get("Authorization") != "" {
				challenge += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
		}
		writeError(w, aerr)
		return
	}
	if err := h(w, r); err != nil {
		ae := classify(err)
		if ae.status >= 500 {
			s.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
				slog.String("route", r.Pattern), slog.String("err", err.Error()))
		}
		writeError(w, ae)
	}
}

// responseWriter records the status for the log, and answers the router's
// own 404 and 405 (no route matched: info.route is empty) in JSON instead
// of the router's plain text, keeping its Allow header.
type responseWriter struct {
	http.ResponseWriter
	info        *reqInfo
	status      int
	wroteHeader bool
	swallow     bool // the router's plain-text body is replaced
}

func (w *responseWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	w.status = code
	if w.info.route == "" && (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) {
		w.swallow = true
		e := errorf(http.StatusNotFound, codeNotFound, "no such route; the API is under /v1")
		if code == http.StatusMethodNotAllowed {
			e = errorf(code, codeMethodNotAllowed, "method %s is not allowed here; allowed: %s", w.info.method, w.Header().Get("Allow"))
		}
		writeJSON(w.ResponseWriter, e.status, ErrorBody{Error: ErrorDetail{Code: e.code, Message: e.msg}})
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.swallow {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ContentSecurityPolicy is the policy of every answer: the dashboard's
// pages load scripts, styles and images from this server only (no inline
// script or style), connect only to it, are never framed, and post forms
// only to it. JSON answers carry it too, harmlessly.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// securityHeaders sets the headers every answer carries.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" on a form's POST (Fetch spec), and the sign-in
	// form's same-origin check would refuse every sign-in. Nothing leaks
	// to other sites either way.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}
