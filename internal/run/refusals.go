package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Reports made once per fact, and calendar writes made once per change:
// the engine reads the marker (or the stored calendar) and asks here
// whether there is anything to say (or write).

// ConfigRefusal is the detail of a file's MarkerConfigInvalid marker:
// the content (sum: its SHA-256, hex) whose CONFIG_INVALID was sent.
func ConfigRefusal(sum string) sensor.Object { return Detail("sha256", sum) }

// ConfigRefusalReported reports whether CONFIG_INVALID was sent already
// for the content hashed sum, given the file's stored marker detail (nil:
// no marker). A file refused again with other content is news; so is the
// same content after the file was valid in between (the marker was
// cleared then).
func ConfigRefusalReported(stored *sensor.Object, sum string) bool {
	if stored == nil {
		return false
	}
	v, ok := stored.Get("sha256")
	if !ok {
		return false
	}
	s, _ := v.Str()
	return s == sum
}

// ConfigInvalidNote is the CONFIG_INVALID of file refused for errs (at
// least one); running is the config version that keeps running, 0 when
// none does (never loaded, or its file was removed).
func ConfigInvalidNote(file string, errs []string, running int64) Note {
	kept := "no previous version"
	if running > 0 {
		kept = fmt.Sprintf("version %d keeps running", running)
	}
	first := ""
	if len(errs) > 0 {
		first = errs[0]
	}
	return Note{Type: event.ConfigInvalid,
		Message: fmt.Sprintf("%s refused (%d error(s)); %s: %s", file, len(errs), kept, first),
		Detail:  Detail("file", file, "errors", strings.Join(errs, "\n"), "errorCount", len(errs))}
}

// LateAnswer is what a trigger call that came back too late returned.
type LateAnswer struct {
	Err      string // the call failed; "" when it started a job
	JobRunID string // the job it started
	Status   string // the status a synchronous job reported with it; "" when none
}

// LateCallNote is the INFRA_FAILURE reporting the answer a of call c that
// came after r (as it now is) moved on; ok is false when it was reported
// already: reported is the detail of the period's MarkerLateCall (nil:
// none), which names the last call reported. The marker to write is
// c.Detail().
func LateCallNote(r Run, c CallID, a LateAnswer, reported *sensor.Object) (Note, bool) {
	if reported != nil {
		if prev, ok := ParseCallID(*reported); ok && prev == c {
			return Note{}, false
		}
	}
	what := "failed: " + a.Err
	if a.Err == "" {
		what = "started job " + a.JobRunID
		if a.Status != "" {
			what += ", which reported " + a.Status
		}
	}
	return Note{Type: event.InfraFailure,
		Message: fmt.Sprintf("the trigger call returned after the run had ended (%s): it %s — check the job system", r.State, what),
		Detail:  Detail("state", string(r.State), "jobRunId", a.JobRunID)}, true
}

// StoredCalendar is a calendar as the store holds it, for CalendarWrites.
type StoredCalendar struct {
	Calendar schedule.Calendar
	Removed  bool // its file went away
}

// CalendarWrites reports whether storing what the calendar files say
// changes the stored calendar: stored is nil when none is stored, defined
// nil when no file defines the calendar any more (it is to be marked
// removed). A write that would change nothing is not made, so a reload
// does not move the versions every decision of the pipelines naming the
// calendar is conditioned on.
func CalendarWrites(stored *StoredCalendar, defined *schedule.Calendar) bool {
	switch {
	case defined == nil:
		return stored != nil && !stored.Removed
	case stored == nil || stored.Removed:
		return true
	}
	return !slices.Equal(stored.Calendar.Days, defined.Days) || !slices.Equal(stored.Calendar.Dates, defined.Dates)
}
