// Package apitoken resolves and checks the API's bearer tokens: those of
// interlock.yaml's server.tokens (from a variable or a file) and those an
// AWS deployment keeps in a secret. It reads nothing itself (the caller
// hands it the lookups) and never prints a token's value. It sits below the
// API so that `validate` (internal/project) checks tokens as serve does
// without importing the HTTP API.
package apitoken

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
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

// Reveal is the one way to read the value: for hashing it, nothing else.
func (s Secret) Reveal() string { return string(s) }

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
		if err := checkValue(name, t.Role, source, t.Secret.Reveal()); err != nil {
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
