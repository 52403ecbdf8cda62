package pipeline

import "time"

// Running reports whether a stored pipeline row runs: a file defines it,
// so no removal is recorded (removedAt zero). A removed row keeps its
// history in the store and runs nothing: its timers are dropped as they
// come due, its sensors are refused, it is listed nowhere.
func Running(removedAt time.Time) bool {
	return removedAt.IsZero()
}

// RunningVersion is the config version of a stored pipeline that keeps
// running while a new config for it is refused: the row's, when a row
// exists and runs (Running); 0 when none runs.
func RunningVersion(exists bool, removedAt time.Time, configVersion int64) int64 {
	if !exists || !Running(removedAt) {
		return 0
	}
	return configVersion
}

// CalendarResolves reports whether a stored calendar (removed at
// removedAt, zero while a file defines it) resolves a config's schedule.
// A stored pipeline's config resolves with removed calendars too: one that
// names a calendar whose file went away keeps its resolution (it was
// refused with CONFIG_INVALID when the calendar went). A document being
// loaded (loading), or a stored one checked again as if it were, resolves
// only with the calendars a file defines.
func CalendarResolves(removedAt time.Time, loading bool) bool {
	return !loading || removedAt.IsZero()
}
