package run

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// Rerun reasons the engine itself uses; operators may give any other.
const (
	ReasonManual   = "manual"
	ReasonDrift    = "data-drift"
	ReasonLateData = "late-data"
)

// IsDriftReason reports whether reason draws on maxDriftReruns (drift and
// late data share that budget); every other reason draws on
// maxManualReruns, counted per reason.
func IsDriftReason(reason string) bool { return reason == ReasonDrift || reason == ReasonLateData }

// RerunBudget returns the budget for reason and how much of it the ledger
// reasons have used.
func RerunBudget(reason string, ledger []string, p *pipeline.Pipeline) (budget, used int) {
	if IsDriftReason(reason) {
		for _, l := range ledger {
			if IsDriftReason(l) {
				used++
			}
		}
		return p.Job.MaxDriftReruns, used
	}
	for _, l := range ledger {
		if l == reason {
			used++
		}
	}
	return p.Job.MaxManualReruns, used
}

// RerunInput is what a rerun decision looks at.
type RerunInput struct {
	Reason   string
	Existing *Run     // the period's run; nil when the period never ran
	Ledger   []string // reasons in the period's rerun ledger
	// Exclusion says why the period is excluded (ExclusionReason); "" when
	// it is not.
	Exclusion string
	// FreshData: a sensor of the pipeline received new content after the
	// existing run's success. The circuit breaker needs it.
	FreshData bool
}

// NeedsFreshData reports whether the decision reads FreshData: only the
// circuit breaker, after a success, asks it (the engine skips the read
// otherwise).
func (in RerunInput) NeedsFreshData() bool {
	return in.Existing != nil && in.Existing.State == Completed && in.Reason != ReasonBackfill
}

// FreshSince reports whether content received at changedAt is new data
// for the circuit breaker of r: it came after r's success ended.
func FreshSince(r Run, changedAt time.Time) bool { return changedAt.After(r.EndedAt) }

// RerunDecision is the verdict on a rerun request.
type RerunDecision struct {
	Accepted bool
	Label    string // why it was rejected (RERUN_REJECTED message)
	Budget   int
	Used     int
	// CircuitBreaker says what the circuit breaker did: "passed" or
	// "rejected" after a success; "skipped (…)" when there was no success
	// to guard (the period never ran, or its last run did not succeed);
	// "not evaluated (…)" when an earlier check refused the rerun first.
	CircuitBreaker string
}

// Circuit breaker verdicts (RerunDecision.CircuitBreaker).
const (
	BreakerPassed    = "passed"
	BreakerRejected  = "rejected"
	BreakerNeverRan  = "skipped (the period never ran)"
	BreakerNoSuccess = "skipped (the last run did not succeed)"
	BreakerBackfill  = "skipped (a backfill reruns the periods it was asked to)"
)

// breakerNotEvaluated is the verdict when an earlier check refused the
// rerun before the circuit breaker was asked.
func breakerNotEvaluated(refusedBy string) string {
	return "not evaluated (refused first: " + refusedBy + ")"
}

// DecideRerun applies, in order: calendar exclusion, a run still in
// progress, the budget, and the circuit breaker (after a success, a rerun
// needs sensor data that changed after that success — a re-delivered,
// already processed partition must not rerun the job). A backfill's rerun
// (ReasonBackfill) has neither budget nor breaker: the operator named the
// range and what in it to rerun, and maxManualReruns is for one-off
// reruns.
func DecideRerun(in RerunInput, p *pipeline.Pipeline) RerunDecision {
	var d RerunDecision
	d.Budget, d.Used = RerunBudget(in.Reason, in.Ledger, p)
	completed := in.NeedsFreshData()
	backfill := in.Reason == ReasonBackfill
	switch {
	case in.Exclusion != "":
		d.Label = "the period is excluded: " + in.Exclusion
		d.CircuitBreaker = breakerNotEvaluated("the period is excluded")
	case in.Existing != nil && !in.Existing.State.Terminal():
		d.Label = fmt.Sprintf("a run is in progress (%s)", in.Existing.State)
		d.CircuitBreaker = breakerNotEvaluated("a run is in progress")
	case backfill:
		d.CircuitBreaker = BreakerBackfill
		d.Accepted = true
	case d.Used >= d.Budget:
		kind := "manual"
		if IsDriftReason(in.Reason) {
			kind = "drift"
		}
		d.Label = fmt.Sprintf("%s rerun limit exceeded (%d/%d)", kind, d.Used, d.Budget)
		d.CircuitBreaker = breakerNotEvaluated("the rerun budget is used up")
	case completed && !in.FreshData:
		d.CircuitBreaker = BreakerRejected
		d.Label = "previous run succeeded and no sensor data has changed since"
	default:
		switch {
		case completed:
			d.CircuitBreaker = BreakerPassed
		case in.Existing == nil:
			d.CircuitBreaker = BreakerNeverRan
		default:
			d.CircuitBreaker = BreakerNoSuccess
		}
		d.Accepted = true
	}
	return d
}

