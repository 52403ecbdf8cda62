package run

import (
	"fmt"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
)

// ttlMargin is how long past its own last deadline a non-terminal run may
// live before the watchdog declares it timed out (SFN_TIMEOUT). The
// engine's timers end a healthy run well before that.
const ttlMargin = 30 * time.Minute

// TriggerLease bounds a trigger call: if the process dies during the call,
// the trigger step fires again after the call's timeout plus this long and
// finds the call's outcome unknown — unless the job type can be looked up,
// and an engine that starts finds the call interrupted and establishes its
// outcome at once (recovery.go).
const TriggerLease = 15 * time.Minute

// Start opens a run for a period: evaluation starts now.
func Start(key Key, cause Cause, configVersion int64, p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	r := Run{Key: key, Cause: cause, CreatedAt: now, ConfigVersion: configVersion}
	return r.reopen(p, now)
}

// reopen puts r in Evaluating for a fresh evaluation window.
func (r Run) reopen(p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	r.enter(Evaluating, now)
	r.Outcome = OutcomeNone
	r.Attempt = 0
	r.TriggerErrors = 0
	r.TriggerInFlight = false
	r.JobRunID, r.JobMeta = "", nil
	r.JobStartedAt, r.PollDeadline, r.EndedAt = time.Time{}, time.Time{}, time.Time{}
	r.EvalStartedAt = now
	r.EvalDeadline = now.Add(p.Schedule.Evaluation.Window)
	r.ExpiresAt = r.EvalDeadline.Add(ttlMargin)
	return r, Effect{Next: StepEvaluate, NextAt: now}
}

func (r *Run) enter(s State, now time.Time) {
	if r.State != s {
		r.StateSince = now
	}
	r.State = s
	r.UpdatedAt = now
}

func (r *Run) end(s State, o Outcome, now time.Time) {
	r.enter(s, now)
	r.Outcome = o
	r.EndedAt = now
	r.ExpiresAt = time.Time{}
	r.TriggerInFlight = false
}

// AfterEvaluation decides what follows an evaluation of the validation
// rules: trigger when they passed, evaluate again after the interval, or
// end the run when the window has closed. The last evaluation happens at
// the window's close, so data that arrives just before it still counts.
func AfterEvaluation(r Run, out rule.Outcome, p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	var eff Effect
	summary := out.Summary()
	if per, err := schedule.ParsePeriod(r.Period); err == nil && Excluded(p, per) {
		// A reload excluded the period while its run was waiting.
		eff.note(event.PipelineExcluded, "run ended: "+ExclusionReason(p, per), "reason", "evaluation", "excludedBy", strings.Join(ExcludedBy(p, per), ", "))
		r.end(FailedFinal, OutcomeExcluded, now)
		eff.Ended = true
		return r, eff
	}
	if out.Passed {
		eff.note(event.ValidationPassed, PassedMessage(out), "rules", summary, "passedRules", strings.Join(passedRules(out), ", "))
		r.enter(Triggering, now)
		r.TriggerErrors = 0
		r.ExpiresAt = now.Add(TriggerLease + ttlMargin)
		eff.Next, eff.NextAt = StepTrigger, now
		return r, eff
	}
	if !now.Before(r.EvalDeadline) {
		kv := []any{"window", p.Schedule.Evaluation.Window, "rules", summary}
		if w := UpstreamsWaiting(out); w != "" {
			kv = append(kv, "upstreams", w) // why, when an upstream kept it waiting
		}
		eff.note(event.ValidationExhausted, fmt.Sprintf("evaluation window %s closed without the rules passing", p.Schedule.Evaluation.Window), kv...)
		r.end(FailedFinal, OutcomeValidationExhausted, now)
		eff.Ended = true
		return r, eff
	}
	r.UpdatedAt = now
	next := now.Add(p.Schedule.Evaluation.Interval)
	if next.After(r.EvalDeadline) {
		next = r.EvalDeadline
	}
	eff.Next, eff.NextAt = StepEvaluate, next
	return r, eff
}

