package web

import (
	"fmt"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/board"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// summaryView is the one line at the top of a pipeline or period page:
// its state, since when, why, and the last error.
type summaryView struct {
	State board.State
	// Since is when the period entered what the state says (the run's
	// state, the SLA instant passed); nil when unknown.
	Since     *time.Time
	Reason    string
	LastError string // the last error's last line; "" when none
}

// summaryFacts is what a page's summary line is read from.
type summaryFacts struct {
	State       board.State
	Run         *run.Run
	Explain     engine.Explanation
	PausedUntil *time.Time
	Timeline    []eventView // the period's events, in log order
	Zone        string
}

// outcomeWords says a terminal run's outcome as a person reads it.
var outcomeWords = map[run.Outcome]string{
	run.OutcomeSucceeded:           "the job succeeded",
	run.OutcomeValidationExhausted: "the evaluation window closed before the rules passed",
	run.OutcomeRetriesExhausted:    "the job failed and its retry budget is used up",
	run.OutcomeTriggerExhausted:    "the trigger call kept failing; the job's state is unknown",
	run.OutcomePollExhausted:       "the poll window closed; the job's state is unknown",
	run.OutcomeTriggerUnknown:      "the process stopped during the trigger call; the job may or may not have started",
	run.OutcomeDeadlineExpired:     "the trigger deadline passed with no run",
	run.OutcomeTimedOut:            "the run's time-to-live expired",
	run.OutcomeExcluded:            "a retry was refused: the period is excluded",
}

// summaryOf writes the summary line from the page's facts.
func summaryOf(f summaryFacts) summaryView {
	s := summaryView{State: f.State, LastError: lastError(f.Run, f.Timeline)}
	x, r := f.Explain, f.Run
	if r != nil && !r.StateSince.IsZero() {
		since := r.StateSince.UTC()
		s.Since = &since
	}
	sla := func(t *time.Time, what string) {
		if t != nil {
			at := t.UTC()
			s.Since = &at
			s.Reason = what + " " + zoned(at, x.Deadlines.SLATimezone) + " without a success"
		}
	}
	switch f.State {
	case board.Breached:
		s.Reason = "the SLA was breached without a success"
		sla(x.Deadlines.SLABreach, "the SLA breach time passed at")
		sla(x.Deadlines.RelativeSLABreach, "the relative SLA breach time passed at")
	case board.AtRisk:
		s.Reason = "the SLA warning time passed"
		sla(x.Deadlines.SLAWarning, "the SLA warning time passed at")
	case board.Failed:
		s.Reason = "the run ended without success"
		if r != nil {
			if w, ok := outcomeWords[r.Outcome]; ok {
				s.Reason = w
			}
		}
	case board.Paused:
		s.Reason = "paused until resumed: no new run starts"
		if f.PausedUntil != nil {
			s.Reason = "paused until " + zoned(*f.PausedUntil, f.Zone) + ": no new run starts"
		}
	case board.Excluded:
		s.Reason = x.ExcludedBy
	case board.DryRun:
		s.Reason = "dry-run: the rules are evaluated and what would happen is recorded; the job is never triggered"
	case board.Succeeded:
		s.Reason = "the job succeeded"
		if r != nil && r.Generation > 0 {
			s.Reason += fmt.Sprintf(" (rerun %d)", r.Generation)
		}
	case board.Evaluating:
		s.Reason = "the validation rules do not pass yet" + failingRules(x.Validation.Rules)
	case board.Triggering:
		s.Reason = "the rules passed; the job's trigger call is due"
		if r != nil && r.TriggerErrors > 0 {
			s.Reason = fmt.Sprintf("the trigger call failed %d time(s) and waits to be retried", r.TriggerErrors)
		}
	case board.Running:
		s.Reason = "the job runs"
		switch {
		case r != nil && r.CallInFlight():
			s.Reason = "the job runs inside its trigger call"
		case r != nil && r.JobRunID != "":
			s.Reason = "the job " + r.JobRunID + " runs; it is polled until it reports a result"
		}
	case board.Waiting:
		s.Reason = waitingReason(x)
	}
	return s
}

// waitingReason says what a period without a run waits for.
func waitingReason(x engine.Explanation) string {
	if t := x.Trigger; t != nil && !t.Passed {
		why := "waiting for its trigger sensor " + t.Key
		if t.Reason != "" {
			why += ": " + t.Reason
		}
		return why
	}
	if x.Deadlines.NextCronTick != nil {
		return "waiting for the cron tick at " + zoned(*x.Deadlines.NextCronTick, x.Timezone)
	}
	return "no run yet"
}

// failingRules names the rules that do not pass: ": gate (1), ready".
func failingRules(rules []engine.RuleCheck) string {
	var names []string
	for _, c := range rules {
		if c.Passed {
			continue
		}
		n := c.Key
		if c.Observed != nil {
			n += " (saw " + valueText(c.Observed) + ")"
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return ""
	}
	return ": " + strings.Join(names, ", ")
}

// lastError is the last line of the run's last failure, or of the
// period's last error event.
func lastError(r *run.Run, timeline []eventView) string {
	if r != nil && r.LastFailure != nil {
		return lastLine(r.LastFailure.Message)
	}
	for i := len(timeline) - 1; i >= 0; i-- {
		if timeline[i].Level() == event.LevelError {
			return lastLine(timeline[i].Message)
		}
	}
	return ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
