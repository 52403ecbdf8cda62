package httpx

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/pipeline"
)

func TestRedactReplacesEverySecretLongestFirst(t *testing.T) {
	s := &Secrets{}
	s.Add("tok-123456")
	s.Add("Bearer tok-123456")
	s.Add("no") // too short to be a credential: left alone
	got := s.Redact("sent Bearer tok-123456, echoed tok-123456; no")
	if want := "sent [redacted], echoed [redacted]; no"; got != want {
		t.Fatalf("Redact = %q, want %q", got, want)
	}
}

func TestRedactCutRedactsASecretsEndingAtTheStart(t *testing.T) {
	s := &Secrets{}
	s.Add("tok-123456")
	s.Add("other-secret")
	s.Add("qqqq-abcdef")
	s.Add("rrrrrrrrrrrr-abc") // longer, so tried first, but its matching ending is shorter
	cases := map[string]string{
		"3456 done":           "[redacted] done",           // the start of the secret was cut off
		"cret and tok-123456": "[redacted] and [redacted]", // and the rest is redacted as usual
		"abcdef x":            "[redacted] x",              // the longest ending of any secret
		"tok-123456 whole":    "[redacted] whole",          // a whole secret is redacted as usual
		"done 3456":           "done 3456",                 // only at the very start
		"xyz":                 "xyz",                       // no secret's ending
		"":                    "",
	}
	for in, want := range cases {
		if got := s.RedactCut(in); got != want {
			t.Errorf("RedactCut(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSnippetCleansRedactsAndTruncates(t *testing.T) {
	s := &Secrets{}
	s.Add("hunter22")
	cases := map[string]struct{ in, want string }{
		"control characters":      {"a\x1b[31mb\x00c\r\nd\te\u202ef", "a[31mbc d ef"},
		"secret":                  {`{"echo":"hunter22"}`, `{"echo":"[redacted]"}`},
		"secret split by control": {"hun\x00ter22", "[redacted]"},
		"invalid UTF-8":           {"ok\xff\xfe!", "ok!"},
	}
	for name, c := range cases {
		if got := s.Snippet([]byte(c.in)); got != c.want {
			t.Errorf("%s: Snippet(%q) = %q, want %q", name, c.in, got, c.want)
		}
	}
	long := s.Snippet([]byte(strings.Repeat("€", 1000)))
	if len(long) > MaxSnippet || !utf8.ValidString(long) || !strings.HasSuffix(long, "…") {
		t.Fatalf("long snippet: %d bytes, valid %v, %q", len(long), utf8.ValidString(long), long[len(long)-6:])
	}
}

func TestErrRedactsAndHidesTheOriginal(t *testing.T) {
	s := &Secrets{}
	s.Add("hunter22")
	err := s.Err(fmt.Errorf("dial 10.0.0.1 with hunter22: %w", ErrBlocked))
	if err.Error() != "dial 10.0.0.1 with [redacted]: "+ErrBlocked.Error() {
		t.Fatalf("Err = %q", err)
	}
	if !errors.Is(err, ErrBlocked) {
		t.Fatal("errors.Is lost ErrBlocked")
	}
	if errors.Unwrap(err) != nil {
		t.Fatal("the original error is reachable")
	}
	if s.Err(nil) != nil {
		t.Fatal("Err(nil) != nil")
	}
}

func TestExpanderRecordsSecrets(t *testing.T) {
	env := func(name string) (string, bool) {
		if name == "INTERLOCK_TOKEN" {
			return "tok-from-env", true
		}
		return "", false
	}
	x := NewExpander(pipeline.TemplateVars{Pipeline: "orders", Date: "2026-03-10"}, env)
	h, err := x.Header("headers", map[string]string{"Authorization": "Bearer ${env:INTERLOCK_TOKEN}", "X-Team": "data-platform"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("Authorization") != "Bearer tok-from-env" {
		t.Fatalf("headers = %v", h)
	}
	u, err := x.Str("url", "https://etl.example.com/${PIPELINE}/${DATE}")
	if err != nil || u != "https://etl.example.com/orders/2026-03-10" {
		t.Fatalf("url = %q, %v", u, err)
	}
	got := x.Secrets.Redact("Bearer tok-from-env | tok-from-env | data-platform | orders")
	if got != "[redacted] | [redacted] | [redacted] | orders" {
		t.Fatalf("Redact = %q", got)
	}
	_, err = x.Map("arguments", map[string]string{"b": "${env:INTERLOCK_B}", "a": "${env:INTERLOCK_A}"})
	if err == nil || !strings.Contains(err.Error(), "job.config.arguments.a: ") || !strings.Contains(err.Error(), "INTERLOCK_A is not set") {
		t.Fatalf("unset variable: %v", err)
	}
}
