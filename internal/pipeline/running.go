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
