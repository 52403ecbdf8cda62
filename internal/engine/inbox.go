package engine

import (
	"context"
	"fmt"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
)

// Items other systems write into the store and a runtime hands to the
// engine one by one — on AWS, the job-log table's records and the items the
// stream-router could not accept. Each may be delivered more than once (a
// stream redelivers), so each is decided once: a marker written if absent
// in the deciding commit proves it was.

// JobLog is a job-log record: a job's (or an operator's) own report of a
// job's outcome, as opposed to the answer to Interlock's poll.
type JobLog struct {
	PipelineID string
	ScheduleID string // as written; empty, or the pipeline's
	Period     string
	// ID names the record uniquely (on AWS its sort key): a record
	// delivered twice decides once.
	ID       string
	Event    string // success | fail | timeout; other words are no outcome and are ignored
	Category string // a failure's category: TRANSIENT, PERMANENT or TIMEOUT
	Message  string
	JobRunID string // the job run it is about; empty: the run's current job
}

// JobLogResult says what a job-log record did.
type JobLogResult struct {
	Applied bool
	// Ignored says why the record changed nothing when it did not.
	Ignored string
}

// ReportJob applies a job-log record to its period's run: a success
// completes the run (baseline, SLA verdict), a failure retries within the
// budget or ends it — the same decision (run.AfterJobReport) a poll's
// answer gets. A record about no running job (the run ended, or is another
// attempt's) changes nothing. An unknown pipeline is ErrUnknownPipeline, a
// bad period or schedule ErrInvalidRequest: the caller reports the item
// (Reject), it is never retried.
func (e *Engine) ReportJob(ctx context.Context, j JobLog) (_ JobLogResult, err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"job.report")
	defer func() { endSpan(span, err) }()
	report, ok := run.JobLogReport(j.Event, j.Category, j.Message)
	if !ok {
		return JobLogResult{Ignored: fmt.Sprintf("%q is not a job outcome", j.Event)}, nil
	}
	if j.ID == "" {
		return JobLogResult{}, fmt.Errorf("%w: a job-log record needs an id", ErrInvalidRequest)
	}
	per, err := decide.ParsePeriod(j.Period)
	if err != nil {
		return JobLogResult{}, fmt.Errorf("%w: period: %v", ErrInvalidRequest, err)
	}
	var res JobLogResult
	err = e.retry(ctx, "job report "+j.PipelineID+"/"+j.Period, func(ctx context.Context) error {
		res = JobLogResult{}
		f, err := e.loadFacts(ctx, func(_ *facts, cfg needs.Configs) needs.Set {
			return needs.JobLog(cfg(j.PipelineID), j.PipelineID, per, report)
		})
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.JobLogIn{PipelineID: j.PipelineID, ScheduleID: j.ScheduleID, Period: per, ID: j.ID, Event: j.Event, JobRunID: j.JobRunID,
			Report: report, Env: b.env()}
		logged, err := decideWith(ctx, b, decide.JobLog, in, e.clk.Now())
		if err != nil {
			return err
		}
		res = JobLogResult{Applied: logged.Applied, Ignored: logged.Ignored}
		if !logged.Applied {
			return nil
		}
		return b.commit(ctx)
	})
	return res, err
}

// Rejection is an item someone else wrote into the store that cannot be
// what its key says: a sensor item of a bad shape or for an unknown
// pipeline, a job-log record with a bad key.
type Rejection struct {
	Type       event.Type // event.SensorRejected or event.JobReportRejected
	PipelineID string     // as the item names it (it may be unknown)
	Item       string     // the item as its writer knows it, e.g. "PIPELINE#orders / SENSOR#x"
	Reason     string
	// Fingerprint identifies the item and its content: the same item
	// delivered again is reported once; new content is a new report.
	Fingerprint string
}

// Reject reports an item that cannot be accepted, once per fingerprint
// per day (decide.Reject: the marker lives with the day's records and
// expires with them). It reports whether this call reported it.
func (e *Engine) Reject(ctx context.Context, rj Rejection) (bool, error) {
	if rj.Fingerprint == "" {
		return false, fmt.Errorf("%w: a rejection needs a fingerprint", ErrInvalidRequest)
	}
	var reported bool
	err := e.retry(ctx, "reject "+rj.Item, func(ctx context.Context) error {
		now := e.clk.Now()
		key, _ := decide.RejectMarker(rj.PipelineID, rj.Fingerprint, now)
		f, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.Reject(key) })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.RejectIn{Type: rj.Type, PipelineID: rj.PipelineID, Item: rj.Item, Reason: rj.Reason, Fingerprint: rj.Fingerprint, Env: b.env()}
		if reported, err = decideWith(ctx, b, decide.Reject, in, now); err != nil || !reported {
			return err
		}
		return b.commit(ctx)
	})
	return reported, err
}

// ForgetConfig drops the parsed config of a pipeline from this process's
// cache (a runtime told that the stored config changed). Decisions never
// depend on it — every decision reads the pipeline row and parses again
// when the version moved — so this only frees memory early.
func (e *Engine) ForgetConfig(id string) { e.parses.drop(id) }
