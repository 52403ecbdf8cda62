package secret_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/secret"
)

// spellers spell one character each, in a way some encoder does; a
// fuzzed text spells each character of a secret with any of them.
var spellers = []func(r rune) string{
	func(r rune) string { return string(r) },
	func(r rune) string { return pct(r, "%%%02X") },
	func(r rune) string { return pct(r, "%%%02x") },
	func(r rune) string { return pct(r, "%%25%02X") },
	func(r rune) string { return uEscape(r, `\u%04x`) },
	func(r rune) string { return uEscape(r, `\\\u%04X`) },
	func(r rune) string { return fmt.Sprintf("&#%d;", r) },
	func(r rune) string { return fmt.Sprintf("&#X%X;", r) },
	func(r rune) string { return fmt.Sprintf("&amp;#%03d;", r) },
	func(r rune) string {
		if r < 0x80 && !isAlnum(r) {
			return `\\\` + string(r) // JSON of JSON
		}
		if r < 0x100 {
			return fmt.Sprintf(`\x%02x`, r)
		}
		return fmt.Sprintf(`\U%08x`, r)
	},
	func(r rune) string {
		if r == '\\' {
			return `\\` // Python's repr
		}
		return string(r)
	},
}

func pct(r rune, f string) string {
	var b strings.Builder
	for _, c := range []byte(string(r)) {
		fmt.Fprintf(&b, f, c)
	}
	return b.String()
}

func uEscape(r rune, f string) string {
	if r > 0xFFFF {
		r -= 0x10000
		return fmt.Sprintf(f, 0xD800+(r>>10)) + fmt.Sprintf(f, 0xDC00+(r&0x3FF))
	}
	return fmt.Sprintf(f, r)
}

func isAlnum(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// spell spells each character of s with the speller choices picks, in
// turn.
func spell(s string, choices []byte) string {
	var b strings.Builder
	i := 0
	for _, r := range s {
		c := 0
		if len(choices) > 0 {
			c = int(choices[i%len(choices)])
		}
		b.WriteString(spellers[c%len(spellers)](r))
		i++
	}
	return b.String()
}

// Any mixture of spellings of a secret, between any texts, is redacted,
// and text that holds no spelling of it is left as it is.
func FuzzRedactAnySpelling(f *testing.F) {
	f.Add(`Cmd"S3cr\et/Val&ue!é`, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "before ", " after")
	f.Add("emoji-😀-secret", []byte{4, 5, 2}, `\\`, `%`)
	f.Add("sp ace+d'q", []byte{1, 9, 10}, "&amp;", ";")
	f.Fuzz(func(t *testing.T, v string, choices []byte, prefix, suffix string) {
		if len(v) < secret.MinLen || len(v) > secret.MaxSpelled || !utf8.ValidString(v) || !utf8.ValidString(prefix+suffix) {
			return
		}
		for _, r := range v {
			if r < ' ' || r == 0x7f || r == utf8.RuneError || r >= 0x80 && r < 0xa0 {
				return // control characters are another matter (cleaning)
			}
		}
		s := &secret.Set{}
		s.Add(v)
		spelled := spell(v, choices)
		text := prefix + spelled + suffix
		got := s.Redact(text)
		if strings.Contains(got, spelled) || !strings.Contains(got, secret.Redacted) {
			t.Fatalf("secret %q spelled %q: Redact(%q) = %q", v, spelled, text, got)
		}
	})
}

// Redaction never fails on any text, keeps valid text valid, and changes
// nothing but what it replaces by [redacted].
func FuzzRedactArbitraryText(f *testing.F) {
	f.Add("tok-123456", `\\\\\\\\\\\\\\"%25252525&amp;amp;amp;\ud83d\u{1f600}&#x;tok-12`)
	f.Add(`a\b`, `a\\\\\\\\\\\\\\\\\\\\b`)
	f.Fuzz(func(t *testing.T, v, text string) {
		s := &secret.Set{}
		s.Add(v)
		got := s.Redact(text)
		if utf8.ValidString(text) && !utf8.ValidString(got) {
			t.Fatalf("Redact(%q) = %q: invalid UTF-8", text, got)
		}
		if !strings.Contains(got, secret.Redacted) && got != text {
			t.Fatalf("Redact(%q) = %q: changed without redacting", text, got)
		}
		_ = s.RedactCut(text)
		if l := s.Line(text, 100); len(l) > 100 {
			t.Fatalf("Line(_, 100) = %d bytes", len(l))
		}
	})
}

// A cut anywhere in a spelled secret, before its last character, leaves
// nothing of it at the start of the text: RedactCut takes the ending in
// any spelling, with what the cut left of the spelling it fell in.
func TestRedactCutInAnySpelling(t *testing.T) {
	const v = `pässwörd-"r&st/`
	s := &secret.Set{}
	s.Add(v)
	for i := range spellers {
		for _, choices := range [][]byte{{byte(i)}, {byte(i), 0, 1, 2, 4, 6, 9}} {
			enc := spell(v, choices)
			rs := []rune(v)
			last := len(spell(string(rs[:len(rs)-1]), choices))
			for k := 1; k < last; k++ {
				got := s.RedactCut(enc[k:] + " tail")
				if got != "[redacted] tail" {
					t.Errorf("spelled %q, cut at %d: RedactCut(%q) = %q", enc, k, enc[k:]+" tail", got)
				}
			}
		}
	}
}

// A long secret (a key file) is matched as it is and as the common
// encoders print it; it is not spelled character by character.
func TestLongSecretsAreMatchedLiterally(t *testing.T) {
	v := strings.Repeat(`key"/é-`, 50) // 400 bytes
	s := &secret.Set{}
	s.Add(v)
	json := strings.ReplaceAll(v, `"`, `\"`)
	for _, form := range []string{v, json, strings.ReplaceAll(json, "é", `\u00e9`)} {
		if got := s.Redact("<" + form + ">"); got != "<[redacted]>" {
			t.Errorf("Redact(%.40q…) = %.60q…", form, got)
		}
	}
}
