// Package secret owns redaction: the values a job call or an alert sink
// must never reveal, the forms each takes on the wire, and the one way
// text from outside (a response body, a provider's error, a program's
// output) enters a message, an error or a log line: Set.Line.
//
// The order is the point. Outside text is cleaned first (textsafe: control
// and format characters dropped, which joins a secret printed split by
// ESC, NUL or U+200B), then redacted, then cut on a character boundary,
// then, if it was cut, redacted again: nothing shown was transformed after
// it was redacted, and no cut can leave a prefix of a secret that a later
// redaction would no longer recognise.
//
// A secret is recognised in every form it takes on the wire: base64, and
// escaped the way any encoder escapes it — each character of it as itself
// or in any of its escaped spellings (percent-encoding, backslash escapes
// after any number of backslashes, HTML references; spell.go), so that
// the output of encoders nobody listed, mixtures of them and text encoded
// several times are matched by one pass over the text (match.go).
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
	"sync"
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

// Set holds the secrets of one job call or one sink and the forms each
// takes on the wire. The zero value is empty and ready; a nil *Set
// redacts nothing but still cleans. Add to a Set before sharing it: once
// it redacts, it may be used from several goroutines.
//
// Every secret of a Set is matched in one pass over the text, in every
// spelling of its characters (see spell.go): percent-encoded in either
// case, JSON, JavaScript, Python or shell escaped, after any number of
// further escapings, or HTML-escaped, each character on its own, so that
// the output of an encoder nobody listed, or of several, is matched too;
// base64 of it likewise. A form longer than MaxSpelled bytes is matched
// as it is and as the common encoders print it (literalForms). The
// matcher is built on first use (microseconds: it holds the forms, not a
// compiled pattern).
type Set struct {
	forms []form // every form of every secret, without duplicates

	mu      sync.Mutex
	built   bool
	match   *matcher // the forms up to MaxSpelled bytes, in every spelling
	literal []string // the literal forms of longer ones, longest first
}

// form is a text to redact in every spelling: a secret, a cleaned form
// of one, or base64 of one (standard alphabet, padded and not; the
// matcher reads the URL alphabet too).
type form struct {
	text   string
	base64 bool
}

// Add marks v as a credential: v, v as cleaning changes it (textsafe.Line
// and Lines change a value holding a line break, a tab or an invisible
// character, and text is cleaned before it is redacted), and base64 of v.
// Base64 of v inside a longer encoded value (a Basic header's "user:v")
// is not v's base64: AddUserinfo adds that one.
func (s *Set) Add(v string) {
	if len(v) < MinLen {
		return
	}
	for _, c := range []string{v, textsafe.Line(v), textsafe.Lines(v), strings.TrimSpace(textsafe.Lines(v))} {
		s.add(form{text: c})
	}
	s.addBase64(v)
}

// addBase64 adds v in base64, padded and not.
func (s *Set) addBase64(v string) {
	s.add(form{text: base64.RawStdEncoding.EncodeToString([]byte(v)), base64: true})
	s.add(form{text: base64.StdEncoding.EncodeToString([]byte(v)), base64: true})
}

// AddUserinfo marks the credentials of a URL's user info: the password
// (Add), and base64 of "user:password" as a Basic Authorization header
// carries it. With no password the user name is the credential (a token
// passed as https://TOKEN@host/).
func (s *Set) AddUserinfo(user, password string) {
	cred := password
	if password == "" {
		cred = user
	}
	if len(cred) < MinLen {
		return
	}
	s.Add(cred)
	s.addBase64(user + ":" + password)
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
// path or query holds the key): the URL, its path, its query (as sent and
// decoded) and its user info.
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
	if q, err := url.QueryUnescape(u.RawQuery); err == nil {
		s.Add(q)
	}
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

func (s *Set) add(f form) {
	if len(f.text) < MinLen || slices.Contains(s.forms, f) {
		return
	}
	s.forms = append(s.forms, f)
	s.mu.Lock()
	s.built = false
	s.mu.Unlock()
}

// build makes the matcher of s once (again after an Add).
func (s *Set) build() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.built {
		return
	}
	var spelled []form
	s.literal = s.literal[:0]
	for _, f := range s.forms {
		if len(f.text) > MaxSpelled {
			s.literal = append(s.literal, f.literalForms()...)
			continue
		}
		spelled = append(spelled, f)
	}
	slices.Sort(s.literal)
	s.literal = slices.Compact(s.literal)
	slices.SortStableFunc(s.literal, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	s.match = newMatcher(spelled)
	s.built = true
}

// Redact replaces every form of every secret in text, in every spelling.
// Where matches overlap or touch, their union is replaced once. It does
// not clean: text that is cleaned or cut afterwards must be redacted
// again, so outside text goes through Line (or Lines) instead.
func (s *Set) Redact(text string) string {
	if s.Empty() || text == "" {
		return text
	}
	s.build()
	spans := s.match.find(text, false)
	for _, l := range s.literal {
		for i := 0; ; {
			j := strings.Index(text[i:], l)
			if j < 0 {
				break
			}
			spans = append(spans, span{i + j, i + j + len(l)})
			i += j + len(l)
		}
	}
	return replace(text, merge(spans))
}

// replace puts Redacted in place of each of spans (disjoint, in order).
func replace(text string, spans []span) string {
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, sp := range spans {
		b.WriteString(text[at:sp.start])
		b.WriteString(Redacted)
		at = sp.end
	}
	b.WriteString(text[at:])
	return b.String()
}

// RedactCut is Redact for text cut out of a longer whole, whose start may
// fall inside a secret (the end of a program's output, kept in a ring
// buffer): a secret's ending at the very start of text is redacted too,
// in any spelling, since it would show the part of the secret that was
// not cut off, with what remains of a spelling the cut fell in ("e9" of
// "%C3%A9").
func (s *Set) RedactCut(text string) string {
	text = s.Redact(text)
	if s.Empty() {
		return text
	}
	s.build()
	cut := 0
	if sp := s.match.find(text, true); len(sp) > 0 {
		cut = sp[0].end
	}
	for _, f := range s.literal {
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
// cut), and, if it was cut, redacted again. Redacting before the cut means
// a secret the cut would halve is already gone; redacting last means
// nothing shown was changed after it was redacted (text that was not cut
// is the text just redacted: a second pass would cost as much as the
// first, on every message).
func (s *Set) Line(text string, n int) string {
	t := s.Redact(textsafe.Line(text))
	if c := textsafe.Truncate(t, n); c != t {
		return s.Redact(c)
	}
	return t // not cut: redacted already
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

// literalForms are the forms of a secret too long to match in every
// spelling (MaxSpelled): the value and what the common encoders make of
// it — escaped in a JSON string (with and without HTML escaping, and
// ASCII-only as Python prints it) and in a Go string, escaped for a URL
// query and a URL path — each also cleaned; for base64, both alphabets,
// padded and not.
func (f form) literalForms() []string {
	if f.base64 {
		return []string{f.text, strings.NewReplacer("+", "-", "/", "_").Replace(f.text)}
	}
	v := f.text
	out := []string{v}
	enc := []string{
		jsonString(v, true), jsonString(v, false), asciiJSON(v),
		quoteInner(strconv.Quote(v)), quoteInner(strconv.QuoteToASCII(v)),
		url.QueryEscape(v), url.PathEscape(v),
	}
	for _, e := range enc {
		out = append(out, e, textsafe.Line(e))
	}
	return out
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
