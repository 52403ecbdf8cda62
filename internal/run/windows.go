package run

import "time"

// OpenWindows are the windows a run is inside now, as `interlock explain`
// shows them: when its evaluation window closes (only while it
// evaluates) and when its poll window closes (only while its job runs);
// zero for a window it is not in, or one with no end. A deadline left
// from an earlier state (a run that evaluated, then ran) is not shown.
func (r Run) OpenWindows() (evaluation, poll time.Time) {
	switch r.State {
	case Evaluating:
		return r.EvalDeadline, time.Time{}
	case Running:
		return time.Time{}, r.PollDeadline
	}
	return time.Time{}, time.Time{}
}
