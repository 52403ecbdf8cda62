package alert_test

import (
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/alert"
)

// A secret that contains another is redacted whole, whatever the order.
func TestRedactLongestFirst(t *testing.T) {
	got := alert.Redact("token=abcd-efgh-ijkl sent", "abcd", "abcd-efgh-ijkl", "xy")
	if strings.Contains(got, "efgh") || strings.Contains(got, "abcd") || got != "token=[redacted] sent" {
		t.Fatalf("Redact = %q", got)
	}
	if got := alert.Redact("xy stays", "xy"); got != "xy stays" {
		t.Fatalf("a secret under four characters was redacted: %q", got)
	}
}

// A secret's wire forms are redacted too (issue 10): base64, as a Basic
// header or a token file carries it, and JSON-escaped.
func TestRedactWireForms(t *testing.T) {
	got := alert.Redact(`sent eG94Yi0xMjMiNDU= and xoxb-123\"45`, `xoxb-123"45`)
	if got != "sent [redacted] and [redacted]" {
		t.Fatalf("Redact = %q", got)
	}
}
