package run

import (
	"testing"
	"time"
)

func TestTimerDue(t *testing.T) {
	at := hm(9, 0)
	cases := []struct {
		name  string
		timer TimerAt
		kind  string
		asked time.Time
		now   time.Time
		want  bool
	}{
		{"due now, any due time asked", TimerAt{"evaluate", at}, "evaluate", time.Time{}, at, true},
		{"overdue, the due time asked", TimerAt{"evaluate", at}, "evaluate", at, hm(9, 5), true},
		{"not yet due", TimerAt{"evaluate", at}, "evaluate", time.Time{}, hm(8, 59), false},
		{"another kind: the run moved to another step", TimerAt{"poll", at}, "evaluate", time.Time{}, at, false},
		{"moved since the caller learned of it (a repeated call)", TimerAt{"trigger", hm(9, 10)}, "trigger", at, hm(9, 20), false},
		{"moved back (re-armed earlier)", TimerAt{"trigger", hm(8, 50)}, "trigger", at, hm(9, 20), false},
		{"the same instant in another zone is the same due time", TimerAt{"cron", at}, "cron", at.In(time.FixedZone("x", 3600)), at, true},
		{"announced rounded up to the second, taken at the announcement", TimerAt{"poll", at.Add(300 * time.Millisecond)}, "poll", at.Add(time.Second), at.Add(time.Second), true},
		{"announced rounded up, taken at the exact due time", TimerAt{"poll", at.Add(300 * time.Millisecond)}, "poll", at.Add(time.Second), at.Add(300 * time.Millisecond), true},
		{"announced rounded up, arriving at the truncated instant: not yet due", TimerAt{"poll", at.Add(300 * time.Millisecond)}, "poll", at.Add(time.Second), at, false},
		{"announced a second too late is another due time", TimerAt{"poll", at.Add(300 * time.Millisecond)}, "poll", at.Add(2 * time.Second), at.Add(3 * time.Second), false},
		{"announced truncated (rounded down) is another due time", TimerAt{"poll", at.Add(300 * time.Millisecond)}, "poll", at, at.Add(3 * time.Second), false},
		{"a whole-second due time is announced as itself", TimerAt{"poll", at}, "poll", at, at, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := TimerDue(c.timer, c.kind, c.asked, c.now); got != c.want {
				t.Fatalf("TimerDue = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAnnounced(t *testing.T) {
	at := hm(9, 0)
	cases := []struct {
		name string
		in   time.Time
		want time.Time
	}{
		{"a whole second is itself", at, at},
		{"a nanosecond past rounds up", at.Add(time.Nanosecond), at.Add(time.Second)},
		{"just under the next second rounds up", at.Add(time.Second - time.Nanosecond), at.Add(time.Second)},
		{"half a second rounds up, not to nearest", at.Add(500 * time.Millisecond), at.Add(time.Second)},
		{"another zone keeps the instant", at.Add(200 * time.Millisecond).In(time.FixedZone("x", -5*3600)), at.Add(time.Second)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Announced(c.in)
			if !got.Equal(c.want) {
				t.Fatalf("Announced(%s) = %s, want %s", c.in.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), c.want.Format(time.RFC3339Nano))
			}
			if got.Before(c.in) || got.Nanosecond() != 0 {
				t.Fatalf("Announced(%s) = %s: before the due time or not a whole second", c.in, got)
			}
		})
	}
}

func TestStepFor(t *testing.T) {
	in := func(s State, inFlight bool) Run { return Run{State: s, TriggerInFlight: inFlight} }
	cases := []struct {
		name   string
		r      Run
		step   Step
		paused bool
		want   StepAction
	}{
		{"evaluate an evaluating run", in(Evaluating, false), StepEvaluate, false, StepTake},
		{"evaluate: paused holds it", in(Evaluating, false), StepEvaluate, true, StepDrop},
		{"evaluate a run that moved on to triggering", in(Triggering, false), StepEvaluate, false, StepDrop},
		{"evaluate an ended run", in(FailedFinal, false), StepEvaluate, false, StepDrop},
		{"trigger a triggering run", in(Triggering, false), StepTrigger, false, StepTake},
		{"trigger: paused holds a run with no call begun", in(Triggering, false), StepTrigger, true, StepDrop},
		{"trigger with a call in flight: recover it", in(Triggering, true), StepTrigger, false, StepRecoverCall},
		{"trigger with a call in flight while paused: still recover it", in(Triggering, true), StepTrigger, true, StepRecoverCall},
		{"trigger a run that is evaluating", in(Evaluating, false), StepTrigger, false, StepDrop},
		{"trigger a running run", in(Running, false), StepTrigger, false, StepDrop},
		{"poll a running run", in(Running, false), StepPoll, false, StepTake},
		{"poll while paused: running jobs finish", in(Running, false), StepPoll, true, StepTake},
		{"poll a completed run", in(Completed, false), StepPoll, false, StepDrop},
		{"poll a triggering run", in(Triggering, true), StepPoll, false, StepDrop},
		{"no step", in(Evaluating, false), StepNone, false, StepDrop},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := StepFor(c.r, c.step, c.paused); got != c.want {
				t.Fatalf("StepFor = %v, want %v", got, c.want)
			}
		})
	}
}

func TestRunsJob(t *testing.T) {
	r := Run{State: Running, Generation: 2, Attempt: 1, JobRunID: "j-7"}
	cases := []struct {
		name         string
		r            Run
		gen, attempt int
		jobRunID     string
		want         bool
	}{
		{"the job polled", r, 2, 1, "j-7", true},
		{"an earlier generation's job (rerun since)", r, 1, 1, "j-7", false},
		{"an earlier attempt's job (retried since)", r, 2, 0, "j-7", false},
		{"another job id (adopted since)", r, 2, 1, "j-6", false},
		{"the run no longer runs", Run{State: Completed, Generation: 2, Attempt: 1, JobRunID: "j-7"}, 2, 1, "j-7", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.r.RunsJob(c.gen, c.attempt, c.jobRunID); got != c.want {
				t.Fatalf("RunsJob = %v, want %v", got, c.want)
			}
		})
	}
}

func TestCallInFlight(t *testing.T) {
	cases := []struct {
		name string
		r    Run
		want bool
	}{
		{"triggering with a call begun", Run{State: Triggering, TriggerInFlight: true}, true},
		{"triggering, no call begun", Run{State: Triggering}, false},
		{"running (the mark is stale)", Run{State: Running, TriggerInFlight: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.r.CallInFlight(); got != c.want {
				t.Fatalf("CallInFlight = %v, want %v", got, c.want)
			}
		})
	}
}
