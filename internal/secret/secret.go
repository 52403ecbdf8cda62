// Package secret owns redaction: the values a job call or an alert sink
// must never reveal, the forms each takes on the wire, and the one way
// text from outside (a response body, a provider's error, a program's
// output) enters a message, an error or a log line: Set.Line.
//
// The order is the point. Outside text is cleaned first (textsafe: control
// and format characters dropped, which joins a secret printed split by
// ESC, NUL or U+200B), then redacted, then cut on a character boundary,
// then redacted again: nothing shown was transformed after it was
// redacted, and no cut can leave a prefix of a secret that a later
// redaction would no longer recognise.
//
// It must never decide alone what is secret: callers say which values
// carry credentials (FromJob classifies a job's config by where each
// value is used).
package secret

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/textsafe"
)

// Redacted replaces a secret in text.
const Redacted = "[redacted]"

// MinLen is the length of the shortest value redacted. Shorter values
// ("1", "yes") hold no credential, and replacing them would garble every
// number in a message.
const MinLen = 4

// MaxError bounds the text of an error made by Err.
const MaxError = 4 << 10

// Set holds the secrets of one job call or one sink with every form each
// takes on the wire. The zero value is empty and ready; a nil *Set
// redacts nothing but still cleans. A Set is not safe for concurrent use:
// build one per call.
type Set struct {
	forms []string // every form of every secret, longest first
}

// Add marks v as a credential, with its wire forms (see Forms).
func (s *Set) Add(v string) {
	if len(v) < MinLen {
		return
	}
	for _, f := range Forms(v) {
		s.add(f)
	}
}

// AddUserinfo marks the credentials of a URL's user info: the password
// with its forms, and "user:password" as a Basic Authorization header
// and a URL carry it. With no password the user name is the credential
// (a token passed as https://TOKEN@host/).
func (s *Set) AddUserinfo(user, password string) {
	cred := password
	if password == "" {
		cred = user
	}
	if len(cred) < MinLen {
		return
	}
	s.Add(cred)
	pair := user + ":" + password
	for _, f := range base64Forms(pair) {
		s.add(f)
	}
	ui := url.UserPassword(user, password).String()
	if password == "" {
		ui = url.User(user).String()
	}
	s.add(ui)
	if _, escaped, ok := strings.Cut(ui, ":"); ok {
		s.add(escaped)
	}
}

// AddHeader marks the value of HTTP header name as a credential: the
// whole value and, for Authorization and Proxy-Authorization, the
// credential after the auth scheme ("Bearer abc…" → "abc…") and for Basic
// the user info it encodes.
func (s *Set) AddHeader(name, v string) {
	s.Add(v)
	if !strings.EqualFold(name, "Authorization") && !strings.EqualFold(name, "Proxy-Authorization") {
		return
	}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
	cred = strings.TrimSpace(cred)
	if !ok || cred == "" {
		return
	}
	s.Add(cred)
	if strings.EqualFold(scheme, "Basic") {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			if b, err := enc.DecodeString(cred); err == nil {
				if u, p, ok := strings.Cut(string(b), ":"); ok {
					s.AddUserinfo(u, p)
				}
				break
			}
		}
	}
}

