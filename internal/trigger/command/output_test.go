package command

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/textsafe"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
)

// runScript runs a shell script as a command job whose first argument
// is the secret ${env:INTERLOCK_JOB_SECRET}, and returns its result.
func runScript(t *testing.T, secret, script string) trigger.Result {
	t.Helper()
	r := Runner{LookupEnv: func(name string) (string, bool) { return secret, name == "INTERLOCK_JOB_SECRET" }}
	req := request(t, fmt.Sprintf(`{command: [/bin/sh, -c, %q, sh, "${env:INTERLOCK_JOB_SECRET}"], timeout: 30s}`, script))
	st, err := r.Start(context.Background(), req)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if st.Result == nil {
		t.Fatal("no result")
	}
	return *st.Result
}

// section is the lines shown under a stream's marker.
func section(t *testing.T, out, stream string) []string {
	t.Helper()
	_, after, ok := strings.Cut(out, "["+stream+"]\n")
	if !ok {
		return nil
	}
	after, _, _ = strings.Cut(after, "\n[")
	return strings.Split(after, "\n")
}

func TestStdoutAndStderrAreKeptApart(t *testing.T) {
	res := runScript(t, "unused-secret", `echo out-1; echo err-1 >&2; echo out-2; exit 4`)
	if res.Status != trigger.StatusFailed || res.Category != run.Permanent {
		t.Fatalf("result %+v", res)
	}
	if want := "[stdout]\nout-1\nout-2\n[stderr]\nerr-1"; res.Output != want {
		t.Fatalf("Output = %q, want %q", res.Output, want)
	}
	// The message quotes the last line of stderr, where the error is.
	if !strings.HasSuffix(res.Message, "exited with status 4: err-1") {
		t.Fatalf("Message = %q", res.Message)
	}

	// A chatty stdout cannot push the error out of view.
	res = runScript(t, "unused-secret", `i=0; while [ $i -lt 500 ]; do echo progress $i; i=$((i+1)); done; echo "fatal: no such table" >&2; exit 1`)
	if got := section(t, res.Output, "stderr"); len(got) != 1 || got[0] != "fatal: no such table" {
		t.Fatalf("stderr section %q of %q", got, res.Output)
	}
	if got := section(t, res.Output, "stdout"); len(got) != tailLines || got[0] != textsafe.Mark+"progress 480" || got[tailLines-1] != "progress 499" {
		t.Fatalf("stdout section %q", got)
	}

	// Success keeps its output too; a stream that printed nothing is left
	// out, and so is the output of a silent program.
	res = runScript(t, "unused-secret", `echo "wrote 42 rows"`)
	if res.Status != trigger.StatusSucceeded || res.Output != "[stdout]\nwrote 42 rows" {
		t.Fatalf("result %+v", res)
	}
	if res := runScript(t, "unused-secret", `exit 0`); res.Output != "" {
		t.Fatalf("silent program: Output = %q", res.Output)
	}
	// A program killed by its timeout still shows what it printed.
	r := Runner{}
	st, err := r.Start(context.Background(), request(t, `{command: [/bin/sh, -c, "echo started; exec /bin/sleep 5"], timeout: 200ms}`))
	if err != nil || st.Result == nil || st.Result.Category != run.Timeout || st.Result.Output != "[stdout]\nstarted" {
		t.Fatalf("timeout: %+v, %v", st.Result, err)
	}
}

