package run

import (
	"testing"
	"time"
)

func TestAfterJobReport(t *testing.T) {
	p := mustPipeline(t, basePipeline) // maxRetries 2, pollWindow 30m
	running := Run{Key: key, State: Running, Attempt: 1, JobStartedAt: t0, PollDeadline: t0.Add(30 * time.Minute)}
	now := t0.Add(10 * time.Minute)
	failure := Failure{Category: Transient, Message: "boom"}
	cases := []struct {
		name       string
		report     JobReport
		used       int
		wantState  State
		wantFailed bool
	}{
		{"succeeded", JobReport{Known: true, Status: JobStatusSucceeded}, 0, Completed, false},
		{"failed within the budget is retried", JobReport{Known: true, Status: JobStatusFailed, Failure: failure}, 0, Triggering, true},
		{"failed with the budget spent ends", JobReport{Known: true, Status: JobStatusFailed, Failure: failure}, 2, FailedFinal, true},
		{"running polls again", JobReport{Known: true, Status: "running"}, 0, Running, false},
		{"an unknown word polls again", JobReport{Known: true, Status: "SUCCEEDED"}, 0, Running, false},
		{"an unread status polls again, whatever it says", JobReport{Status: JobStatusSucceeded}, 0, Running, false},
		{"an unread failure is no failure", JobReport{Status: JobStatusFailed, Failure: failure}, 0, Running, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.report.Failed(); got != c.wantFailed {
				t.Fatalf("Failed() = %v, want %v", got, c.wantFailed)
			}
			got, eff := AfterJobReport(running, c.report, c.used, "", p, now)
			if got.State != c.wantState {
				t.Fatalf("state %s, want %s (events %v)", got.State, c.wantState, types(eff))
			}
		})
	}
}
