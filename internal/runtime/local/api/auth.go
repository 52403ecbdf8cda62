package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"unicode"

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
	if strings.IndexFunc(secret, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r > unicode.MaxASCII }) >= 0 {
		return fmt.Errorf("%w %q: the value of %s contains spaces, control or non-ASCII characters", ErrToken, t.Name, source)
	}
	if !slices.Contains(pipeline.Roles(), t.Role) {
		return fmt.Errorf("%w %q: unknown role %q", ErrToken, t.Name, t.Role)
	}
	return nil
}

// rank orders the roles: each includes the ones below it.
type rank int

const (
	rankNone rank = iota
	rankReader
	rankWriter
	rankAdmin
)

func rankOf(r pipeline.Role) rank {
	switch r {
	case pipeline.RoleReader:
		return rankReader
	case pipeline.RoleWriter:
		return rankWriter
	case pipeline.RoleAdmin:
		return rankAdmin
	}
	return rankNone
}

// authenticator checks bearer tokens. It keeps only SHA-256 digests of
// the secrets and compares digests in constant time against every token,
// so neither the time taken nor an early exit tells a caller how close a
// guess was or how long the real token is.
type authenticator struct {
	tokens []storedToken
}

type storedToken struct {
	name   string
	role   pipeline.Role
	digest [sha256.Size]byte
}

func newAuthenticator(tokens []Token) (*authenticator, error) {
	a := &authenticator{}
	for _, t := range tokens {
		if t.Name == "" || t.Secret == "" {
			return nil, fmt.Errorf("%w %q: name and secret are required", ErrToken, t.Name)
		}
		if rankOf(t.Role) == rankNone {
			return nil, fmt.Errorf("%w %q: unknown role %q", ErrToken, t.Name, t.Role)
		}
		a.tokens = append(a.tokens, storedToken{name: t.Name, role: t.Role, digest: sha256.Sum256([]byte(t.Secret.reveal()))})
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
}

// anonymous is the caller when no tokens are configured.
var anonymous = principal{name: "", role: pipeline.RoleAdmin}

// authorize finds the caller of r and checks it holds need. Routes open
// to everyone (need "") are not authenticated at all.
func (a *authenticator) authorize(r *http.Request, need pipeline.Role) (principal, *apiError) {
	if need == "" {
		return principal{}, nil
	}
	if !a.enabled() {
		return anonymous, nil
	}
	secret, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		return principal{}, errorf(http.StatusUnauthorized, codeUnauthorized, "missing bearer token: send Authorization: Bearer <token>")
	}
	digest := sha256.Sum256([]byte(secret))
	found := -1
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(digest[:], a.tokens[i].digest[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return principal{}, errorf(http.StatusUnauthorized, codeUnauthorized, "unknown bearer token")
	}
	t := a.tokens[found]
	p := principal{name: t.name, role: t.role}
	if rankOf(t.role) < rankOf(need) {
		return p, errorf(http.StatusForbidden, codeForbidden, "token %q has role %s; this needs %s", t.name, t.role, need)
	}
	return p, nil
}

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
