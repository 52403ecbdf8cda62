package watchdog

import (
	"maps"
	"testing"

	"github.com/interlockhq/interlock/internal/run"
)

// TestAddBreachTimer: of the timers the breach kind lists, only the
// absolute SLA's breach timers set a period in BreachTimers.
func TestAddBreachTimer(t *testing.T) {
	k := run.Key{PipelineID: "p1", ScheduleID: "cron", Period: "2026-03-10"}
	other := run.Key{PipelineID: "p2", ScheduleID: "cron", Period: "2026-03-10"}
	s := &Snapshot{}
	for _, key := range []string{
		run.PeriodTimer(run.TimerSLABreach, k).String(),
		run.PeriodTimer(run.TimerRelSLABreach, other).String(),
		run.PeriodTimer(run.TimerSLAWarning, other).String(),
		"sla-breach/not a key",
		"",
	} {
		s.AddBreachTimer(key)
	}
	if want := map[run.Key]bool{k: true}; !maps.Equal(s.BreachTimers, want) {
		t.Fatalf("BreachTimers = %v, want %v", s.BreachTimers, want)
	}
}
