package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	cases := map[string]string{
		"a\nb\tc":                "a b c",
		"  spaced   out  ":       "spaced out",
		"esc\x1b[31mred\x00":     "esc[31mred",
		"bidi\u202eoverride":     "bidioverride",
		"bad\xffutf8":            "badutf8",
		"forged\nINFO msg=\"x\"": "forged INFO msg=\"x\"",
		"":                       "",
		// Characters that print as nothing are dropped, so a word split
		// by them reads (and is redacted) whole.
		"zw\u200bsp wj\u2060 bom\ufeff shy\u00ad":   "zwsp wj bom shy",
		"vs\ufe0f cgj\u034f hf\u3164 tag\U000e0041": "vs cgj hf tag",
		"nel\u0085 ls\u2028ps\u2029end":             "nel ls ps end",
		// So are their escapes, as a JSON answer prints them.
		`sec\u001bret sec\u200Bret sec\x00ret sec\U00002060ret`: "secret secret secret secret",
		`nested \u00\x001b done`:                                "nested done",
		`line\u000abreak`:                                       "line break",
		`kept \u00e9 \x41 \u12 \\n C:\x`:                        `kept \u00e9 \x41 \u12 \\n C:\x`,
		// After an odd number of backslashes an escape is text (its
		// backslash escaped): kept, for redaction to read; after an even
		// number it is an escape.
		`sec\\u001bret C:\\x00 sec\\\u200bret`: `sec\\u001bret C:\\x00 sec\\ret`,
	}
	for in, want := range cases {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("short", 10); got != "short" {
		t.Fatalf("fits: %q", got)
	}
	if got := Truncate("abcdefghij", 6); got != "abc…" || len(got) > 6 {
		t.Fatalf("cut: %q (%d bytes)", got, len(got))
	}
	s := strings.Repeat("é", 10) // 2 bytes each
	for n := 0; n < len(s)+2; n++ {
		got := Truncate(s, n)
		if len(got) > n && len(s) > n {
			t.Fatalf("Truncate(_, %d) = %d bytes", n, len(got))
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Truncate(_, %d) split a character: %q", n, got)
		}
	}
}

func FuzzClean(f *testing.F) {
	f.Add("a\nb", 5)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got := Clean(s, n)
		if strings.ContainsAny(got, "\n\r\t\x00\u200b") || !utf8.ValidString(got) {
			t.Fatalf("Clean(%q, %d) = %q", s, n, got)
		}
		if len(Line(s)) <= n && Line(got) != got {
			t.Fatalf("Line is not idempotent on %q", got)
		}
		if len(got) > n {
			t.Fatalf("Clean(%q, %d) = %d bytes", s, n, len(got))
		}
	})
}

func TestLines(t *testing.T) {
	cases := map[string]string{
		"a\nb\tc":                      "a\nb c",
		"crlf\r\nline":                 "crlf\nline",
		"progress\r50%\r":              "progress\n50%\n",
		"  indented  \nnext":           "  indented\nnext",
		"esc\x1b[31mred\x00":           "esc[31mred",
		"bidi\u202eoverride":           "bidioverride",
		"bad\xffutf8":                  "badutf8",
		"hun\x00ter\x1b22":             "hunter22",
		"":                             "",
		"zw\u200bsp\u2060\ufeff\ufe0f": "zwsp",
		"ls\u2028ps\u2029end":          "ls\nps\nend",
		`sec\u001bret \u0000x`:         "secret x",
	}
	for in, want := range cases {
		if got := Lines(in); got != want {
			t.Errorf("Lines(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTail(t *testing.T) {
	if got := Tail("short", 10); got != "short" {
		t.Fatalf("fits: %q", got)
	}
	if got := Tail("abcdefghij", 6); got != "…hij" || len(got) > 6 {
		t.Fatalf("cut: %q (%d bytes)", got, len(got))
	}
	s := strings.Repeat("é", 10) // 2 bytes each
	for n := 0; n < len(s)+2; n++ {
		got := Tail(s, n)
		if len(got) > n && len(s) > n {
			t.Fatalf("Tail(_, %d) = %d bytes", n, len(got))
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Tail(_, %d) split a character: %q", n, got)
		}
	}
}

func FuzzLines(f *testing.F) {
	f.Add("a\r\nb\x00", 5)
	f.Add(`\u00\x001b\u00\u000a`, 9)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got := Tail(Lines(s), n)
		if strings.ContainsAny(got, "\r\t\x00\x1b") || !utf8.ValidString(got) {
			t.Fatalf("Tail(Lines(%q), %d) = %q", s, n, got)
		}
		if len(got) > n && len(Lines(s)) > n {
			t.Fatalf("Tail(Lines(%q), %d) = %d bytes", s, n, len(got))
		}
		if Lines(got) != got {
			t.Fatalf("Lines is not idempotent on %q", got)
		}
	})
}

// Line's one pass does what mapping, then strings.Fields and Join, did.
func FuzzLineMatchesFields(f *testing.F) {
	for _, s := range []string{"a\nb", " \u3000x\u00a0 y\t", "\u2028a\u0085b", "sec\\u001bret \\u000a x", "bad\xffutf8 \ufffd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref := strings.Map(func(r rune) rune {
			switch {
			case r == '\n' || r == '\r' || r == '\t':
				return ' '
			case r == utf8.RuneError || Invisible(r):
				return -1
			}
			return r
		}, s)
		ref = strings.Join(strings.Fields(dropEscapes(ref)), " ")
		if got := Line(s); got != ref {
			t.Fatalf("Line(%q) = %q, want %q", s, got, ref)
		}
	})
}

// TestCutBoundaries: text of exactly n bytes is kept whole, and a cut with
// no more room than the mark itself keeps text, not a lone mark.
func TestCutBoundaries(t *testing.T) {
	for _, c := range []struct {
		n           int
		front, back string
	}{
		{6, "abcdef", "abcdef"},
		{5, "ab…", "…ef"},
		{4, "a…", "…f"},
		{3, "abc", "def"},
		{0, "", ""},
	} {
		if got := Truncate("abcdef", c.n); got != c.front {
			t.Errorf("Truncate(abcdef, %d) = %q, want %q", c.n, got, c.front)
		}
		if got := Tail("abcdef", c.n); got != c.back {
			t.Errorf("Tail(abcdef, %d) = %q, want %q", c.n, got, c.back)
		}
	}
}
