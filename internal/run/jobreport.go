package run

import (
	"fmt"
	"strings"

	"github.com/interlockhq/interlock/internal/event"
)

// The job-log vocabulary (reference §4.2): the words a job, an operator or
// a runtime writes about a job's outcome. Only these three are outcomes;
// every other word a job log holds (rerun-accepted, late-data-arrival, …)
// says nothing about the job and is ignored.
const (
	JobLogSuccess = "success"
	JobLogFail    = "fail"
	JobLogTimeout = "timeout"
)

// JobLogReport turns a job-log record — its event word, failure category
// and message — into the report the core decides on. ok is false when the
// word is not an outcome. A failure's category is PERMANENT or TIMEOUT when
// the record says so (in any case), TRANSIENT otherwise; a timeout is a
// TIMEOUT failure whatever category it names.
func JobLogReport(word, category, message string) (j JobReport, ok bool) {
	switch strings.ToLower(strings.TrimSpace(word)) {
	case JobLogSuccess:
		return JobReport{Known: true, Status: JobStatusSucceeded}, true
	case JobLogTimeout:
		return JobReport{Known: true, Status: JobStatusFailed, Failure: Failure{Category: Timeout, Message: message}}, true
	case JobLogFail:
		c := Transient
		switch Category(strings.ToUpper(strings.TrimSpace(category))) {
		case Permanent:
			c = Permanent
		case Timeout:
			c = Timeout
		}
		return JobReport{Known: true, Status: JobStatusFailed, Failure: Failure{Category: c, Message: message}}, true
	}
	return JobReport{}, false
}

// ReportApplies reports whether a job's own report (a job-log record, not
// an answer to Interlock's poll) is about r's job: r is running a job, and
// the report names no job run or names r's. A report about an attempt that
// ended, or about another job run, changes nothing.
func ReportApplies(r Run, jobRunID string) bool {
	return r.State == Running && (jobRunID == "" || jobRunID == r.JobRunID)
}

// The once-per-item markers (MarkerJobReport, MarkerRerunRequest,
// MarkerRejected) are MarkerKind records (markerkind.go: ItemMarker).

// ItemRejected is the note that an item someone else wrote into the store
// (t: SENSOR_REJECTED or JOB_REPORT_REJECTED) cannot be accepted: it names
// the item as its writer knows it and says why.
func ItemRejected(t event.Type, item, reason string) Note {
	return Note{Type: t, Message: fmt.Sprintf("%s refused: %s", item, reason), Detail: Detail("item", item, "reason", reason)}
}

// JobLogSchedule reports whether a job-log record that names schedule
// given is about the pipeline's schedule own: it names it, or none (its
// writer need not know the schedule id).
func JobLogSchedule(given, own string) bool { return given == "" || given == own }