// PassedMessage says how the validation rules passed: all of them (ALL
// mode), or which ones did (ANY mode, where one is enough).
func PassedMessage(out rule.Outcome) string {
	if out.Mode != rule.Any {
		return "all validation rules passed"
	}
	passed := passedRules(out)
	return fmt.Sprintf("validation passed (ANY mode, %d of %d rules): %s passed", len(passed), len(out.Results), strings.Join(passed, ", "))
}

// passedRules names the rules that passed as explain shows them ("rows gte
// count").
func passedRules(out rule.Outcome) []string {
	var names []string
	for _, res := range out.Results {
		if res.Passed {
			names = append(names, strings.Join(strings.Fields(res.Rule.Key+" "+string(res.Rule.Op)+" "+res.Rule.Field), " "))
		}
	}
	return names
}

// BeginTrigger marks a trigger call as in flight. It is committed before
// the call is made, so only one caller makes it, and a process that dies
// during the call leaves a mark that the next attempt finds. The lease
// (when the trigger step fires again if the process died) and the run's
// time-to-live cover the call's own timeout, so a long synchronous job is
// never declared dead while it runs.
func BeginTrigger(r Run, p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	lease := CallTimeout(p) + TriggerLease
	r.TriggerInFlight = true
	r.UpdatedAt = now
	r.ExpiresAt = now.Add(lease + ttlMargin)
	return r, Effect{Next: StepTrigger, NextAt: now.Add(lease)}
}

// CallTimeout bounds one trigger call of the pipeline's job:
// job.config.timeout when set, else the type's default (synchronous
// commands and Lambda invocations run within the call).
func CallTimeout(p *pipeline.Pipeline) time.Duration {
	if d := p.Job.Config.Duration("timeout"); d > 0 {
		return d
	}
	switch p.Job.Type {
	case pipeline.JobCommand:
		return time.Hour
	case pipeline.JobLambda:
		return 16 * time.Minute
	}
	return time.Minute
}

// TriggerInterrupted ends a run whose trigger call was in flight when the
// process stopped: the job may or may not have started, and starting it
// again could run it twice, so a person decides (a rerun). It is
// RecoverTrigger's answer for a job type that cannot be looked up.
func TriggerInterrupted(r Run, now time.Time) (Run, Effect) {
	var eff Effect
	eff.note(event.InfraFailure, "the trigger call was interrupted (process stopped); the job may or may not have started — check the job system, then request a rerun", "attempt", r.Attempt+1)
	r.end(FailedFinal, OutcomeTriggerUnknown, now)
	eff.Ended = true
	return r, eff
}

// TriggerBackoff is the wait before retry k (1-based) of a failed trigger
// call: 30s, 60s, 120s, … capped at 10m.
func TriggerBackoff(k int) time.Duration {
	d := 30 * time.Second
	for i := 1; i < k && d < 10*time.Minute; i++ {
		d *= 2
	}
	if d > 10*time.Minute {
		d = 10 * time.Minute
	}
	return d
}

// AfterTriggerError decides what follows a failed trigger call: retry with
// backoff within job.triggerRetries, then give up. Giving up ends the run
// and waits for a person: the job's state is unknown.
func AfterTriggerError(r Run, cause string, p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	var eff Effect
	r.TriggerInFlight = false
	r.TriggerErrors++
	r.UpdatedAt = now
	if r.TriggerErrors > p.Job.TriggerRetries {
		eff.note(event.RetryExhausted, fmt.Sprintf("trigger call failed %d time(s), giving up: %s", r.TriggerErrors, cause), "cause", cause, "triggerErrors", r.TriggerErrors, "source", "trigger")
		r.end(FailedFinal, OutcomeTriggerExhausted, now)
		eff.Ended = true
		return r, eff
	}
	wait := TriggerBackoff(r.TriggerErrors)
	r.ExpiresAt = now.Add(wait + TriggerLease + ttlMargin)
	eff.Next, eff.NextAt = StepTrigger, now.Add(wait)
	return r, eff
}

// Triggered records a started job. When the job already finished (a
// synchronous type), its result is applied at once.
func Triggered(r Run, jobType, jobRunID string, meta map[string]string, p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	return triggered(r, jobType, jobRunID, meta, p, now, "")
}

