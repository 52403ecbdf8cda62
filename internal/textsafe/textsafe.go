// Package textsafe makes text from outside — a job system's answer, a
// program's output, a provider's error — safe to put in an event message,
// a log line or an alert: one line, no control characters, bounded, so it
// can neither forge log lines nor flood a Slack channel.
package textsafe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mark ends text that was cut.
const Mark = "…"

// Line turns line breaks and tabs into spaces, drops other control and
// format characters and invalid UTF-8, and collapses runs of spaces.
func Line(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// Truncate cuts s to at most n bytes, Mark included, on a character
// boundary. Text that fits is returned as it is; below room for the mark
// the text is cut without it.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	mark := Mark
	if n <= len(Mark) {
		mark = ""
	}
	return Prefix(s, n-len(mark)) + mark
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
// program's output): line breaks are kept, as "\n" ("\r\n" and a lone
// "\r" become one), tabs become spaces, other control and format
// characters and invalid UTF-8 are dropped, trailing spaces of each line
// are trimmed. Nothing else is removed, so indentation survives. The
// result can still span lines: print it indented or as a JSON string,
// never as a log line of its own.
func Lines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\r':
			return '\n'
		case r == '\t':
			return ' '
		case r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
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
	if len(s) <= n {
		return s
	}
	mark := Mark
	if n <= len(Mark) {
		mark = ""
	}
	return mark + Suffix(s, n-len(mark))
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
