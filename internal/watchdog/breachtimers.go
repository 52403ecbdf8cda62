package watchdog

import "github.com/interlockhq/interlock/internal/run"

// AddBreachTimer records in BreachTimers the period of a timer listed by
// the breach kind (run.TimerSLABreach) when key is an absolute breach
// timer's: the relative SLA's breach timers share the kind, and a key
// that does not parse names no period.
func (s *Snapshot) AddBreachTimer(key string) {
	if k, err := run.ParseTimerKey(key); err == nil && k.Family == run.TimerSLABreach {
		if s.BreachTimers == nil {
			s.BreachTimers = map[run.Key]bool{}
		}
		s.BreachTimers[k.Run] = true
	}
}
