package run

import (
	"fmt"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Routing: what an input to a pipeline comes to — a cron tick or trigger
// data opening a period, a sensor write, post-run data. Each is decided
// here from the pipeline's config, its row's pause state and the period's
// run; the engine carries out the answer.

// StartAction is what opening a period comes to (PeriodStart).
type StartAction int

// Start actions.
const (
	StartRun      StartAction = iota // open the run; its first evaluation is in the same commit
	StartExcluded                    // the date is excluded: report it once (ExcludedStart), start nothing
	StartDryRun                      // a dry-run pipeline only observes (dryrun.Trigger)
	StartHeld                        // the pipeline is paused: start nothing; Resume starts it
	StartExists                      // the period has a run: creating it is the per-period lock
)

// PeriodStart decides what a cron tick, trigger data, a resume or the
// watchdog's recovery opening a period comes to, in that order: an
// excluded date, a dry-run pipeline, a paused one, a period that already
// has a run (existing; nil when none), else a new run.
func PeriodStart(p *pipeline.Pipeline, per schedule.Period, paused bool, existing *Run) StartAction {
	switch {
	case Excluded(p, per):
		return StartExcluded
	case p.DryRun:
		return StartDryRun
	case paused:
		return StartHeld
	case existing != nil:
		return StartExists
	}
	return StartRun
}

// ExcludedStart is the PIPELINE_EXCLUDED report of a period that cause
// would have started, unless it was reported already (MarkerExcluded).
func ExcludedStart(p *pipeline.Pipeline, per schedule.Period, cause Cause, reported bool) (Note, bool) {
	if reported {
		return Note{}, false
	}
	return Note{Type: event.PipelineExcluded, Message: fmt.Sprintf("%s for %s suppressed: %s", cause, per, ExclusionReason(p, per)),
		Detail: Detail("source", "schedule.exclude", "excludedBy", strings.Join(ExcludedBy(p, per), ", "))}, true
}

// SensorRoute is what a sensor write with new content is about.
type SensorRoute int

// Sensor routes.
const (
	SensorForRules   SensorRoute = iota // may complete the rules of a run that waits (EvaluatesOnData)
	SensorForTrigger                    // trigger data: may open the period (TriggerCheck, OnTriggerData)
	SensorForPostRun                    // post-run data: drift and post-run rules (PostRunData)
)

// RouteSensor routes a sensor key: a trigger key first, then a post-run
// rule key (ruleKey: the rule's), else any other key.
func RouteSensor(p *pipeline.Pipeline, key string) (route SensorRoute, ruleKey string) {
	if MatchesTrigger(p, key) {
		return SensorForTrigger, ""
	}
	if rk, ok := MatchesPostRun(p, key); ok {
		return SensorForPostRun, rk
	}
	return SensorForRules, ""
}

// HeldByPause reports whether a pause holds r: its job has not started
// (evaluating, or about to trigger with no call in flight). A paused
// pipeline's held runs wait; Resume re-arms them. A run whose job is
// running, or whose trigger call is in flight, goes on.
func HeldByPause(r Run) bool {
	return r.State == Evaluating || (r.State == Triggering && !r.TriggerInFlight)
}

// EvaluatesOnData reports whether new data evaluates r's rules at once
// instead of at its next interval: r waits for its rules and is not held
// by a pause.
func EvaluatesOnData(r Run, paused bool) bool { return r.State == Evaluating && !paused }

// TriggerCheck evaluates the pipeline's trigger condition against one
// trigger sensor (the condition's key is a prefix: it is read from the
// sensor's own key).
func TriggerCheck(p *pipeline.Pipeline, rec sensor.Record, now time.Time, opt rule.Options) rule.Result {
	cond := p.Schedule.Trigger.Rule
	cond.Key = rec.Key
	return rule.Evaluate(cond, rule.SensorMap{rec.Key: rec}, now, opt)
}

// TriggerAction is what trigger data that satisfies the condition does
// to a period (OnTriggerData).
type TriggerAction int

// Trigger actions.
const (
	TriggerNothing  TriggerAction = iota // recorded only (a paused pipeline's Resume handles it; a run already past its rules)
	TriggerStart                         // open the period (PeriodStart decides how)
	TriggerEvaluate                      // evaluate the waiting run's rules now
	TriggerLateData                      // the period succeeded: LATE_DATA_ARRIVAL and a late-data rerun request
)

// OnTriggerData decides what trigger data that satisfies the condition
// does to its period, whose run is existing (nil: none; possibly under the
// other schedule id, OtherSchedule). firstArrival: record the period's
// first trigger-sensor arrival (the start of a relative SLA) — for a live
// pipeline on a date that is not excluded.
func OnTriggerData(p *pipeline.Pipeline, per schedule.Period, paused bool, existing *Run) (firstArrival bool, act TriggerAction) {
	firstArrival = !Excluded(p, per) && !p.DryRun
	switch {
	case existing == nil:
		return firstArrival, TriggerStart
	case paused:
		return firstArrival, TriggerNothing
	case existing.State == Evaluating:
		return firstArrival, TriggerEvaluate
	case existing.State == Completed:
		return firstArrival, TriggerLateData
	}
	return firstArrival, TriggerNothing
}

// LateData is the LATE_DATA_ARRIVAL report of trigger data for a period
// whose run r succeeded.
func LateData(r Run, sensorKey string) Note {
	return Note{Type: event.LateDataArrival, Message: fmt.Sprintf("new data for %s arrived after the job succeeded (sensor %s)", r.Period, sensorKey), Detail: Detail("sensorKey", sensorKey, "completedAt", r.EndedAt)}
}

// PostRunDecision is what post-run data does to its period.
type PostRunDecision struct {
	Notes []Note
	// MarkArrived: record that a post-run sensor was judged after the
	// period's success (MarkerPostRunArrived, replaced; Detail: sensorKey).
	// The watchdog's missing-post-run-sensor check reads it: it outlives
	// the sensor, which may be rewritten for the next period.
	MarkArrived bool
	Rerun       bool // request a drift rerun (ReasonDrift), after Notes
	JudgeRules  bool // evaluate the post-run rules (PostRunVerdict), after Notes
}

// PostRunData decides what a post-run sensor write does to a live
// pipeline's period, whose run is r (nil: none) and whose post-run
// baseline holds baseline for the sensor's rule key (nil: none). Drift
// against the baseline while the job is still going is only reported
// (POST_RUN_DRIFT_INFLIGHT); after a success it is reported and requests a
// rerun (POST_RUN_DRIFT); otherwise the post-run rules are judged. A
// period with no run, or whose run failed, ignores post-run data.
func PostRunData(p *pipeline.Pipeline, r *Run, baseline *sensor.Object, sensorKey string, data sensor.Object) PostRunDecision {
	var d PostRunDecision
	if r == nil || r.State == FailedFinal {
		return d
	}
	var drift DriftResult
	if baseline != nil {
		drift = Drift(*baseline, data, p.PostRun.DriftField, p.PostRun.DriftThreshold)
	}
	detail := Detail("previousCount", drift.Previous, "currentCount", drift.Current, "delta", drift.Delta,
		"driftThreshold", p.PostRun.DriftThreshold, "driftField", p.PostRun.DriftField, "sensorKey", sensorKey)
	if r.State != Completed {
		if drift.Drifted {
			d.Notes = append(d.Notes, Note{Type: event.PostRunDriftInflight, Message: fmt.Sprintf("%s drifted while the job was running: %s %v → %v (informational)", sensorKey, p.PostRun.DriftField, drift.Previous, drift.Current), Detail: detail})
		}
		return d
	}
	d.MarkArrived = true
	if drift.Drifted {
		d.Notes = append(d.Notes, Note{Type: event.PostRunDrift, Message: fmt.Sprintf("%s drifted after completion: %s %v → %v (threshold %v)", sensorKey, p.PostRun.DriftField, drift.Previous, drift.Current, p.PostRun.DriftThreshold), Detail: detail})
		d.Rerun = true
		return d
	}
	d.JudgeRules = true
	return d
}

// PostRunVerdict is POST_RUN_PASSED or POST_RUN_FAILED for the post-run
// rules' outcome after a write of sensorKey.
func PostRunVerdict(out rule.Outcome, sensorKey string) Note {
	typ, verdict := event.PostRunPassed, "passed"
	if !out.Passed {
		typ, verdict = event.PostRunFailed, "failed"
	}
	var failed []string
	for _, r := range out.Results {
		if !r.Passed {
			failed = append(failed, r.Rule.Key+": "+r.Reason)
		}
	}
	return Note{Type: typ, Message: fmt.Sprintf("post-run rules %s: %s", verdict, out.Summary()), Detail: Detail("rules", out.Summary(), "sensorKey", sensorKey, "reasons", strings.Join(failed, "; "))}
}

// PeriodTriggerSensor picks, among stored sensors (any order), the trigger
// sensor that speaks for per — the newest by arrival of those the trigger
// key matches that name per — as `explain` shows the trigger condition
// against it. ok is false when none does.
func PeriodTriggerSensor(p *pipeline.Pipeline, per schedule.Period, stored []sensor.Record) (i int, ok bool) {
	for j, rec := range stored {
		if !MatchesTrigger(p, rec.Key) {
			continue
		}
		sp, err := SensorPeriod(p, rec.Key, rec.Data, rec.ReceivedAt)
		if err != nil || sp != per {
			continue
		}
		if !ok || rec.ReceivedAt.After(stored[i].ReceivedAt) {
			i, ok = j, true
		}
	}
	return i, ok
}

// SensorChangedAt is when a sensor written at now last received new
// content: now for new data (NewData), else when the stored content
// arrived (storedAt) — an identical re-write moves only its write time.
func SensorChangedAt(changed bool, storedAt, now time.Time) time.Time {
	if changed {
		return now
	}
	return storedAt
}
