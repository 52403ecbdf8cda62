package cli

import (
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// TestBackfillProgress: the bar a terminal shows fills with the periods
// done (succeeded, failed or skipped) of all; the JSON line a pipe gets
// says the same.
func TestBackfillProgress(t *testing.T) {
	b := api.BackfillView{PipelineID: "gold", ID: "3", State: "running", Periods: make([]api.BackfillPeriodView, 4),
		Counts: api.BackfillCounts{Succeeded: 1, Skipped: 1, Active: 1, Pending: 1}}
	bar := progressBar(b)
	if !strings.HasPrefix(bar, "[###############...............] 2/4  1 succeeded, 0 failed, 1 skipped, 1 running, 1 pending") {
		t.Fatalf("progressBar = %q", bar)
	}
	if line := progressLine(b); line != `{"pipelineId":"gold","id":"3","state":"running","done":2,"total":4,"counts":{"pending":1,"active":1,"skipped":1,"succeeded":1,"failed":0}}` {
		t.Fatalf("progressLine = %s", line)
	}
	b.Periods = nil // an empty backfill does not divide by zero
	if bar := progressBar(b); !strings.HasPrefix(bar, "[") {
		t.Fatalf("progressBar of none = %q", bar)
	}
	if isTerminal(&strings.Builder{}) {
		t.Fatal("a buffer is a terminal")
	}
}
