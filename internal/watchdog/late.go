package watchdog

import "time"

// LateAfter is how many intervals without a pass make the watchdog late.
const LateAfter = 3

// Late says whether the watchdog, which should pass every interval, is
// late at now: it never passed (lastPass zero), or its last pass is more
// than LateAfter intervals old. A watchdog with no interval (disabled) is
// never late.
func Late(lastPass time.Time, interval time.Duration, now time.Time) bool {
	if interval <= 0 {
		return false
	}
	return lastPass.IsZero() || now.Sub(lastPass) > LateAfter*interval
}
