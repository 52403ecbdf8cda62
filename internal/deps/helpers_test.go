package deps

import (
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
)

// dayRun is a run of p1's period on the test day, in state st.
func dayRun(st run.State, endedAt time.Time) *run.Run {
	return &run.Run{Key: run.Key{PipelineID: "p1", ScheduleID: "stream", Period: runtest.Day.String()}, State: st, EndedAt: endedAt, Generation: 2}
}
