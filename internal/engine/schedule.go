package engine

import (
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/store"
)

// periodTimer is the timer of a pipeline's next period start (the
// timers of cron ticks and periods are decided by decide.Timer).
func periodTimer(pipelineID string, at time.Time) store.Timer {
	return decide.PeriodTimer(pipelineID, at)
}
