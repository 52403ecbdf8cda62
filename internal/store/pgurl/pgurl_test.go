package pgurl

import (
	"errors"
	"strings"
	"testing"
)

// TestRedactIn: a password leaves the message whether url.Parse reads the
// URL (a percent-encoded one too) or refuses it (a port that is no number);
// the rest of the message stays. RedactErr and the gcpfn runtime's answers
// both rely on it.
func TestRedactIn(t *testing.T) {
	for _, c := range []struct{ raw, pw string }{
		{"postgres://u:s3cretpw@db/x", "s3cretpw"},
		{"postgres://u:s3cret%2Fpw@db/x", "s3cret/pw"},
		{"postgres://u:s3cretpw@db:port/x", "s3cretpw"},
		{"postgres://u:s3c@retpw@db:port/x", "s3c@retpw"},
	} {
		msg := "dial " + c.raw + ": refused (password " + c.pw + ")"
		got := RedactIn(msg, c.raw)
		if strings.Contains(got, c.pw) || !strings.HasPrefix(got, "dial postgres://u:") || !strings.HasSuffix(got, ": refused (password xxxxx)") {
			t.Errorf("RedactIn(%q) = %q", msg, got)
		}
		if e := RedactErr(errors.New(msg), c.raw); e != got {
			t.Errorf("RedactErr = %q, RedactIn = %q", e, got)
		}
	}
	if got := RedactIn("no password here", "postgres://u@db/x"); got != "no password here" {
		t.Errorf("RedactIn without a password = %q", got)
	}
}