// triggered is Triggered; adopted, when set, says how the job was found
// rather than started by a recorded call (RecoverTrigger).
func triggered(r Run, jobType, jobRunID string, meta map[string]string, p *pipeline.Pipeline, now time.Time, adopted string) (Run, Effect) {
	var eff Effect
	r.TriggerInFlight = false
	r.TriggerErrors = 0
	r.Attempt++
	r.JobRunID, r.JobMeta = jobRunID, meta
	r.JobStartedAt = now
	r.enter(Running, now)
	r.PollDeadline = now.Add(p.Job.PollWindow)
	r.ExpiresAt = r.PollDeadline.Add(ttlMargin)
	// The cause and the period's instants are for readers that know no
	// config: lineage's nominal time (the openlineage sink).
	kv := []any{"jobType", jobType, "jobRunId", jobRunID, "attempt", r.Attempt, "generation", r.Generation, "cause", string(r.Cause)}
	if per, err := schedule.ParsePeriod(r.Period); err == nil {
		kv = append(kv, "periodStart", per.Start(p.Schedule.Location).UTC(), "periodEnd", per.End(p.Schedule.Location).UTC())
	}
	if adopted != "" {
		eff.note(event.JobTriggered, fmt.Sprintf("triggered %s job (attempt %d; %s)", jobType, r.Attempt, adopted), append(kv, "adopted", true)...)
	} else {
		eff.note(event.JobTriggered, fmt.Sprintf("triggered %s job (attempt %d)", jobType, r.Attempt), kv...)
	}
	eff.Next, eff.NextAt = StepPoll, minTime(now.Add(p.Job.PollInterval), r.PollDeadline)
	return r, eff
}

// AfterPollRunning decides what follows a poll that found the job still
// running (or could not read its status): poll again, or end the run when
// the poll window has closed. The job's state is then unknown, so it is
// not retried automatically.
func AfterPollRunning(r Run, p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	var eff Effect
	if !now.Before(r.PollDeadline) {
		eff.note(event.JobPollExhausted, fmt.Sprintf("poll window %s closed while the job was still running; its state is unknown — check the job system, then request a rerun", p.Job.PollWindow), "pollWindow", p.Job.PollWindow, "jobRunId", r.JobRunID)
		r.end(FailedFinal, OutcomePollExhausted, now)
		eff.Ended = true
		return r, eff
	}
	r.UpdatedAt = now
	eff.Next, eff.NextAt = StepPoll, minTime(now.Add(p.Job.PollInterval), r.PollDeadline)
	return r, eff
}

// JobSucceeded records success.
func JobSucceeded(r Run, now time.Time) (Run, Effect) {
	var eff Effect
	eff.note(event.JobCompleted, fmt.Sprintf("job completed (attempt %d)", r.Attempt), "jobRunId", r.JobRunID, "attempt", r.Attempt, "duration", now.Sub(r.JobStartedAt))
	r.LastFailure = nil
	r.end(Completed, OutcomeSucceeded, now)
	eff.Succeeded = true
	return r, eff
}

// RetryBudget is the budget for retrying a job failure of category c:
// maxCodeRetries for PERMANENT failures, maxRetries otherwise.
func RetryBudget(c Category, p *pipeline.Pipeline) int {
	if c == Permanent {
		return p.Job.MaxCodeRetries
	}
	return p.Job.MaxRetries
}

// LedgerJobRetry is the ledger reason of an automatic retry.
const LedgerJobRetry = "job-fail-retry"

// RetriesUsed counts the automatic retries in a period's ledger reasons:
// only they draw on maxRetries / maxCodeRetries, not reruns (manual, late
// data, drift), which have budgets of their own.
func RetriesUsed(ledger []string) int {
	n := 0
	for _, l := range ledger {
		if l == LedgerJobRetry {
			n++
		}
	}
	return n
}

