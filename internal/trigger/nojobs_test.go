package trigger

import (
	"context"
	"testing"
)

// TestNoJobsRefusesEveryCall: a process with no job system never reports
// a job started or polled (a nil error would read as a start with no job).
func TestNoJobsRefusesEveryCall(t *testing.T) {
	if st, err := (NoJobs{}).Start(context.Background(), Request{}); err == nil {
		t.Errorf("Start = %+v, nil error", st)
	}
	if res, err := (NoJobs{}).Poll(context.Background(), Request{}); err == nil {
		t.Errorf("Poll = %+v, nil error", res)
	}
}
