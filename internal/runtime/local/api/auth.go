package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// ErrToken is wrapped by every error about a token that cannot be used.
var ErrToken = errors.New("api token")

// Token is a resolved bearer token: its name and role from interlock.yaml
// and its secret from the environment or a file.
type Token struct {
	Name   string
	Role   pipeline.Role
	Secret Secret
}

// Secret is a token's value. It prints, logs and marshals as "[redacted]",
// so a Token that ends up in a log line or an error does not leak it.
type Secret string

const redacted = "[redacted]"

// String, GoString, LogValue, MarshalJSON and MarshalText redact the value.
func (Secret) String() string               { return redacted }
func (Secret) GoString() string             { return redacted }
func (Secret) LogValue() slog.Value         { return slog.StringValue(redacted) }
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// reveal is the one way to read the value: for hashing it, nothing else.
func (s Secret) reveal() string { return string(s) }

// LogValue logs a token as its name and role.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", t.Name), slog.String("role", string(t.Role)))
}

// String names the token and its role.
func (t Token) String() string { return fmt.Sprintf("token %q (%s)", t.Name, t.Role) }

// ResolveTokens reads the secret of every token in s.Server.Tokens from
// its tokenEnv variable or tokenFile. Surrounding whitespace (the
// trailing newline editors add to a file) is dropped. Every problem is reported at
// once, each naming the token and the variable or file, never the value.
func ResolveTokens(s *pipeline.Settings, lookupEnv func(string) (string, bool), readFile func(string) ([]byte, error)) ([]Token, error) {
	if s == nil {
		return nil, nil
	}
	var out []Token
	var errs []error
	seen := map[string]string{} // secret → token name
	for _, t := range s.Server.Tokens {
		secret, err := resolveSecret(t, lookupEnv, readFile)
		if err == nil {
			err = checkSecret(t, secret)
		}
		if err == nil {
			if other, dup := seen[secret]; dup {
				err = fmt.Errorf("%w %q: has the same value as token %q; each token needs its own value", ErrToken, t.Name, other)
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		seen[secret] = t.Name
		out = append(out, Token{Name: t.Name, Role: t.Role, Secret: Secret(secret)})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func resolveSecret(t pipeline.Token, lookupEnv func(string) (string, bool), readFile func(string) ([]byte, error)) (string, error) {
	switch {
	case t.TokenEnv != "":
		if lookupEnv == nil {
			return "", fmt.Errorf("%w %q: environment variable %s cannot be read", ErrToken, t.Name, t.TokenEnv)
		}
		v, ok := lookupEnv(t.TokenEnv)
		if !ok {
			return "", fmt.Errorf("%w %q: environment variable %s is not set", ErrToken, t.Name, t.TokenEnv)
		}
		v = strings.TrimSpace(v)
		if v == "" {
			return "", fmt.Errorf("%w %q: environment variable %s is empty", ErrToken, t.Name, t.TokenEnv)
		}
		return v, nil
	case t.TokenFile != "":
		if readFile == nil {
			return "", fmt.Errorf("%w %q: token file %s cannot be read", ErrToken, t.Name, t.TokenFile)
		}
		b, err := readFile(t.TokenFile)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is in the message already
			}
			return "", fmt.Errorf("%w %q: token file %s: %v", ErrToken, t.Name, t.TokenFile, err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("%w %q: token file %s is empty", ErrToken, t.Name, t.TokenFile)
		}
		return v, nil
	}
	return "", fmt.Errorf("%w %q: needs tokenEnv or tokenFile", ErrToken, t.Name)
}

// checkSecret refuses values a client could not send in an Authorization
// header, so a misconfigured token fails at start, not at every request.
func checkSecret(t pipeline.Token, secret string) error {
	source := "environment variable " + t.TokenEnv
	if t.TokenEnv == "" {
		source = "token file " + t.TokenFile
	}
	return checkValue(t.Name, t.Role, source, secret)
}

// checkValue checks a token's value (read from source) and role.
func checkValue(name string, role pipeline.Role, source, secret string) error {
	t := pipeline.Token{Name: name, Role: role}
	if strings.IndexFunc(secret, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r > unicode.MaxASCII }) >= 0 {
		return fmt.Errorf("%w %q: the value of %s contains spaces, control or non-ASCII characters", ErrToken, t.Name, source)
	}
	if !slices.Contains(pipeline.Roles(), t.Role) {
		return fmt.Errorf("%w %q of %s: unknown role %q (want one of reader, writer, operator, admin)", ErrToken, t.Name, source, t.Role)
	}
	return nil
}

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
		a.tokens = append(a.tokens, storedToken{name: t.Name, role: t.Role, digest: sha256.Sum256([]byte(t.Secret.reveal())),
			sessionKey: sessionKey(t.Secret.reveal())})
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

// CheckTokens checks tokens resolved elsewhere than interlock.yaml (the
// api function's, from a Secrets Manager secret that source names) as
// ResolveTokens checks those of server.tokens: each has a name, a known
// role and a value a client can send in an Authorization header, and no
// value is used twice. Every problem is reported at once, each naming the
// token and source, never the value.
func CheckTokens(source string, tokens []Token) error {
	var errs []error
	seen := map[Secret]string{}
	for i, t := range tokens {
		name := t.Name
		switch {
		case strings.TrimSpace(t.Name) == "":
			errs = append(errs, fmt.Errorf("%w %d in %s: needs a name", ErrToken, i+1, source))
			continue
		case t.Secret == "":
			errs = append(errs, fmt.Errorf("%w %q in %s: needs a value", ErrToken, name, source))
			continue
		}
		if err := checkValue(name, t.Role, source, t.Secret.reveal()); err != nil {
			errs = append(errs, err)
			continue
		}
		if other, dup := seen[t.Secret]; dup {
			errs = append(errs, fmt.Errorf("%w %q in %s: has the same value as token %q; each token needs its own value", ErrToken, name, source, other))
			continue
		}
		seen[t.Secret] = name
	}
	return errors.Join(errs...)
}
