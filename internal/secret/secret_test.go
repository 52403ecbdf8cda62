package secret_test

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/secret/secrettest"
)

// A secret with characters JSON and URL escaping change, so that each
// form differs from the value.
const tok = `tok "7f3a\9c/1e+5b&x`

func set(vs ...string) *secret.Set {
	s := &secret.Set{}
	for _, v := range vs {
		s.Add(v)
	}
	return s
}

func TestRedactReplacesEverySecretLongestFirst(t *testing.T) {
	s := set("tok-123456", "Bearer tok-123456", "no")
	got := s.Redact("sent Bearer tok-123456, echoed tok-123456; no")
	if want := "sent [redacted], echoed [redacted]; no"; got != want {
		t.Fatalf("Redact = %q, want %q", got, want)
	}
}

// Issue 10 defect 1: text is cleaned before it is redacted, so a secret
// printed split by an invisible character (or its JSON escape) is joined,
// then redacted, never joined after redaction.
func TestLineRedactsASecretSplitByInvisibleCharacters(t *testing.T) {
	s := set(tok)
	for _, split := range secrettest.Splits(tok) {
		got := s.Line("job said: "+split+" (done)", 200)
		if got != "job said: [redacted] (done)" {
			t.Errorf("Line(%q) = %q", split, got)
		}
	}
}

// A cut never leaves the start of a secret that redaction would no longer
// recognise: whole secrets are redacted before the cut.
func TestLineCutLeavesNoPrefixOfASecret(t *testing.T) {
	s := set("abcdefghij-secret")
	text := strings.Repeat("x", 20) + " abcdefghij-secret tail"
	for n := 1; n < len(text)+2; n++ {
		got := s.Line(text, n)
		if len(got) > n || !utf8.ValidString(got) {
			t.Fatalf("Line(_, %d) = %q: %d bytes", n, got, len(got))
		}
		if strings.Contains(got, "abcdefgh") || strings.Contains(got, "abcd") {
			t.Fatalf("Line(_, %d) = %q shows the start of the secret", n, got)
		}
	}
}

// Issue 10 defect 2: the forms a secret takes on the wire are redacted.
// The oracle is secrettest, written apart from the code under test.
func TestRedactCoversEveryWireForm(t *testing.T) {
	ui := url.UserPassword("interlock", "pw-3d9c+e1;a7=b")
	s := set(tok)
	p, _ := ui.Password()
	s.AddUserinfo(ui.Username(), p)
	echo := secrettest.Echo(tok, ui)
	got := s.Line(echo, 1<<16)
	if leak := secrettest.Leak(got, tok, ui); leak != "" {
		t.Errorf("Line(%q) = %q shows %q", echo, got, leak)
	}
	if n := strings.Count(got, secret.Redacted); n < 20 {
		t.Errorf("Line(%q) = %q: %d redactions", echo, got, n)
	}
	// Python's json.dumps escapes every non-ASCII character.
	s = set("pässwörd-ü")
	if got := s.Line(`{"pw": "p\u00e4ssw\u00f6rd-\u00fc"}`, 100); got != `{"pw": "[redacted]"}` {
		t.Errorf("ASCII JSON: %q", got)
	}
}

func TestAddHeaderRedactsTheCredentialAndWhatBasicEncodes(t *testing.T) {
	s := &secret.Set{}
	s.AddHeader("Authorization", "Bearer abc-123-secret")
	if got := s.Redact("token abc-123-secret"); got != "token [redacted]" {
		t.Errorf("Bearer credential: %q", got)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("etl:hunter2-pw"))
	s = &secret.Set{}
	s.AddHeader("authorization", "Basic "+basic)
	if got := s.Redact("pw hunter2-pw, header " + basic); got != "pw [redacted], header [redacted]" {
		t.Errorf("Basic: %q", got)
	}
	// Only auth headers are split at a space: X-Team: "data platform"
	// does not make "platform" a secret.
	s = &secret.Set{}
	s.AddHeader("X-Team", "data platform")
	if got := s.Redact("team data platform runs on platform"); got != "team [redacted] runs on platform" {
		t.Errorf("other header: %q", got)
	}
}

func TestAddURLRedactsPathQueryAndUserinfo(t *testing.T) {
	s := &secret.Set{}
	s.AddURL("https://u:p4ss-word@hooks.example.com/services/T0/B0/XyZ123?key=k3y-value")
	got := s.Redact("/services/T0/B0/XyZ123 key=k3y-value p4ss-word host hooks.example.com")
	if got != "[redacted] [redacted] [redacted] host hooks.example.com" {
		t.Fatalf("Redact = %q", got)
	}
}

func TestRedactCutRedactsASecretsEndingAtTheStart(t *testing.T) {
	s := set("tok-123456", "other-secret", "qqqq-abcdef", "rrrrrrrrrrrr-abc")
	cases := map[string]string{
		"3456 done":           "[redacted] done",
		"cret and tok-123456": "[redacted] and [redacted]",
		"abcdef x":            "[redacted] x",
		"tok-123456 whole":    "[redacted] whole",
		"done 3456":           "done 3456",
		"xyz":                 "xyz",
		"":                    "",
	}
	for in, want := range cases {
		if got := s.RedactCut(in); got != want {
			t.Errorf("RedactCut(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrCleansRedactsAndHidesTheOriginal(t *testing.T) {
	sentinel := errors.New("blocked")
	s := set("hunter22")
	err := s.Errorf("dial 10.0.0.1 with hun\x1bter22\nforged: %w", sentinel)
	if err.Error() != "dial 10.0.0.1 with [redacted] forged: blocked" {
		t.Fatalf("Err = %q", err)
	}
	if !errors.Is(err, sentinel) || errors.Unwrap(err) != nil {
		t.Fatal("errors.Is lost the sentinel, or the original is reachable")
	}
	if s.Err(nil) != nil {
		t.Fatal("Err(nil) != nil")
	}
	var none *secret.Set
	if got := none.Line("a\x00b", 10); got != "ab" {
		t.Fatalf("a nil Set still cleans: %q", got)
	}
}

// A secret that cleaning changes (a file secret with a CRLF, a tab) is
// found in cleaned text.
func TestCleanedFormsOfASecret(t *testing.T) {
	s := set("line-one\r\nline-two", "tab\tsecret")
	if got := s.Line("a line-one\r\nline-two b tab\tsecret", 100); got != "a [redacted] b [redacted]" {
		t.Fatalf("Line = %q", got)
	}
	if got := s.Lines("line-one\r\nline-two\n"); got != "[redacted]\n" {
		t.Fatalf("Lines = %q", got)
	}
}
