package command

import (
	"strings"

	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/textsafe"
)

// How much of a command's output is kept. Each stream (stdout, stderr) is
// captured through its own ring buffer of captureBytes, whatever the
// program prints, and shown as its last tailLines lines or tailBytes
// bytes, whichever is smaller. Streams are kept apart so a chatty stdout
// cannot push the error on stderr out of view. The capture is larger than
// the tail so that redaction sees every secret whole before the tail is
// cut (see tail).
const (
	captureBytes = 64 << 10
	tailLines    = 20
	tailBytes    = 2 << 10
)

// ring keeps the last size bytes written to it, in at most size bytes of
// memory, however much is written. It is the io.Writer of one stream: exec
// writes to it from one goroutine, and it is read after the program ended.
type ring struct {
	size  int
	buf   []byte // allocated at the first write
	next  int    // where the next byte goes
	full  bool   // buf has wrapped: it holds size bytes, the oldest at next
	total int64  // bytes written
}

func newRing(size int) *ring { return &ring{size: size} }

func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	r.total += int64(n)
	if r.buf == nil {
		r.buf = make([]byte, r.size)
	}
	if n >= r.size {
		copy(r.buf, p[n-r.size:])
		r.next, r.full = 0, true
		return n, nil
	}
	c := copy(r.buf[r.next:], p)
	copy(r.buf, p[c:])
	if r.next+n >= r.size {
		r.full = true
	}
	r.next = (r.next + n) % r.size
	return n, nil
}

// bytes returns what the ring holds, oldest first, and whether earlier
// bytes were dropped.
func (r *ring) bytes() ([]byte, bool) {
	if !r.full {
		return r.buf[:r.next], false
	}
	out := make([]byte, 0, r.size)
	out = append(out, r.buf[r.next:]...)
	out = append(out, r.buf[:r.next]...)
	return out, r.total > int64(r.size)
}

// tail renders one stream's capture for Result.Output. The order is what
// keeps secrets out (package secret):
//
//  1. clean (textsafe.Lines), which joins the halves of a secret split by
//     an invisible character, and only then redact, over the whole
//     capture (secrets.Lines; a secret that cleaning changes, such as
//     "\r\n" in a file secret, is found by its cleaned form), and when the
//     ring dropped bytes also a secret's ending at its start (RedactCut);
//  2. only then cut the last lines and bytes, on a character boundary:
//     a secret straddling that cut was already redacted, so no half of it
//     can show;
//  3. redact once more, which costs nothing and holds whatever step 2
//     might become.
func tail(r *ring, secrets *secret.Set) string {
	raw, cut := r.bytes()
	s := secrets.Lines(string(raw))
	if cut {
		s = secrets.RedactCut(s)
	}
	s = strings.TrimRight(s, "\n")
	if i := lastLinesStart(s, tailLines); i > 0 {
		s, cut = s[i:], true
	}
	if len(s) > tailBytes {
		s, cut = textsafe.Suffix(s, tailBytes-len(textsafe.Mark)), true
	}
	if cut && s != "" {
		s = textsafe.Mark + s
	}
	return secrets.Redact(s)
}

// lastLinesStart is the index in s where its last n lines begin.
func lastLinesStart(s string, n int) int {
	i := len(s)
	for range n {
		i = strings.LastIndexByte(s[:i], '\n')
		if i < 0 {
			return 0
		}
	}
	return i + 1
}

// output joins the tails of both streams, each under its name; a stream
// that printed nothing is left out.
func output(stdout, stderr string) string {
	var parts []string
	if stdout != "" {
		parts = append(parts, "[stdout]\n"+stdout)
	}
	if stderr != "" {
		parts = append(parts, "[stderr]\n"+stderr)
	}
	return strings.Join(parts, "\n")
}

// lastLine is the last line of the first non-empty tail: what a failure
// message quotes (usually the error, on stderr).
func lastLine(tails ...string) string {
	for _, t := range tails {
		if t != "" {
			return t[strings.LastIndexByte(t, '\n')+1:]
		}
	}
	return ""
}
