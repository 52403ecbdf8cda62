package run

import (
	"testing"
	"time"
)

func TestOpenWindows(t *testing.T) {
	eval, poll := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		state      State
		eval, poll time.Time
	}{
		{Evaluating, eval, time.Time{}},
		{Running, time.Time{}, poll},
		{Triggering, time.Time{}, time.Time{}},
		{Completed, time.Time{}, time.Time{}},
		{FailedFinal, time.Time{}, time.Time{}},
	} {
		e, p := Run{State: c.state, EvalDeadline: eval, PollDeadline: poll}.OpenWindows()
		if !e.Equal(c.eval) || !p.Equal(c.poll) {
			t.Errorf("%s: OpenWindows = %s, %s; want %s, %s", c.state, e, p, c.eval, c.poll)
		}
	}
}