func TestLotsOfOutputKeepsABoundedTail(t *testing.T) {
	// About 8 MB on stdout in many lines, then 5 MB on one stderr line.
	res := runScript(t, "unused-secret", `yes "a line of output" | head -n 500000; echo last-line; head -c 5000000 /dev/zero | tr '\0' x >&2; echo END >&2`)
	if res.Status != trigger.StatusSucceeded {
		t.Fatalf("result %+v", res)
	}
	out := section(t, res.Output, "stdout")
	if len(out) != tailLines || out[0] != textsafe.Mark+"a line of output" || out[tailLines-1] != "last-line" {
		t.Fatalf("stdout tail %q", out)
	}
	errTail := section(t, res.Output, "stderr")
	if len(errTail) != 1 || len(errTail[0]) != tailBytes || !strings.HasPrefix(errTail[0], textsafe.Mark+"xxx") || !strings.HasSuffix(errTail[0], "xEND") {
		t.Fatalf("stderr tail: %d lines, %d bytes, %.20q…", len(errTail), len(errTail[0]), errTail[0])
	}
	if len(res.Output) > 2*tailBytes+len("[stdout]\n[stderr]\n\n") || len(res.Output) > trigger.MaxOutput {
		t.Fatalf("Output is %d bytes", len(res.Output))
	}
}

func TestRingKeepsTheLastBytesInBoundedMemory(t *testing.T) {
	const size = 1000
	var all bytes.Buffer
	r := newRing(size)
	// Writes of every awkward size: smaller than the ring, exactly it,
	// larger, and ones that wrap.
	for i, n := range []int{1, 7, 999, 1000, 1001, 333, 4096, 1, 70000, 17, 998, 2} {
		p := bytes.Repeat([]byte{byte('a' + i)}, n)
		p[0] = '|'
		all.Write(p)
		if _, err := r.Write(p); err != nil {
			t.Fatal(err)
		}
		if len(r.buf) != size || cap(r.buf) != size {
			t.Fatalf("after %d writes the ring holds %d bytes (cap %d), want %d", i+1, len(r.buf), cap(r.buf), size)
		}
		got, cut := r.bytes()
		want := all.Bytes()
		if len(want) > size {
			want = want[len(want)-size:]
		}
		if !bytes.Equal(got, want) || cut != (all.Len() > size) {
			t.Fatalf("after %d writes: bytes %q (cut %v), want %q", i+1, got, cut, want)
		}
	}
	if got, cut := newRing(size).bytes(); len(got) != 0 || cut {
		t.Fatalf("empty ring: %q %v", got, cut)
	}
	// Writes that end exactly at the ring's end, the first time round.
	r = newRing(size)
	_, _ = r.Write(bytes.Repeat([]byte("a"), 400))
	_, _ = r.Write(bytes.Repeat([]byte("b"), 600))
	if got, cut := r.bytes(); len(got) != size || cut {
		t.Fatalf("a ring just filled holds %d bytes (cut %v), want %d", len(got), cut, size)
	}
}

func TestSecretSplitByControlCharactersIsRedacted(t *testing.T) {
	const secret = "S3CRET-tok-4242"
	// The program prints the secret with an escape and a NUL inside it,
	// so it is only whole once control characters are removed.
	res := runScript(t, secret, `printf 'token=S3CR\033ET-\000tok-4242\n' >&2; printf 'arg=%s\n' "$1"; exit 2`)
	for _, s := range []string{res.Output, res.Message} {
		if strings.Contains(s, secret) || strings.Contains(s, "\x1b") || strings.Contains(s, "\x00") {
			t.Fatalf("the secret or a control character shows: %q", s)
		}
	}
	if want := "[stdout]\narg=[redacted]\n[stderr]\ntoken=[redacted]"; res.Output != want {
		t.Fatalf("Output = %q, want %q", res.Output, want)
	}
	if !strings.HasSuffix(res.Message, ": token=[redacted]") {
		t.Fatalf("Message = %q", res.Message)
	}
}

func TestFailureMessageIsOneBoundedLine(t *testing.T) {
	res := runScript(t, "unused-secret", `{ printf 'first\n'; head -c 5000 /dev/zero | tr '\0' y; printf '\033[31m tail\n'; } >&2; exit 1`)
	if strings.ContainsAny(res.Message, "\n\x1b") || len(res.Message) > maxMessage+len("/bin/sh exited with status 1: ") || !utf8.ValidString(res.Message) || !strings.HasSuffix(res.Message, textsafe.Mark) {
		t.Fatalf("Message = %.60q… (%d bytes)", res.Message, len(res.Message))
	}
}

