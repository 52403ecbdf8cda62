package httpx

import (
	"cmp"
	"errors"
	"github.com/interlockhq/interlock/internal/textsafe"
	"slices"
	"strings"
)

// MaxSnippet bounds the part of a response body an error or message keeps.
const MaxSnippet = 512

// minSecret is the shortest value redacted. Shorter header values ("1",
// "yes") are no credential, and blanking them would mangle every number
// in a message.
const minSecret = 4

// redacted replaces a secret in text.
const redacted = "[redacted]"

// Secrets collects the values one trigger call must never reveal: every
// header value and every ${env:…} expansion. Everything a runner puts in
// an error or a Result.Message goes through Redact (Snippet and Err do).
// A Secrets belongs to one Start or Poll call; it is not shared.
type Secrets struct {
	values []string
}

// Add marks v as secret.
func (s *Secrets) Add(v string) {
	if len(v) < minSecret || slices.Contains(s.values, v) {
		return
	}
	s.values = append(s.values, v)
	// Longest first, so "Bearer abc…" goes whole before "abc…".
	slices.SortFunc(s.values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
}

// Lookup wraps an environment lookup so every value it returns is secret.
func (s *Secrets) Lookup(env func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := env(name)
		if ok {
			s.Add(v)
		}
		return v, ok
	}
}

// Redact replaces every secret in text.
func (s *Secrets) Redact(text string) string {
	for _, v := range s.values {
		text = strings.ReplaceAll(text, v, redacted)
	}
	return text
}

// RedactCut is Redact for text cut out of a longer whole, whose start may
// fall inside a secret (the end of a program's output, kept in a ring
// buffer): a secret's ending at the very start of text is redacted too,
// since it would show the part of the secret that was not cut off.
func (s *Secrets) RedactCut(text string) string {
	text = s.Redact(text)
	cut := 0
	for _, v := range s.values {
		for k := len(v) - 1; k > cut; k-- {
			if strings.HasPrefix(text, v[len(v)-k:]) {
				cut = k
				break
			}
		}
	}
	if cut == 0 {
		return text
	}
	return redacted + text[cut:]
}

// Snippet is the start of a response body fit for a message: secrets
// redacted (a server may echo the request), control characters removed
// so it cannot forge log lines, at most MaxSnippet bytes.
func (s *Secrets) Snippet(body []byte) string {
	// Redact before and after cleaning: removing a control character can
	// join the halves of a secret.
	return truncate(s.Redact(clean(s.Redact(string(body)))), MaxSnippet)
}

// Err returns err with its text redacted. errors.Is still sees what err
// wraps (ErrBlocked, context.DeadlineExceeded), but the unredacted error
// is not reachable through errors.Unwrap, so no caller can print it.
func (s *Secrets) Err(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: s.Redact(err.Error()), orig: err}
}

type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }

func clean(s string) string { return textsafe.Line(s) }

func truncate(s string, n int) string { return textsafe.Truncate(s, n) }
