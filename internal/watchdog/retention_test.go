package watchdog

import (
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// TestLookbackWithinRetention: the retention floor (pipeline.MinRetention)
// counts the watchdog's look back as pipeline.RetentionLookback; a longer
// Lookback would judge periods whose history retention may have deleted.
func TestLookbackWithinRetention(t *testing.T) {
	if Lookback != pipeline.RetentionLookback {
		t.Fatalf("Lookback %v, but retention counts %v: change pipeline.RetentionLookback with it", Lookback, pipeline.RetentionLookback)
	}
}
