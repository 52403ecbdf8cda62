package decide

import (
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// ErrInvalidRequest: an input that cannot be what it says (a bad
// period, another pipeline's schedule).
var ErrInvalidRequest = errors.New("invalid request")

// JobLogIn is a job-log record to decide: a job's (or an operator's) own
// report of a job's outcome, as opposed to the answer to Interlock's
// poll.
type JobLogIn struct {
	PipelineID string
	ScheduleID string // as written; empty, or the pipeline's
	Period     schedule.Period
	ID         string // names the record: one delivered twice decides once
	Event      string
	JobRunID   string // the job run it is about; empty: the run's current job
	Report     run.JobReport
	Env
}

// JobLogged says what a job-log record did: applied, or why not.
type JobLogged struct {
	Applied bool
	Ignored string
}

// JobLog applies a job-log record to its period's run: a success
// completes the run (baseline, SLA verdict), a failure retries within the
// budget or ends it — the same decision (run.AfterJobReport) a poll's
// answer gets. A record about no running job (the run ended, or is
// another attempt's) changes nothing; one decided before (its marker)
// decides nothing again.
func JobLog(in JobLogIn, f *Facts, now time.Time) (*Outcome, JobLogged, error) {
	lp, err := f.KnownPipeline(in.PipelineID)
	if err != nil {
		return nil, JobLogged{}, err
	}
	if !run.JobLogSchedule(in.ScheduleID, lp.P.ScheduleID()) {
		return nil, JobLogged{}, fmt.Errorf("%w: schedule %q is not pipeline %s's (%q)", ErrInvalidRequest, in.ScheduleID, in.PipelineID, lp.P.ScheduleID())
	}
	o := New(lp, f, now, in.Env)
	key := run.Key{PipelineID: in.PipelineID, ScheduleID: lp.P.ScheduleID(), Period: in.Period.String()}
	kind := run.ItemMarker(run.MarkerJobReport, in.ID).String()
	if seen, err := f.HasMarker(key, kind); err != nil || seen {
		return o, JobLogged{Ignored: "decided before"}, err
	}
	stored, err := f.Run(key)
	if err != nil {
		return nil, JobLogged{}, err
	}
	if stored == nil {
		return o, JobLogged{Ignored: "the period has no run"}, nil
	}
	r := *stored
	if !run.ReportApplies(r, in.JobRunID) {
		return o, JobLogged{Ignored: fmt.Sprintf("the run is %s, not running job %q", r.State, in.JobRunID)}, nil
	}
	next, eff, err := AfterReport(f, lp.P, r, in.Report, now)
	if err != nil {
		return nil, JobLogged{}, err
	}
	if err := o.ApplyRun(lp, &r, next, eff, nil); err != nil {
		return nil, JobLogged{}, err
	}
	o.Marker(store.Marker{Key: key, Kind: kind, At: now, Detail: run.Detail("event", in.Event, "jobRunId", in.JobRunID)}, true)
	return o, JobLogged{Applied: true}, nil
}
