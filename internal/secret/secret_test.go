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
// The oracle is secrettest, written apart from the code under test, with
// its own encoders after other languages'.
func TestRedactCoversEveryWireForm(t *testing.T) {
	ui := url.UserPassword("interlock", "pw-3d9c+e1;a7=b")
	for _, v := range []string{tok, `Cmd"S3cr\et/Val&ue!é`, `Hk"e\y/<b>&9 !~'x(Q)`, "Pw!$&'()*+,;=-._~Zx9", "emoji-😀-secret", "sp ace+d'q"} {
		s := set(v)
		p, _ := ui.Password()
		s.AddUserinfo(ui.Username(), p)
		for i := range secrettest.Parts(v, ui) {
			echo := secrettest.EchoFrom(v, ui, i)
			got := s.Line(echo, 1<<16)
			if leak := secrettest.Leak(got, v, ui); leak != "" {
				t.Errorf("secret %q: Line(%q)\n = %q\nshows %q", v, echo, got, leak)
				break
			}
			if i == 0 && strings.Count(got, secret.Redacted) < 20 {
				t.Errorf("Line(%q) = %q: %d redactions", echo, got, strings.Count(got, secret.Redacted))
			}
		}
		for _, e := range secrettest.Encoders {
			form := e.Encode(v)
			if got := s.Redact("<" + form + ">"); got != "<[redacted]>" {
				t.Errorf("secret %q, %s: Redact(%q) = %q", v, e.Name, form, got)
			}
		}
	}
}

// The forms the review found leaking (issue 10 follow-up, defect 1), as
// each encoder printed them: every one reads as the secret, so every one
// goes whole.
func TestRedactTheFormsOtherEncodersPrint(t *testing.T) {
	cases := []struct{ secret, text, want string }{
		// Python urllib.parse.quote: "/" kept, "~" kept, "!'()" escaped.
		{`Hk"e\y/<b>&9 !~'x(Q)`, `GET /cb?q=Hk%22e%5Cy/%3Cb%3E%269%20%21~%27x%28Q%29 404`, `GET /cb?q=[redacted] 404`},
		// encodeURIComponent: "!'()*" kept.
		{"Pw!$&'()*+,;=-._~Zx9", `u=Pw!%24%26'()*%2B%2C%3B%3D-._~Zx9&x=1`, `u=[redacted]&x=1`},
		// Lower-case percent hex.
		{"ab*+cd-ef", `ab%2a%2bcd-ef`, `[redacted]`},
		// A space as "+", lower-case hex.
		{"two words&more", `q=two+words%26more`, `q=[redacted]`},
		// JSON with \/ (PHP, Java) and \u00e9.
		{`Cmd"S3cr\et/Val&ue!é`, `{"pw":"Cmd\"S3cr\\et\/Val&ue!\u00e9"}`, `{"pw":"[redacted]"}`},
		// JSON encoded twice.
		{`Cmd"S3cr\et/Val&ue!é`, `{"body":"{\"pw\":\"Cmd\\\"S3cr\\\\et/Val&ue!é\"}"}`, `{"body":"{\"pw\":\"[redacted]\"}"}`},
		// HTML-escaped.
		{`Cmd"S3cr\et/Val&ue!'é`, `<td>Cmd&quot;S3cr\et/Val&amp;ue!&#39;é</td>`, `<td>[redacted]</td>`},
		// HTML-escaped twice, and numeric references.
		{`a"b&c'd<e`, `a&amp;quot;b&amp;amp;c&#039;d&#x3C;e`, `[redacted]`},
		// Python's repr of a dict: the backslash doubled, the quote kept.
		{`Cmd"S3cr\et/Val&ue!é`, `{'password': 'Cmd"S3cr\\et/Val&ue!é'}`, `{'password': '[redacted]'}`},
		// Python's ascii(): \xe9 and \U0001f600.
		{"caf\u00e9-😀-pw", `'caf\xe9-\U0001f600-pw'`, `'[redacted]'`},
		// A surrogate pair, in either case.
		{"x😀-secret", `x\ud83d\uDE00-secret`, `[redacted]`},
		// UTF-8 bytes percent-encoded, and as \x escapes.
		{"pässwörd", `p%C3%A4ssw%c3%b6rd p\xc3\xa4ssw\xc3\xb6rd`, `[redacted] [redacted]`},
		// A JSON string in a URL, and a URL encoded twice.
		{`tok"en\x`, `tok%5C%22en%5C%5Cx tok%2522en%255Cx`, `[redacted] [redacted]`},
		// Shell escaping, and Go's JSON of HTML.
		{`p@ss w!rd$`, `p\@ss\ w\!rd\$ p@ss w!rd\u0026#36;`, `[redacted] [redacted]`},
		// A mixture: each character its own way.
		{`S3cr"et/9`, `S%33\u0063&#114;&#x22;%65t\\\/9`, `[redacted]`},
	}
	for _, c := range cases {
		if got := set(c.secret).Redact(c.text); got != c.want {
			t.Errorf("secret %q: Redact(%q) = %q, want %q", c.secret, c.text, got, c.want)
		}
	}
}

// A spelling only reads as the character it stands for: text near a
// secret is not eaten, and other characters' escapes are not taken for
// the secret's.
func TestRedactTakesNothingElse(t *testing.T) {
	s := set(`ab"cd`)
	cases := map[string]string{
		`x ab"cd y`:         `x [redacted] y`,
		`x ab\"cd y`:        `x [redacted] y`,
		`x \\ab\"cd\\ y`:    `x \\[redacted]\\ y`,
		`ab'cd ab\'cd`:      `ab'cd ab\'cd`,
		`ab%23cd ab&#35;cd`: `ab%23cd ab&#35;cd`,
		`ab\u0022ce`:        `ab\u0022ce`,
		`ab"c`:              `ab"c`,
		`aab""cd`:           `aab""cd`,
	}
	for in, want := range cases {
		if got := s.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// Where two secrets overlap, or one spelling begins inside another's, the
// union goes: no part of either is left.
func TestRedactOverlappingSecrets(t *testing.T) {
	s := set("abcd-1234", "1234-wxyz")
	if got := s.Redact("<abcd-1234-wxyz>"); got != "<[redacted]>" {
		t.Fatalf("Redact = %q", got)
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

// Once built, a Set redacts from several goroutines at once (a command's
// two streams, a sink's retries).
func TestRedactConcurrently(t *testing.T) {
	s := set(tok, "pw-3d9c+e1;a7=b")
	echo := secrettest.Echo(tok, nil)
	done := make(chan string)
	for range 8 {
		go func() { done <- s.Line(echo, 1<<16) }()
	}
	for range 8 {
		if got := <-done; secrettest.Leak(got, tok, nil) != "" {
			t.Errorf("Line = %q", got)
		}
	}
}
