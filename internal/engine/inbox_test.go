package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// running puts orders' 2026-03-10 run into Running: its job started, its
// first poll a minute away on a clock that does not move.
func running(t *testing.T, f *fixture) run.Run {
	t.Helper()
	if _, err := f.eng.PutSensor(t.Context(), "orders", "orders-landed", obj("n", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	r, err := f.st.RunGet(t.Context(), run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2026-03-10"})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != run.Running {
		t.Fatalf("run is %s, want running", r.State)
	}
	return r
}

func report(id, word string) engine.JobLog {
	return engine.JobLog{PipelineID: "orders", Period: "2026-03-10", ID: id, Event: word, Message: "from the job log"}
}

// TestJobLogSuccessCompletesOnce: a job's own success report completes the
// run as a poll's answer would; the same record delivered again decides
// nothing.
func TestJobLogSuccessCompletesOnce(t *testing.T) {
	f := newFixture(t)
	running(t, f)
	for i, want := range []bool{true, false} {
		res, err := f.eng.ReportJob(t.Context(), report("JOB#1", "success"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Applied != want {
			t.Fatalf("delivery %d: applied %v (%s), want %v", i+1, res.Applied, res.Ignored, want)
		}
	}
	if n := len(f.events(t, event.JobCompleted)); n != 1 {
		t.Fatalf("%d JOB_COMPLETED, want 1", n)
	}
	r, _ := f.st.RunGet(t.Context(), run.Key{PipelineID: "orders", ScheduleID: "stream", Period: "2026-03-10"})
	if r.State != run.Completed {
		t.Fatalf("run is %s", r.State)
	}
}

// TestJobLogFailureRetriesOnce: a failure report retries within the
// budget; delivered again after the retry started, it does not fail the
// new attempt.
func TestJobLogFailureRetriesOnce(t *testing.T) {
	f := newFixture(t)
	if _, err := f.eng.ApplyConfig(t.Context(), "orders.yaml", []byte(strings.Replace(orders, "pollInterval: 1m}", "pollInterval: 1m, maxRetries: 2}", 1))); err != nil {
		t.Fatal(err)
	}
	first := running(t, f)
	if res, err := f.eng.ReportJob(t.Context(), report("JOB#1", "fail")); err != nil || !res.Applied {
		t.Fatalf("first: %+v %v", res, err)
	}
	if r, _ := f.st.RunGet(t.Context(), first.Key); r.State != run.Triggering {
		t.Fatalf("after a failure within the budget: %s, want a retry (TRIGGERING)", r.State)
	}
	if _, err := f.eng.RunDue(t.Context()); err != nil { // the retry's trigger
		t.Fatal(err)
	}
	r, _ := f.st.RunGet(t.Context(), first.Key)
	if r.State != run.Running || r.Attempt != first.Attempt+1 {
		t.Fatalf("the retry: %s attempt %d", r.State, r.Attempt)
	}
	res, err := f.eng.ReportJob(t.Context(), report("JOB#1", "fail"))
	if err != nil || res.Applied {
		t.Fatalf("redelivered: %+v %v", res, err)
	}
	after, _ := f.st.RunGet(t.Context(), first.Key)
	if after.State != run.Running || after.Attempt != r.Attempt {
		t.Fatalf("the redelivered failure touched the retry: %s attempt %d", after.State, after.Attempt)
	}
	if n := len(f.events(t, event.JobFailed)); n != 1 {
		t.Fatalf("%d JOB_FAILED, want 1", n)
	}
}

// TestJobLogAboutAnotherJob: a report naming another job run, or with a
// word that is no outcome, changes nothing; a bad schedule or an unknown
// pipeline is an error the caller reports.
func TestJobLogAboutAnotherJob(t *testing.T) {
	f := newFixture(t)
	r := running(t, f)
	other := report("JOB#2", "fail")
	other.JobRunID = r.JobRunID + "-other"
	if res, err := f.eng.ReportJob(t.Context(), other); err != nil || res.Applied {
		t.Fatalf("other job: %+v %v", res, err)
	}
	if res, err := f.eng.ReportJob(t.Context(), report("JOB#3", "rerun-accepted")); err != nil || res.Applied || res.Ignored == "" {
		t.Fatalf("no outcome: %+v %v", res, err)
	}
	mine := report("JOB#4", "success")
	mine.JobRunID = r.JobRunID
	mine.ScheduleID = "cron"
	if _, err := f.eng.ReportJob(t.Context(), mine); !errors.Is(err, engine.ErrInvalidRequest) {
		t.Fatalf("wrong schedule: %v", err)
	}
	unknown := report("JOB#5", "success")
	unknown.PipelineID = "nope"
	if _, err := f.eng.ReportJob(t.Context(), unknown); !errors.Is(err, engine.ErrUnknownPipeline) {
		t.Fatalf("unknown pipeline: %v", err)
	}
	mine.ScheduleID = ""
	if res, err := f.eng.ReportJob(t.Context(), mine); err != nil || !res.Applied {
		t.Fatalf("its own job: %+v %v", res, err)
	}
}

// TestRerunRequestOnce: a rerun request delivered twice is decided once.
func TestRerunRequestOnce(t *testing.T) {
	f := newFixture(t)
	running(t, f)
	if _, err := f.eng.ReportJob(t.Context(), report("JOB#1", "fail")); err != nil { // no retries: the run fails
		t.Fatal(err)
	}
	res, err := f.eng.RequestRerunOnce(t.Context(), "orders", "2026-03-10", "manual", "seq-1")
	if err != nil || !res.Accepted || res.Duplicate {
		t.Fatalf("first: %+v %v", res, err)
	}
	res, err = f.eng.RequestRerunOnce(t.Context(), "orders", "2026-03-10", "manual", "seq-1")
	if err != nil || res.Accepted || !res.Duplicate {
		t.Fatalf("again: %+v %v", res, err)
	}
	if n := len(f.events(t, event.RerunAccepted)) + len(f.events(t, event.RerunRejected)); n != 1 {
		t.Fatalf("%d rerun verdicts, want 1", n)
	}
	if _, err := f.eng.RequestRerunOnce(t.Context(), "orders", "2026-03-10", "manual", ""); !errors.Is(err, engine.ErrInvalidRequest) {
		t.Fatalf("no id: %v", err)
	}
}

// TestRejectOncePerFingerprint: an item that cannot be accepted is
// reported once however often it is delivered; new content is reported
// again.
func TestRejectOncePerFingerprint(t *testing.T) {
	f := newFixture(t)
	rj := engine.Rejection{Type: event.SensorRejected, PipelineID: "ghost", Item: "PIPELINE#ghost / SENSOR#x", Reason: "unknown pipeline", Fingerprint: "x:abc"}
	for i, want := range []bool{true, false} {
		got, err := f.eng.Reject(t.Context(), rj)
		if err != nil || got != want {
			t.Fatalf("delivery %d: reported %v %v, want %v", i+1, got, err, want)
		}
	}
	rj.Fingerprint = "x:def"
	if got, err := f.eng.Reject(t.Context(), rj); err != nil || !got {
		t.Fatalf("new content: %v %v", got, err)
	}
	evs := f.events(t, event.SensorRejected)
	if len(evs) != 2 || evs[0].PipelineID != "ghost" || evs[0].Message != "PIPELINE#ghost / SENSOR#x refused: unknown pipeline" {
		t.Fatalf("events: %+v", evs)
	}
	if _, err := f.eng.Reject(t.Context(), engine.Rejection{Type: event.SensorRejected, Item: "x"}); !errors.Is(err, engine.ErrInvalidRequest) {
		t.Fatalf("no fingerprint: %v", err)
	}
}