// TestSecretStraddlingTheTailCutIsRedacted puts the 2 KiB cut inside the
// secret at every position: no end of it may show.
func TestSecretStraddlingTheTailCutIsRedacted(t *testing.T) {
	const secret = "S3CRET-9876-XYZW"
	for j := 1; j < len(secret); j++ { // j bytes of the secret fall inside the tail
		filler := tailBytes - len(textsafe.Mark) - j
		res := runScript(t, secret, fmt.Sprintf(`printf 'start %%s' "$1"; head -c %d /dev/zero | tr '\0' .`, filler))
		if strings.Contains(res.Output, secret[len(secret)-j:]) {
			t.Fatalf("cut %d bytes before its end, the secret shows its end %q: %q", j, secret[len(secret)-j:], res.Output[:40])
		}
	}
}

// TestSecretStraddlingTheCaptureStartIsRedacted puts the start of the
// ring buffer inside the secret, and hides the bytes before the tail in
// NULs that cleaning removes, so what is left of the secret would be in
// the tail.
func TestSecretStraddlingTheCaptureStartIsRedacted(t *testing.T) {
	const secret = "S3CRET-9876-XYZW"
	for _, j := range []int{1, 4, len(secret) - 1} { // j bytes of the secret are in the ring
		nuls := captureBytes - j - len("end\n")
		res := runScript(t, secret, fmt.Sprintf(`printf '%%s' "$1"; head -c %d /dev/zero; echo end`, nuls))
		if want := "[stdout]\n" + textsafe.Mark + "[redacted]end"; res.Output != want {
			t.Fatalf("%d bytes of the secret in the ring: Output = %q, want %q", j, res.Output, want)
		}
	}
}

// TestSecretAcrossTheLineCutIsRedacted: a secret with a line break (a
// key file) across the 20-line cut shows neither half.
func TestSecretAcrossTheLineCutIsRedacted(t *testing.T) {
	// 21 lines as printed, so a cut before redaction would keep the
	// secret's second line; redacted first, they are 20.
	const secret = "key-line-one-AAAA\nkey-line-two-BBBB"
	res := runScript(t, secret, `printf '%s\n' "$1"; i=0; while [ $i -lt 19 ]; do echo line $i; i=$((i+1)); done`)
	if strings.Contains(res.Output, "BBBB") || strings.Contains(res.Output, "AAAA") {
		t.Fatalf("Output shows part of the secret: %q", res.Output)
	}
	if got := section(t, res.Output, "stdout"); len(got) != tailLines || got[0] != "[redacted]" {
		t.Fatalf("stdout tail %q", got)
	}
}

// TestTailRedactsCleanedFormsOfSecrets: a secret whose line break is
// "\r\n" is still found after cleaning turned it into "\n".
func TestTailRedactsCleanedFormsOfSecrets(t *testing.T) {
	const secret = "crlf-secret-1\r\ncrlf-secret-2\r\n"
	res := runScript(t, secret, `printf 'a %s b' "$1" | tr -d '\r'`)
	if strings.Contains(res.Output, "crlf-secret") {
		t.Fatalf("Output = %q", res.Output)
	}
	var s httpx.Secrets
	s.Add("zz-token")
	if got := tail(ringOf("zz-\x00token"), &s); got != "[redacted]" {
		t.Fatalf("tail = %q", got)
	}
}

func ringOf(s string) *ring {
	r := newRing(captureBytes)
	_, _ = r.Write([]byte(s))
	return r
}

// TestMessageRedactsAfterCollapsingSpaces: the message folds runs of
// spaces, which can make a secret whole.
func TestMessageRedactsAfterCollapsingSpaces(t *testing.T) {
	const secret = "pass phrase words"
	res := runScript(t, secret, `echo 'failed with pass  phrase   words' >&2; exit 1`)
	if strings.Contains(res.Message, secret) || !strings.HasSuffix(res.Message, "failed with [redacted]") {
		t.Fatalf("Message = %q", res.Message)
	}
}
