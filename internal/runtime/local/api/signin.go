package api

import (
	"bytes"
	"html/template"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The sign-in page of the dashboard: a form that takes a token and, when
// it is one of server.tokens, sets the session cookie (session.go) and
// sends the browser on to where it was going.

var signInPage = template.Must(template.New("sign-in").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Interlock</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/assets/app.css">
</head>
<body class="sign-in">
<main class="sign-in">
<h1>Interlock</h1>
<form method="post" action="/sign-in" class="sign-in">
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>
{{end}}<input type="hidden" name="next" value="{{.Next}}">
<label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
</form>
<p class="hint">A token of <code>server.tokens</code> in interlock.yaml. The session lasts {{.TTL}}; readers see the pages, admins may act.</p>
</main>
</body>
</html>
`))

type signInView struct {
	Next  string
	Error string
	TTL   string
}

// maxSignInBody bounds the sign-in form's body: a token and a path.
const maxSignInBody = 8 << 10

// signInForm answers GET /sign-in: the form, or (without tokens
// configured, nothing to sign in to) the page asked for.
func (s *server) signInForm(w http.ResponseWriter, r *http.Request) error {
	// Read leniently: a query that does not parse only leads to "/".
	q, err := url.ParseQuery(r.URL.RawQuery)
	next := "/"
	if err == nil {
		next = safeNext(q.Get("next"))
	}
	if !s.auth.enabled() {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	s.renderSignIn(w, http.StatusOK, next, "")
	return nil
}

// signIn answers POST /sign-in: a good token sets the session cookie and
// sends the browser on (303) to next, a path of this server only; a bad
// one shows the form again with an error that does not say what was
// wrong. Failures are limited per client address.
func (s *server) signIn(w http.ResponseWriter, r *http.Request) error {
	if why := browserCrossOrigin(r); why != "" {
		s.renderSignIn(w, http.StatusForbidden, "/", "This sign-in came from another site and was refused.")
		return nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		s.renderSignIn(w, http.StatusUnsupportedMediaType, "/", "Sign in with the form on this page.")
		return nil
	}
	form, err := readForm(w, r)
	if err != nil {
		s.renderSignIn(w, http.StatusBadRequest, "/", "The form could not be read; try again.")
		return nil
	}
	next := safeNext(form.Get("next"))
	if !s.auth.enabled() {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	now := s.eng.Now()
	client := clientAddr(r)
	if wait := s.limiter.blocked(client, now); wait > 0 {
		secs := int(wait.Round(time.Second) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "sign-in refused: too many failures", slog.String("client", client))
		s.renderSignIn(w, http.StatusTooManyRequests, next, "Too many failed sign-ins from your address; try again in "+(time.Duration(max(secs, 1))*time.Second).String()+".")
		return nil
	}
	found := s.auth.lookup(strings.TrimSpace(form.Get("token")))
	if found < 0 {
		s.limiter.fail(client, now)
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "sign-in failed", slog.String("client", client))
		s.renderSignIn(w, http.StatusUnauthorized, next, "Sign-in failed: that token was not accepted.")
		return nil
	}
	t := s.auth.tokens[found]
	infoFrom(r.Context()).caller = principal{name: t.name, role: t.role}
	expires := now.Add(s.auth.ttl).Truncate(time.Second)
	http.SetCookie(w, sessionCookie(r, newSession(t.sessionKey, t.name, expires), expires))
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// signOut answers POST /sign-out: the cookie is deleted and the browser
// sent to the sign-in page. (A session is stateless: a copy of the
// cookie kept elsewhere stays valid until it expires or its token
// changes.)
func (s *server) signOut(w http.ResponseWriter, r *http.Request) error {
	if why := browserCrossOrigin(r); why != "" {
		return errorf(http.StatusForbidden, codeForbidden, "cross-origin request refused: %s", why)
	}
	http.SetCookie(w, sessionCookie(r, "", time.Time{}))
	to := "/sign-in"
	if !s.auth.enabled() {
		to = "/"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// readForm reads a form body (of at most maxSignInBody bytes); the query
// string is not part of it.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSignInBody))
	if err != nil {
		return nil, err
	}
	return url.ParseQuery(string(body))
}

func (s *server) renderSignIn(w http.ResponseWriter, status int, next, msg string) {
	var b bytes.Buffer
	if err := signInPage.Execute(&b, signInView{Next: next, Error: msg, TTL: humanTTL(s.auth.ttl)}); err != nil {
		writeError(w, errorf(http.StatusInternalServerError, codeInternal, "internal error"))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// humanTTL prints a session length: "12h", "90m".
func humanTTL(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return d.Round(time.Minute).String()
}

// maxNext bounds the path a sign-in returns to.
const maxNext = 2048

// safeNext returns next when it is a path on this server, else "/": no
// scheme, no host (also not "//host" or "/\host", which browsers read as
// one), no control characters, nothing browsers would fix up into
// another site. The sign-in pages themselves lead to "/".
func safeNext(next string) string {
	if next == "" || len(next) > maxNext || next[0] != '/' {
		return "/"
	}
	// No backslash anywhere: browsers read "\" as "/", and the redirect
	// cleans the path ("/./\host" is sent as "/\host", "//host" to a
	// browser), so judging only the first characters is not enough.
	if len(next) > 1 && next[1] == '/' || strings.ContainsRune(next, '\\') {
		return "/"
	}
	// No control characters: browsers drop some ("/\t/x" would be
	// "//x"), and url.Parse lets them through in a fragment.
	if strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") ||
		strings.ContainsRune(u.Path, '\\') || strings.HasPrefix(u.Path, "//") {
		return "/"
	}
	if u.Path == "/sign-in" || u.Path == "/sign-out" {
		return "/"
	}
	return next
}

// clientAddr is the address failures are counted against: the peer's IP.
// Behind a proxy that is the proxy's address (X-Forwarded-For is not
// trusted: a guesser would send a new one with each guess).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Sign-in failures allowed per client address: a burst, then one per
// refill interval.
const (
	signInBurst     = 5
	signInRefill    = time.Minute
	signInMaxtracks = 10000
)

// limiter limits failed sign-ins per client address: a token bucket of
// signInBurst failures refilled one per signInRefill. Only failures take
// from it; while it is empty, sign-ins from that address are refused
// without looking at the token. It lives in this process's memory: with
// replicas each limits on its own, which multiplies the rate by their
// number but keeps it bounded.
type limiter struct {
	mu      sync.Mutex
	clients map[string]*bucket
}

type bucket struct {
	left float64   // failures still allowed at at
	at   time.Time // when left was computed
}

func newLimiter() *limiter { return &limiter{clients: map[string]*bucket{}} }

// refill brings b up to now.
func (b *bucket) refill(now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.left = min(signInBurst, b.left+float64(d)/float64(signInRefill))
		b.at = now
	}
}

// blocked returns how long client must wait before its next try; 0: it
// may try now.
func (l *limiter) blocked(client string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.clients[client]
	if !ok {
		return 0
	}
	b.refill(now)
	if b.left >= 1 {
		return 0
	}
	return time.Duration((1 - b.left) * float64(signInRefill))
}

// fail counts a failure of client.
func (l *limiter) fail(client string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.clients[client]
	if !ok {
		if len(l.clients) >= signInMaxtracks {
			l.prune(now)
		}
		b = &bucket{left: signInBurst, at: now}
		l.clients[client] = b
	}
	b.refill(now)
	b.left = max(0, b.left-1)
}

// prune forgets the clients whose bucket is full again; if none is (a
// flood of addresses), all of them, so memory stays bounded.
func (l *limiter) prune(now time.Time) {
	for c, b := range l.clients {
		if b.refill(now); b.left >= signInBurst {
			delete(l.clients, c)
		}
	}
	if len(l.clients) >= signInMaxtracks {
		clear(l.clients)
	}
}
