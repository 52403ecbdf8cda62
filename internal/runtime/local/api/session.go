package api

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Sessions of the dashboard. A browser signs in once with a token and
// then carries a session cookie instead of the token. The session is
// stateless, so any replica behind a load balancer accepts it and no
// store holds sessions:
//
//	interlock_session = v1.<token name, base64url>.<expiry, Unix seconds>.<MAC, base64url>
//
// The MAC is HMAC-SHA256 over the version, name and expiry, keyed with a
// key derived from the token's secret (HMAC-SHA256(secret, sessionKeyInfo)).
// Rotating a token's secret or removing the token ends its sessions; a
// forged, altered or expired cookie is refused; nothing in the cookie
// reveals the secret. Verification compares MACs in constant time.
//
// The session's CSRF token is HMAC-SHA256(key, "csrf" + cookie value): a
// page gets it from CallerFrom and sends it in X-CSRF-Token with every
// state-changing request; a page of another origin can neither read it nor
// compute it.

const (
	// SessionCookie is the name of the session cookie.
	SessionCookie = "interlock_session"
	// DefaultSessionTTL is how long a session lasts.
	DefaultSessionTTL = 12 * time.Hour
	// CSRFHeader carries the CSRF token of a cookie-authenticated
	// state-changing request.
	CSRFHeader = "X-CSRF-Token"

	sessionVersion = "v1"
	sessionKeyInfo = "interlock dashboard session key v1"
	// maxSessionCookie bounds what is parsed: a real cookie is far
	// shorter (a token name is short).
	maxSessionCookie = 1024
)

var b64 = base64.RawURLEncoding

// sessionKey derives the key that signs the sessions of a token.
func sessionKey(secret string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(sessionKeyInfo))
	return m.Sum(nil)
}

// randomKey is a fresh key, for the CSRF tokens of the anonymous caller
// (no tokens configured).
func randomKey() []byte {
	k := make([]byte, sha256.Size)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}

func mac(key []byte, parts ...string) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		// Length-prefixed, so no two part lists sign the same bytes.
		m.Write([]byte(strconv.Itoa(len(p)) + ":" + p))
	}
	return m.Sum(nil)
}

// session is a parsed session cookie; its MAC is not checked yet.
type session struct {
	name    string
	expires time.Time
	mac     []byte
}

// parseSession splits a cookie value; ok is false for anything that is
// not a well-formed session (nothing is checked against a key here).
func parseSession(v string) (session, bool) {
	if len(v) > maxSessionCookie {
		return session{}, false
	}
	parts := strings.Split(v, ".")
	if len(parts) != 4 || parts[0] != sessionVersion {
		return session{}, false
	}
	name, err := b64.DecodeString(parts[1])
	if err != nil || len(name) == 0 {
		return session{}, false
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || exp <= 0 || strconv.FormatInt(exp, 10) != parts[2] {
		return session{}, false
	}
	m, err := b64.DecodeString(parts[3])
	if err != nil || len(m) != sha256.Size {
		return session{}, false
	}
	return session{name: string(name), expires: time.Unix(exp, 0), mac: m}, true
}

// newSession returns the cookie value of a session of token name, signed
// with key, ending at expires (whole seconds).
func newSession(key []byte, name string, expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return sessionVersion + "." + b64.EncodeToString([]byte(name)) + "." + exp + "." + b64.EncodeToString(mac(key, sessionVersion, name, exp))
}

// csrfToken is the CSRF token of a session cookie value.
func csrfToken(key []byte, cookie string) string {
	return b64.EncodeToString(mac(key, "csrf", cookie))
}

// verifySession checks a session cookie value: its MAC under the named
// token's key (in constant time) and its expiry against now. It returns
// the index of the token.
func (a *authenticator) verifySession(v string, now time.Time) (int, bool) {
	s, ok := parseSession(v)
	if !ok {
		return -1, false
	}
	found := -1
	for i := range a.tokens {
		if a.tokens[i].name == s.name {
			found = i
		}
	}
	if found < 0 {
		return -1, false
	}
	exp := strconv.FormatInt(s.expires.Unix(), 10)
	if !hmac.Equal(s.mac, mac(a.tokens[found].sessionKey, sessionVersion, s.name, exp)) {
		return -1, false
	}
	// Expired, or further ahead than a session lasts (signed under a
	// longer TTL since shortened).
	if !now.Before(s.expires) || s.expires.Sub(now) > a.ttl {
		return -1, false
	}
	return found, true
}

// sessionCookie is the cookie that carries value; expires zero deletes it.
// Secure when the request came over TLS, directly or through a proxy
// that says so (X-Forwarded-Proto: https): a client that lies about it
// only keeps its own cookie from coming back over plain HTTP.
func sessionCookie(r *http.Request, value string, expires time.Time) *http.Cookie {
	c := &http.Cookie{Name: SessionCookie, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r)}
	if expires.IsZero() {
		c.MaxAge = -1
		c.Value = ""
	} else {
		c.Expires = expires.UTC()
	}
	return c
}

// overTLS reports whether the browser reached us over TLS.
func overTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")
}

// stateChanging reports whether a request of this method changes state.
func stateChanging(method string) bool {
	return method != http.MethodGet && method != http.MethodHead
}

// browserCrossOrigin says why r was sent by a page of another origin, or
// "" when it was not: Sec-Fetch-Site other than same-origin (or none, a
// user's own navigation), or an Origin whose host is not the one the
// request was sent to (its Host, or the X-Forwarded-Host a proxy sets).
// Requests without these headers (curl, the CLI) are not from a browser
// page and pass.
func browserCrossOrigin(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return "Sec-Fetch-Site is " + strconv.Quote(site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "Origin " + strconv.Quote(truncate(origin, 100)) + " is not this server"
	}
	if strings.EqualFold(u.Host, r.Host) {
		return ""
	}
	if fh := strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Host"), ",")[0]); fh != "" && strings.EqualFold(u.Host, fh) {
		return ""
	}
	return "Origin " + strconv.Quote(truncate(origin, 100)) + " is not this server"
}

// fromBrowser reports whether r carries the headers browsers add to
// requests made by pages (and scripts and tools do not).
func fromBrowser(r *http.Request) bool {
	return r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != "" || r.Header.Get("Cookie") != ""
}