// AddURL marks a URL that is itself a credential (a webhook URL whose
// path or query holds the key): the URL, its path, its query and its user
// info.
func (s *Set) AddURL(raw string) {
	s.Add(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if u.Path != "/" {
		s.Add(u.Path)
		s.Add(u.EscapedPath())
	}
	s.Add(u.RawQuery)
	if u.User != nil {
		p, _ := u.User.Password()
		s.AddUserinfo(u.User.Username(), p)
	}
}

// Merge adds every secret of o to s.
func (s *Set) Merge(o *Set) {
	if o == nil {
		return
	}
	for _, f := range o.forms {
		s.add(f)
	}
}

// Empty reports whether s holds no secret.
func (s *Set) Empty() bool { return s == nil || len(s.forms) == 0 }

func (s *Set) add(f string) {
	if len(f) < MinLen || slices.Contains(s.forms, f) {
		return
	}
	s.forms = append(s.forms, f)
	// Longest first, so "Bearer abc…" goes whole before "abc…", and a form
	// that contains another (padded base64) before it.
	slices.SortStableFunc(s.forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
}

// Redact replaces every form of every secret in text. It does not clean:
// text that is cleaned or cut afterwards must be redacted again, so
// outside text goes through Line (or Lines) instead.
func (s *Set) Redact(text string) string {
	if s == nil {
		return text
	}
	for _, f := range s.forms {
		text = strings.ReplaceAll(text, f, Redacted)
	}
	return text
}

// RedactCut is Redact for text cut out of a longer whole, whose start may
// fall inside a secret (the end of a program's output, kept in a ring
// buffer): a secret's ending at the very start of text is redacted too,
// since it would show the part of the secret that was not cut off.
func (s *Set) RedactCut(text string) string {
	text = s.Redact(text)
	if s == nil {
		return text
	}
	cut := 0
	for _, f := range s.forms {
		for k := len(f) - 1; k > cut; k-- {
			if strings.HasPrefix(text, f[len(f)-k:]) {
				cut = k
				break
			}
		}
	}
	if cut == 0 {
		return text
	}
	return Redacted + text[cut:]
}

// Line is the one way outside text enters a one-line message, an error or
// a log line: cleaned (textsafe.Line: one line, no invisible characters),
// redacted, cut to at most n bytes on a character boundary ("…" marks the
// cut), and redacted again. Redacting before the cut means a secret the
// cut would halve is already gone; redacting last means nothing shown was
// changed after it was redacted.
func (s *Set) Line(text string, n int) string {
	t := s.Redact(textsafe.Line(text))
	return s.Redact(textsafe.Truncate(t, n))
}

// Lines is Line for text whose line breaks are kept (textsafe.Lines), not
// cut: the caller cuts, and redacts after (see RedactCut for a start that
// was cut off).
func (s *Set) Lines(text string) string {
	return s.Redact(textsafe.Lines(text))
}

// Err returns err with its text passed through Line (at most MaxError
// bytes). errors.Is still sees what err wraps (a sentinel,
// context.DeadlineExceeded), but the original error is not reachable
// through errors.Unwrap, so no caller can print it.
func (s *Set) Err(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: s.Line(err.Error(), MaxError), orig: err}
}

// Errorf is fmt.Errorf passed through Err.
func (s *Set) Errorf(format string, args ...any) error {
	return s.Err(fmt.Errorf(format, args...))
}

type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }

// Forms are the forms a secret v takes in text that echoes it: v itself;
// v cleaned (textsafe.Line and Lines change a value holding a line break,
// a tab or an invisible character, and text is cleaned before it is
// redacted); v escaped in a JSON string (with and without HTML escaping,
// and ASCII-only as Python prints it) and in a Go string; v escaped for a
// URL query and a URL path; and v in base64 (standard and URL alphabets,
// padded and not). Base64 of v inside a longer encoded value (a Basic
// header's "user:v") is not v's base64: AddUserinfo adds that one.
func Forms(v string) []string {
	out := []string{v, textsafe.Line(v), textsafe.Lines(v), strings.TrimSpace(textsafe.Lines(v))}
	enc := []string{
		jsonString(v, true), jsonString(v, false), asciiJSON(v),
		quoteInner(strconv.Quote(v)), quoteInner(strconv.QuoteToASCII(v)),
		url.QueryEscape(v), url.PathEscape(v),
	}
	enc = append(enc, base64Forms(v)...)
	for _, e := range enc {
		out = append(out, e, textsafe.Line(e))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func base64Forms(v string) []string {
	b := []byte(v)
	return []string{
		base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
	}
}

// jsonString is v as a JSON string's content (without the quotes).
func jsonString(v string, html bool) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(html)
	_ = e.Encode(v)
	return quoteInner(strings.TrimSuffix(b.String(), "\n"))
}

// asciiJSON is v as a JSON string's content with every non-ASCII
// character escaped (\u00e9, surrogate pairs beyond the BMP), as Python's
// json.dumps writes it by default.
func asciiJSON(v string) string {
	s := jsonString(v, false)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func quoteInner(q string) string {
	if len(q) >= 2 {
		return q[1 : len(q)-1]
	}
	return q
}
