package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/apitoken"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// The tokens are apitoken's (validate checks them without this package);
// the names stay here for the API's callers.
type (
	Token  = apitoken.Token
	Secret = apitoken.Secret
)

// ErrToken is wrapped by every error about a token that cannot be used.
var ErrToken = apitoken.ErrToken

// ResolveTokens and CheckTokens are apitoken's (see there).
var (
	ResolveTokens = apitoken.ResolveTokens
	CheckTokens   = apitoken.CheckTokens
)

// authenticator checks bearer tokens and session cookies. It keeps only
// SHA-256 digests of the secrets (and the session keys derived from them)
// and compares digests in constant time against every token, so neither
// the time taken nor an early exit tells a caller how close a guess was
// or how long the real token is.
type authenticator struct {
	tokens []storedToken
	clk    clock.Clock   // dates sessions
	ttl    time.Duration // how long a session lasts
	// anonKey signs the CSRF token of the anonymous caller (no tokens
	// configured): random per process, so a page open across a restart
	// must be reloaded before its next action.
	anonKey []byte
}

type storedToken struct {
	name       string
	role       pipeline.Role
	digest     [sha256.Size]byte
	sessionKey []byte
}

func newAuthenticator(tokens []Token, clk clock.Clock, ttl time.Duration) (*authenticator, error) {
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	a := &authenticator{clk: clk, ttl: ttl, anonKey: randomKey()}
	for _, t := range tokens {
		if t.Name == "" || t.Secret == "" {
			return nil, fmt.Errorf("%w %q: name and secret are required", ErrToken, t.Name)
		}
		if !slices.Contains(pipeline.Roles(), t.Role) {
			return nil, fmt.Errorf("%w %q: unknown role %q", ErrToken, t.Name, t.Role)
		}
		a.tokens = append(a.tokens, storedToken{name: t.Name, role: t.Role, digest: sha256.Sum256([]byte(t.Secret.Reveal())),
			sessionKey: sessionKey(t.Secret.Reveal())})
	}
	return a, nil
}

// enabled reports whether tokens are configured; without, everything is
// allowed (the API is then bound to loopback only).
func (a *authenticator) enabled() bool { return len(a.tokens) > 0 }

// principal is who made a request.
type principal struct {
	name string
	role pipeline.Role
	// csrf is the token a state-changing request of this caller made from
	// a page carries; "" for a bearer token (a page of another origin
	// cannot make a browser send one).
	csrf string
}

// anonymousCSRF is the anonymous caller's CSRF token.
func (a *authenticator) anonymousCSRF() string { return csrfToken(a.anonKey, "anonymous") }

// authorize finds the caller of r and checks it holds need. Routes open
// to everyone (need "") are not authenticated at all. A caller is named
// by a bearer token or, without an Authorization header, by a session
// cookie; a state-changing request made with the cookie must carry the
// session's CSRF token and come from this origin. Without tokens the
// caller is anonymous (admin); a state-changing request a browser page
// made must still carry the CSRF token, so another page open in the
// same browser cannot make one.
func (a *authenticator) authorize(r *http.Request, need pipeline.Role) (principal, *apiError) {
	if need == "" {
		return principal{}, nil
	}
	if !a.enabled() {
		p := anonymous
		p.csrf = a.anonymousCSRF()
		if stateChanging(r.Method) && fromBrowser(r) {
			if aerr := checkCSRF(r, p.csrf); aerr != nil {
				return p, aerr
			}
		}
		return p, nil
	}
	var t storedToken
	var p principal
	if h := r.Header.Get("Authorization"); h != "" || !hasSessionCookie(r) {
		found, aerr := a.bearerToken(h)
		if aerr != nil {
			return principal{}, aerr
		}
		t = a.tokens[found]
		p = principal{name: t.name, role: t.role}
	} else {
		c, _ := r.Cookie(SessionCookie)
		found, ok := a.verifySession(c.Value, a.clk.Now())
		if !ok {
			return principal{}, errorf(http.StatusUnauthorized, codeUnauthorized, "the session has expired or is not valid: sign in again at /sign-in")
		}
		t = a.tokens[found]
		p = principal{name: t.name, role: t.role, csrf: csrfToken(t.sessionKey, c.Value)}
		if stateChanging(r.Method) {
			if aerr := checkCSRF(r, p.csrf); aerr != nil {
				return p, aerr
			}
		}
	}
	if need != "" && !t.role.Includes(need) {
		return p, errorf(http.StatusForbidden, codeForbidden, "token %q has role %s; this needs %s", t.name, t.role, need)
	}
	return p, nil
}

// bearerToken finds the token of an Authorization header.
func (a *authenticator) bearerToken(h string) (int, *apiError) {
	secret, ok := bearer(h)
	if !ok {
		return -1, errorf(http.StatusUnauthorized, codeUnauthorized, "missing bearer token: send Authorization: Bearer <token>")
	}
	found := a.lookup(secret)
	if found < 0 {
		return -1, errorf(http.StatusUnauthorized, codeUnauthorized, "unknown bearer token")
	}
	return found, nil
}

// lookup finds the token whose secret is secret, comparing digests in
// constant time against every token; -1 when none.
func (a *authenticator) lookup(secret string) int {
	digest := sha256.Sum256([]byte(secret))
	found := -1
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(digest[:], a.tokens[i].digest[:]) == 1 {
			found = i
		}
	}
	return found
}

// hasSessionCookie reports whether r carries a session cookie.
func hasSessionCookie(r *http.Request) bool {
	_, err := r.Cookie(SessionCookie)
	return err == nil
}

// checkCSRF refuses a state-changing request a page made unless it comes
// from this origin and carries want in X-CSRF-Token.
func checkCSRF(r *http.Request, want string) *apiError {
	if why := browserCrossOrigin(r); why != "" {
		return errorf(http.StatusForbidden, codeForbidden, "cross-origin request refused: %s; actions are taken from the dashboard's own pages", why)
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" {
		return errorf(http.StatusForbidden, codeForbidden, "missing %s header: a state-changing request made with the session cookie carries the page's CSRF token (<meta name=\"csrf-token\">)", CSRFHeader)
	}
	if !hmac.Equal([]byte(got), []byte(want)) {
		return errorf(http.StatusForbidden, codeForbidden, "wrong %s header: reload the page for the current CSRF token", CSRFHeader)
	}
	return nil
}

// anonymous is the caller when no tokens are configured.
var anonymous = principal{name: "", role: pipeline.RoleAdmin}

// bearer extracts the token of an "Authorization: Bearer <token>" header.
// The scheme is case-insensitive (RFC 9110 §11.1).
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}
