package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
)

func TestPrintJobOutput(t *testing.T) {
	var b bytes.Buffer
	printJobOutput(&b, &engine.JobOutput{Event: event.JobFailed, At: time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC), Attempt: 2,
		Output: "[stdout]\nloading\x1b[2J\n[stderr]\nconnection refused"})
	want := "last output of attempt 2 (JOB_FAILED at 2026-03-10T08:00:00Z):\n" +
		"  | [stdout]\n  | loading[2J\n  | [stderr]\n  | connection refused\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	printJobOutput(&b, nil)
	if b.Len() != 0 {
		t.Fatalf("nil output printed %q", b.String())
	}
}
