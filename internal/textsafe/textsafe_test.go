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
		if strings.ContainsAny(got, "\n\r\t\x00") || !utf8.ValidString(got) {
			t.Fatalf("Clean(%q, %d) = %q", s, n, got)
		}
		if len(got) > n {
			t.Fatalf("Clean(%q, %d) = %d bytes", s, n, len(got))
		}
	})
}
