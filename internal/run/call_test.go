package run

import "testing"

func TestAnswerStanding(t *testing.T) {
	inFlight := Run{State: Triggering, TriggerInFlight: true, Generation: 1, Attempt: 2, TriggerErrors: 1}
	c := inFlight.Call() // generation 1, attempt 3, after 1 error
	with := func(f func(*Run)) Run { r := inFlight; f(&r); return r }
	for _, tc := range []struct {
		name    string
		r       Run
		started bool
		want    Standing
	}{
		{"the run waits for this call: a job", inFlight, true, AnswerAwaited},
		{"the run waits for this call: an error", inFlight, false, AnswerAwaited},
		{"the job is recorded (a duplicate)", with(func(r *Run) { r.State, r.TriggerInFlight, r.Attempt, r.TriggerErrors = Running, false, 3, 0 }), true, AnswerRecorded},
		{"the job succeeded synchronously and the run completed", with(func(r *Run) { r.State, r.TriggerInFlight, r.Attempt = Completed, false, 3 }), true, AnswerRecorded},
		{"the job failed and is retried: a later call of a later attempt", with(func(r *Run) { r.TriggerInFlight, r.Attempt, r.TriggerErrors = true, 3, 0 }), true, AnswerRecorded},
		{"another process adopted the job under this identity; this call failed", with(func(r *Run) { r.State, r.TriggerInFlight, r.Attempt = Running, false, 3 }), false, AnswerRecorded},
		{"this call's error is recorded (a duplicate)", with(func(r *Run) { r.TriggerInFlight, r.TriggerErrors = false, 2 }), false, AnswerRecorded},
		{"this call's error is recorded and the retried call is in flight", with(func(r *Run) { r.TriggerErrors = 2 }), false, AnswerRecorded},
		{"the retries are exhausted by this call's error", with(func(r *Run) {
			r.State, r.TriggerInFlight, r.TriggerErrors, r.Outcome = FailedFinal, false, 2, OutcomeTriggerExhausted
		}), false, AnswerRecorded},
		{"a job answer after an error was recorded for the same call", with(func(r *Run) { r.TriggerInFlight, r.TriggerErrors = false, 2 }), true, AnswerLate},
		{"timed out by the watchdog during the call", with(func(r *Run) { r.State, r.TriggerInFlight, r.Outcome = FailedFinal, false, OutcomeTimedOut }), true, AnswerLate},
		{"given up on (outcome unknown) during the call", with(func(r *Run) { r.State, r.TriggerInFlight, r.Outcome = FailedFinal, false, OutcomeTriggerUnknown }), false, AnswerLate},
		{"recovery cleared the mark to call again", with(func(r *Run) { r.TriggerInFlight = false }), true, AnswerLate},
		{"a rerun reopened the period", with(func(r *Run) {
			r.State, r.TriggerInFlight, r.Generation, r.Attempt, r.TriggerErrors = Evaluating, false, 2, 0, 0
		}), true, AnswerLate},
		{"a rerun's call of the same attempt number", with(func(r *Run) { r.Generation = 2 }), true, AnswerLate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AnswerStanding(tc.r, c, tc.started); got != tc.want {
				t.Fatalf("AnswerStanding = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestAwaits(t *testing.T) {
	r := Run{State: Triggering, TriggerInFlight: true, Attempt: 1}
	if !r.Awaits(r.Call()) {
		t.Fatal("a run does not await its own call in flight")
	}
	for name, other := range map[string]Run{
		"not in flight": {State: Triggering, Attempt: 1},
		"running":       {State: Running, TriggerInFlight: true, Attempt: 1},
	} {
		if other.Awaits(r.Call()) {
			t.Errorf("%s: awaits the call", name)
		}
	}
	next := r
	next.TriggerErrors++
	if next.Awaits(r.Call()) {
		t.Error("the retried call's run awaits the call before it")
	}
}
