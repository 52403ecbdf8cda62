package engine

import (
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

// TestBoundOutputBoundsAndCleansWhateverTheRunner: the engine holds the
// bound and the control-character rule for every job type, keeps the
// detail it was given, and touches only the event that ends the job.
func TestBoundOutputBoundsAndCleansWhateverTheRunner(t *testing.T) {
	eff := run.Effect{Notes: []run.Note{
		{Type: event.JobFailed, Detail: run.Detail("category", "PERMANENT", "attempt", 1)},
		{Type: event.RetryExhausted, Detail: run.Detail("retries", 0)},
	}}
	out := strings.Repeat("a line\x1b[31m\n", 3000) + "the end"
	eff = run.WithJobOutput(eff, boundOutput(out))
	got, _ := eff.Notes[0].Detail.Get(DetailOutput)
	s, _ := got.Str()
	if len(s) > trigger.MaxOutput || strings.Contains(s, "\x1b") || !strings.HasSuffix(s, "the end") {
		t.Fatalf("output: %d bytes, %.30q…", len(s), s)
	}
	c, _ := eff.Notes[0].Detail.Get("category")
	if cat, _ := c.Str(); cat != "PERMANENT" {
		t.Fatalf("detail lost its fields: %v", eff.Notes[0].Detail.Keys())
	}
	if _, ok := eff.Notes[1].Detail.Get(DetailOutput); ok {
		t.Fatal("RETRY_EXHAUSTED got the output")
	}
	if e := run.WithJobOutput(run.Effect{Notes: []run.Note{{Type: event.JobCompleted, Detail: run.Detail("attempt", 1)}}}, boundOutput("")); e.Notes[0].Detail.Len() != 1 {
		t.Fatal("an empty output added a field")
	}
}
