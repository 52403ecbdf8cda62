package secret_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/secret/secrettest"
)

// benchSecrets are five secrets of the shapes jobs use: a token with
// characters every encoder escapes, a password, a non-ASCII one, an AWS
// secret key and a long bearer token.
var benchSecrets = []string{
	`tok "7f3a\9c/1e+5b&x`,
	"pw-3d9c+e1;a7=b",
	`Cmd"S3cr\et/Val&ue!é`,
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJldGwifQ.c2lnbmF0dXJlLXNlY3JldA",
}

// benchText is 64 KiB of what a job prints: log lines, JSON with escapes,
// URLs with percent-encoding and query strings, HTML, and a few echoes of
// the secrets.
func benchText() string {
	r := rand.New(rand.NewPCG(1, 2))
	lines := []string{
		`2026-03-07T06:30:00Z INFO loading partition dt=2026-03-06 rows=1834221 took=12.4s`,
		`{"level":"warn","msg":"retrying \"s3://bucket/key\" after 503","path":"C:\\data\\in","n":3}`,
		`GET https://api.example.com/v1/items?filter=a%20b&sort=-created&page=2 -> 200`,
		`<p>Job &quot;orders&quot; finished &amp; wrote 12 files &lt;ok&gt;</p>`,
		`Traceback (most recent call last): File "/app/etl.py", line 42, in <module>`,
		`    raise ValueError('bad row: {\'id\': 7, \'name\': \'caf\xe9\'}')`,
	}
	var b strings.Builder
	for b.Len() < 64<<10 {
		if r.IntN(50) == 0 {
			s := benchSecrets[r.IntN(len(benchSecrets))]
			fmt.Fprintf(&b, "echo: %s\n", secrettest.Forms(s)[r.IntN(len(secrettest.Forms(s)))])
			continue
		}
		b.WriteString(lines[r.IntN(len(lines))] + "\n")
	}
	return b.String()[:64<<10]
}

// BenchmarkLine is Set.Line, which every job message, error and alert
// goes through, on 64 KiB (a command's whole capture) with five secrets.
func BenchmarkLine(b *testing.B) {
	s := &secret.Set{}
	for _, v := range benchSecrets {
		s.Add(v)
	}
	text := benchText()
	s.Line("warm up: compile once", 100)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		s.Line(text, len(text))
	}
}

// BenchmarkLineDense is Line on 64 KiB where nearly every byte may begin
// a spelling ("%", "\", "&" and the secrets' first characters): the worst
// case for the matcher's skipping.
func BenchmarkLineDense(b *testing.B) {
	s := &secret.Set{}
	for _, v := range benchSecrets {
		s.Add(v)
	}
	text := strings.Repeat(`\"%2&t\\pC`, 64<<10/10)
	s.Line("warm up", 100)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s.Line(text, len(text))
	}
}

// BenchmarkFirstUse is the cost of a Set's first use: adding five
// secrets and building the matcher (once per job call or sink).
func BenchmarkFirstUse(b *testing.B) {
	for b.Loop() {
		s := &secret.Set{}
		for _, v := range benchSecrets {
			s.Add(v)
		}
		s.Redact("x")
	}
}

// BenchmarkLineMessage is Line on what most messages are: an answer's
// first 512 bytes.
func BenchmarkLineMessage(b *testing.B) {
	s := &secret.Set{}
	for _, v := range benchSecrets {
		s.Add(v)
	}
	text := benchText()[:512]
	s.Line("warm up", 100)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		s.Line(text, 512)
	}
}

// BenchmarkRedactOnly is Redact alone on BenchmarkLine's text.
func BenchmarkRedactOnly(b *testing.B) {
	s := &secret.Set{}
	for _, v := range benchSecrets {
		s.Add(v)
	}
	text := benchText()
	s.Redact("x")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s.Redact(text)
	}
}

// BenchmarkRedactAdversarial is Redact on 64 KiB made to keep threads
// alive or spellings long: it must stay linear.
func BenchmarkRedactAdversarial(b *testing.B) {
	const n = 64 << 10
	cases := []struct{ name, secret, text string }{
		{"backslashes", `a\"b\\c`, strings.Repeat(`\`, n) + `"`},
		{"backslash-secret", `\\\\\\\\`, strings.Repeat(`\`, n)},
		{"percent-25", `%"abc`, strings.Repeat("%"+strings.Repeat("25", 20)+"22", n/43)},
		{"amp", `&"abc`, strings.Repeat("&"+strings.Repeat("amp;", 10)+"quot;", n/46)},
		{"periodic", strings.Repeat("a", 256), strings.Repeat("a", n)},
		{"escapes", `"\/'`, strings.Repeat(`\u0022\\\/\'`, n/13)},
		{"surrogates", "😀😀😀😀", strings.Repeat(`\ud83d`+strings.Repeat(`\`, 100)+`ude00`, n/112)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := &secret.Set{}
			s.Add(c.secret)
			s.Redact("x")
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				s.Redact(c.text)
			}
		})
	}
}