// Rejected is the event for a refused rerun.
func Rejected(reason string, d RerunDecision) Effect {
	var eff Effect
	eff.note(event.RerunRejected, fmt.Sprintf("rerun rejected (reason: %s): %s", reason, d.Label), "reason", reason, "rejection", d.Label, "rerunCount", d.Used, "budget", d.Budget, "circuitBreaker", d.CircuitBreaker)
	return eff
}

// Reopen starts the next generation of a period after an accepted rerun.
// existing is nil when the period never ran.
func Reopen(existing *Run, key Key, reason, source string, d RerunDecision, configVersion int64, p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	var r Run
	if existing != nil {
		r = *existing
		r.Generation++
		r.Cause = CauseRerun
		r.ConfigVersion = configVersion
	} else {
		r = Run{Key: key, Cause: CauseRerun, CreatedAt: now, ConfigVersion: configVersion}
	}
	if reason == ReasonBackfill {
		r.Cause = CauseBackfill
	}
	r, eff := r.reopen(p, now)
	eff.Notes = append([]Note{{Type: event.RerunAccepted, Message: fmt.Sprintf("rerun accepted (reason: %s)", reason),
		Detail: Detail("reason", reason, "rerunCount", d.Used+1, "budget", d.Budget, "circuitBreaker", d.CircuitBreaker, "generation", r.Generation)}}, eff.Notes...)
	eff.LedgerReason, eff.LedgerSource = reason, source
	return r, eff
}

// RerunVerdict is what the requester of a rerun is told, typed: whether
// it was accepted (on a dry-run pipeline: would be), and if not why, in
// the words of the event that says so (RERUN_REJECTED,
// DRY_RUN_RERUN_REJECTED).
type RerunVerdict struct {
	Accepted bool
	Refusal  string
}

// RerunNotes is what a rerun decided d says without reopening the period,
// and the verdict its requester is told: a dry-run pipeline only says
// what it would do (DryRunRerun), a refused rerun says why (Rejected).
// reopen is true for an accepted rerun of a live pipeline: Reopen starts
// the next generation (and says so).
func RerunNotes(p *pipeline.Pipeline, reason string, d RerunDecision) (notes []Note, reopen bool, v RerunVerdict) {
	v.Accepted = d.Accepted
	switch {
	case p.DryRun:
		notes = []Note{DryRunRerun(reason, d)}
	case !d.Accepted:
		notes = Rejected(reason, d).Notes
	default:
		return nil, true, v
	}
	if !d.Accepted {
		v.Refusal = notes[0].Message
	}
	return notes, false, v
}

// CheckRerunReason is the reason an operator's rerun request is decided
// with: ReasonManual when it gives none. The reasons Interlock keeps for
// itself are refused: automatic retries' (LedgerJobRetry) and backfills'
// (ReasonBackfill, whose budget is a backfill's own: DecideRerun).
func CheckRerunReason(reason string) (string, error) {
	switch reason {
	case "":
		return ReasonManual, nil
	case LedgerJobRetry:
		return "", fmt.Errorf("reason %q is reserved for automatic retries", reason)
	case ReasonBackfill:
		return "", fmt.Errorf("reason %q is reserved for backfills (interlock backfill)", reason)
	}
	return reason, nil
}

// ReasonBackfill is the ledger reason and source of a backfill's rerun:
// a budget of its own, not maxManualReruns (DecideRerun).
const ReasonBackfill = "backfill"

// DryRunRerun is what a dry-run pipeline says about a rerun request
// decided d: that it would be accepted, or why it would be rejected. It
// starts nothing.
func DryRunRerun(reason string, d RerunDecision) Note {
	if d.Accepted {
		return Note{Type: event.DryRunWouldRerun, Message: fmt.Sprintf("dry-run: rerun would be accepted (reason: %s)", reason), Detail: Detail("reason", reason, "circuitBreaker", d.CircuitBreaker, "rerunCount", d.Used, "budget", d.Budget)}
	}
	return Note{Type: event.DryRunRerunRejected, Message: "dry-run: rerun would be rejected: " + d.Label, Detail: Detail("reason", reason, "rejection", d.Label, "rerunCount", d.Used, "budget", d.Budget, "circuitBreaker", d.CircuitBreaker)}
}
