// Package textsafe makes text from outside — a job system's answer, a
// program's output, a provider's error — safe to put in an event message,
// a log line or an alert: one line, no control characters, bounded, so it
// can neither forge log lines nor flood a Slack channel. It does not redact:
// internal/secret does, after every cleaning and cut made here.
package textsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mark ends text that was cut.
const Mark = "…"

// Line turns line breaks and tabs into spaces, drops other control and
// format characters, the other characters that print as nothing
// (Invisible), their escapes ("\u200b", see dropEscapes) and invalid
// UTF-8, and collapses runs of spaces.
func Line(s string) string {
	// One pass does what strings.Map then strings.Fields and Join would
	// (every run of white space becomes one space, none at the ends); it
	// runs on every message, over up to 64 KiB.
	b := make([]byte, 0, len(s))
	space := false
	for i := 0; i < len(s); {
		r, w := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(s[i:])
		}
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			space = true
		case r == utf8.RuneError || Invisible(r):
		case r == ' ' || r >= utf8.RuneSelf && unicode.IsSpace(r):
			space = true
		default:
			if space && len(b) > 0 {
				b = append(b, ' ')
			}
			space = false
			b = append(b, s[i:i+w]...)
		}
		i += w
	}
	out := string(b)
	if d := dropEscapes(out); d != out {
		return strings.Join(strings.Fields(d), " ")
	}
	return out
}

// Invisible reports whether r prints as nothing, so that a reader would
// not see it between two halves of a word: a control character (C0, DEL,
// C1), a format character (Cf: zero-width space U+200B, word joiner
// U+2060, byte order mark U+FEFF, soft hyphen, bidirectional controls,
// tags), a variation selector, or another default-ignorable code point
// (U+034F, Hangul fillers …). Line and Lines drop them (line breaks and
// tabs excepted), so text split by them is joined before it is redacted.
func Invisible(r rune) bool {
	if r < utf8.RuneSelf {
		return r < ' ' || r == 0x7f
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

// dropEscapes removes the escapes of invisible characters that JSON,
// Go and most languages print for them — \u001b, \x00, \U0000200b — so
// that text echoed through a JSON answer ("sec\u001bret") reads as the
// raw text would once cleaned. An escape after an odd number of
// backslashes is text ("\\u001b") and is kept. An escape of a line break or tab becomes
// a space. It is one pass that also undoes escapes that only form once an
// inner one is dropped ("\u00\x001b"): each escape is checked as its
// last character is written, so the result holds none and cleaning stays
// idempotent.
func dropEscapes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, s[i])
		if !isHex(s[i]) {
			continue
		}
		for _, e := range escapes {
			n := len(e.prefix) + e.digits
			if len(out) < n || string(out[len(out)-n:len(out)-e.digits]) != e.prefix {
				continue
			}
			v, err := strconv.ParseUint(string(out[len(out)-e.digits:]), 16, 32)
			if err != nil || v > unicode.MaxRune || escaped(out[:len(out)-n]) {
				continue
			}
			switch r := rune(v); {
			case r == '\n' || r == '\r' || r == '\t' || r == '\v' || r == '\f' || r == 0x85 || r == 0x2028 || r == 0x2029:
				out = append(out[:len(out)-n], ' ')
			case Invisible(r):
				out = out[:len(out)-n]
			}
			break
		}
	}
	return string(out)
}

// escaped reports whether b ends with an odd number of backslashes: the
// escape after them is then text, its backslash escaped ("\\\\u200b" in a
// JSON string is "\\u200b", not U+200B). Redaction reads such an escape
// escaped again as what it stands for; cleaning leaves it.
func escaped(b []byte) bool {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}

var escapes = []struct {
	prefix string
	digits int
}{{`\U`, 8}, {`\u`, 4}, {`\x`, 2}}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Truncate cuts s to at most n bytes, Mark included, on a character
// boundary. Text that fits is returned as it is; below room for the mark
// the text is cut without it.
func Truncate(s string, n int) string {
	mark, keep := room(s, n)
	return Prefix(s, keep) + mark
}

// room is how Truncate and Tail cut s to n bytes: the mark they add and
// how many bytes of s they keep — all of s when it fits (no mark), n less
// the mark's length, or n and no mark when there is no room for it.
func room(s string, n int) (mark string, keep int) {
	switch {
	case len(s) <= n:
		return "", len(s)
	case n <= len(Mark):
		return "", n
	}
	return Mark, n - len(Mark)
}

// Prefix is the longest prefix of s of at most n bytes that does not cut
// a character in half.
func Prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Clean is Line then Truncate.
func Clean(s string, n int) string { return Truncate(Line(s), n) }

// Lines is Line for text whose line structure matters (the end of a
// program's output): line breaks are kept, as "\n" ("\r\n", a lone "\r"
// and the Unicode line and paragraph separators become one), tabs become
// spaces, other invisible characters (Invisible), their escapes and
// invalid UTF-8 are dropped, trailing spaces of each line are trimmed.
// Nothing else is removed, so indentation survives. The result can still
// span lines: print it indented or as a JSON string, never as a log line
// of its own.
func Lines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\r' || r == '\u2028' || r == '\u2029':
			return '\n'
		case r == '\t':
			return ' '
		case r == utf8.RuneError || Invisible(r):
			return -1
		}
		return r
	}, s)
	s = dropEscapes(s)
	if !strings.Contains(s, " \n") && !strings.HasSuffix(s, " ") {
		return s
	}
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(ls, "\n")
}

// Tail keeps the end of s, at most n bytes, Mark included, on a
// character boundary: the counterpart of Truncate for text whose end
// matters. Text that fits is returned as it is.
func Tail(s string, n int) string {
	mark, keep := room(s, n)
	return mark + Suffix(s, keep)
}

// Suffix is the longest suffix of s of at most n bytes that does not cut
// a character in half.
func Suffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	cut := len(s) - max(n, 0)
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return s[cut:]
}
