package alert_test

import (
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/alert"
)

// A secret that contains another is redacted whole, whatever the order.
func TestRedactLongestFirst(t *testing.T) {
	got := alert.Redact("token=abcd-efgh-ijkl sent", "abcd", "abcd-efgh-ijkl", "xy")
	if strings.Contains(got, "efgh") || strings.Contains(got, "abcd") || got != "token=[REDACTED] sent" {
		t.Fatalf("Redact = %q", got)
	}
	if got := alert.Redact("xy stays", "xy"); got != "xy stays" {
		t.Fatalf("a secret under four characters was redacted: %q", got)
	}
}
