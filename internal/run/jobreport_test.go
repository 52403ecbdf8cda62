package run

import "testing"

func TestJobLogReport(t *testing.T) {
	cases := []struct {
		word, category string
		ok             bool
		status         string
		cat            Category
	}{
		{"success", "", true, JobStatusSucceeded, ""},
		{" SUCCESS ", "PERMANENT", true, JobStatusSucceeded, ""},
		{"fail", "", true, JobStatusFailed, Transient},
		{"fail", "permanent", true, JobStatusFailed, Permanent},
		{"fail", "TIMEOUT", true, JobStatusFailed, Timeout},
		{"fail", "bogus", true, JobStatusFailed, Transient},
		{"timeout", "PERMANENT", true, JobStatusFailed, Timeout},
		{"rerun-accepted", "", false, "", ""},
		{"late-data-arrival", "", false, "", ""},
		{"", "", false, "", ""},
	}
	for _, c := range cases {
		j, ok := JobLogReport(c.word, c.category, "m")
		if ok != c.ok || j.Status != c.status || j.Failure.Category != c.cat || (ok && !j.Known) {
			t.Errorf("JobLogReport(%q, %q) = %+v %v, want ok %v status %q category %q", c.word, c.category, j, ok, c.ok, c.status, c.cat)
		}
	}
}

func TestReportApplies(t *testing.T) {
	running := Run{State: Running, JobRunID: "jr-1"}
	cases := []struct {
		r     Run
		jobID string
		want  bool
	}{
		{running, "", true},
		{running, "jr-1", true},
		{running, "jr-2", false},
		{Run{State: Triggering, JobRunID: "jr-1"}, "", false},
		{Run{State: Completed, JobRunID: "jr-1"}, "jr-1", false},
		{Run{State: FailedFinal}, "", false},
		{Run{State: Evaluating}, "", false},
	}
	for _, c := range cases {
		if got := ReportApplies(c.r, c.jobID); got != c.want {
			t.Errorf("ReportApplies(%s %s, %q) = %v, want %v", c.r.State, c.r.JobRunID, c.jobID, got, c.want)
		}
	}
}

func TestJobLogSchedule(t *testing.T) {
	for _, c := range []struct {
		given string
		want  bool
	}{{"", true}, {"cron", true}, {"stream", false}} {
		if got := JobLogSchedule(c.given, "cron"); got != c.want {
			t.Errorf("JobLogSchedule(%q, cron) = %v, want %v", c.given, got, c.want)
		}
	}
}