// JobFailed decides what follows a failed job: retry at once within the
// budget (retriesUsed: the automatic retries of the period so far, see
// RetriesUsed), or end the run. A retry of an excluded period is refused
// (exclusion: why it is excluded, ExclusionReason; "" when it is not).
func JobFailed(r Run, f Failure, retriesUsed int, exclusion string, p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	var eff Effect
	if f.Category == "" {
		f.Category = Transient
	}
	r.LastFailure = &f
	eff.note(event.JobFailed, fmt.Sprintf("job failed (attempt %d, %s): %s", r.Attempt, f.Category, f.Message), "category", string(f.Category), "error", f.Message, "attempt", r.Attempt, "jobRunId", r.JobRunID)
	budget := RetryBudget(f.Category, p)
	switch {
	case retriesUsed >= budget:
		eff.note(event.RetryExhausted, fmt.Sprintf("retry limit reached (%d/%d)", retriesUsed, budget), "retries", retriesUsed, "maxRetries", budget, "category", string(f.Category), "source", "job")
		r.end(FailedFinal, OutcomeRetriesExhausted, now)
		eff.Ended = true
	case exclusion != "":
		eff.note(event.PipelineExcluded, "job failure retry skipped: "+exclusion, "reason", "retry")
		r.end(FailedFinal, OutcomeExcluded, now)
		eff.Ended = true
	default:
		r.enter(Triggering, now)
		r.TriggerErrors = 0
		r.JobRunID, r.JobMeta = "", nil
		r.ExpiresAt = now.Add(TriggerLease + ttlMargin)
		eff.LedgerReason, eff.LedgerSource = LedgerJobRetry, string(f.Category)
		eff.Next, eff.NextAt = StepTrigger, now
	}
	return r, eff
}

// TimedOut ends a run whose time-to-live expired (the watchdog's
// SFN_TIMEOUT).
func TimedOut(r Run, now time.Time) (Run, Effect) {
	var eff Effect
	eff.note(event.SFNTimeout, fmt.Sprintf("run in %s passed its time-to-live (%s) without a terminal state", r.State, r.ExpiresAt.UTC().Format(time.RFC3339)), "ttlExpired", r.ExpiresAt, "state", string(r.State), "source", "watchdog")
	r.end(FailedFinal, OutcomeTimedOut, now)
	eff.Ended = true
	return r, eff
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func fmtAny(v any) string { return fmt.Sprint(v) }

// Resume restarts a run that a pause held before its job started: an
// evaluating run gets a fresh evaluation window (the pause must not use it
// up), a run that was about to trigger triggers now. Runs whose job is
// running were never held.
func Resume(r Run, p *pipeline.Pipeline, now time.Time) (Run, Effect) {
	switch r.State {
	case Evaluating:
		r.EvalStartedAt = now
		r.EvalDeadline = now.Add(p.Schedule.Evaluation.Window)
		r.ExpiresAt = r.EvalDeadline.Add(ttlMargin)
		r.UpdatedAt = now
		return r, Effect{Next: StepEvaluate, NextAt: now}
	case Triggering:
		r.UpdatedAt = now
		r.ExpiresAt = now.Add(TriggerLease + ttlMargin)
		return r, Effect{Next: StepTrigger, NextAt: now}
	}
	return r, Effect{}
}

// Close records a period closed by its trigger deadline (the watchdog's
// SENSOR_DEADLINE_EXPIRED): a terminal run that never triggered, which
// blocks later trigger data until a rerun reopens the period.
func Close(key Key, configVersion int64, now time.Time) Run {
	r := Run{Key: key, Cause: CauseDeadline, CreatedAt: now, ConfigVersion: configVersion}
	r.end(FailedFinal, OutcomeDeadlineExpired, now)
	return r
}

// UpstreamsWaiting joins the reasons of the upstream rules that did not
// pass ("upstream orders for period 2026-03-10: not yet (failed:
// retries-exhausted)"), "" when none: what VALIDATION_EXHAUSTED says a
// downstream waited for.
func UpstreamsWaiting(out rule.Outcome) string {
	var rs []string
	for _, r := range out.Results {
		if r.Rule.Op == rule.Op(pipeline.CheckUpstream) && !r.Passed {
			rs = append(rs, r.Reason)
		}
	}
	return strings.Join(rs, "; ")
}
