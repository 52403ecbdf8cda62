// Package event owns the event catalogue: every event type Interlock emits,
// its fixed level and what it means. Producers use the Type constants; sinks
// and config validation use Lookup and Types. No other package invents an
// event type string.
package event

import (
	"slices"
	"sort"
)

// Type is an event type, the EventBridge detail-type.
type Type string

// Level is the fixed severity of an event type, used by alert routing.
type Level string

// Levels.
const (
	LevelInfo    Level = "info"
	LevelWarning Level = "warning"
	LevelError   Level = "error"
)

// Levels lists the levels from least to most severe.
func Levels() []Level { return []Level{LevelInfo, LevelWarning, LevelError} }

// Lifecycle events.
const (
	ValidationPassed        Type = "VALIDATION_PASSED"
	ValidationExhausted     Type = "VALIDATION_EXHAUSTED"
	JobTriggered            Type = "JOB_TRIGGERED"
	JobCompleted            Type = "JOB_COMPLETED"
	JobFailed               Type = "JOB_FAILED"
	JobPollExhausted        Type = "JOB_POLL_EXHAUSTED"
	RetryExhausted          Type = "RETRY_EXHAUSTED"
	InfraFailure            Type = "INFRA_FAILURE"
	TriggerOutcomeUnknown   Type = "TRIGGER_OUTCOME_UNKNOWN"
	PipelineExcluded        Type = "PIPELINE_EXCLUDED"
	LateDataArrival         Type = "LATE_DATA_ARRIVAL"
	RerunAccepted           Type = "RERUN_ACCEPTED"
	RerunRejected           Type = "RERUN_REJECTED"
	PostRunBaselineCaptured Type = "POST_RUN_BASELINE_CAPTURED"
	BaselineCaptureFailed   Type = "BASELINE_CAPTURE_FAILED"
	PostRunDrift            Type = "POST_RUN_DRIFT"
	PostRunDriftInflight    Type = "POST_RUN_DRIFT_INFLIGHT"
	PostRunPassed           Type = "POST_RUN_PASSED"
	PostRunFailed           Type = "POST_RUN_FAILED"
)

// SLA events.
const (
	SLAWarning         Type = "SLA_WARNING"
	SLABreach          Type = "SLA_BREACH"
	SLAMet             Type = "SLA_MET"
	RelativeSLAWarning Type = "RELATIVE_SLA_WARNING"
	RelativeSLABreach  Type = "RELATIVE_SLA_BREACH"
)

// Watchdog events.
const (
	SFNTimeout              Type = "SFN_TIMEOUT"
	ScheduleMissed          Type = "SCHEDULE_MISSED"
	ScheduleRecovered       Type = "SCHEDULE_RECOVERED"
	IrregularScheduleMissed Type = "IRREGULAR_SCHEDULE_MISSED"
	TriggerRecovered        Type = "TRIGGER_RECOVERED"
	SensorDeadlineExpired   Type = "SENSOR_DEADLINE_EXPIRED"
	PostRunSensorMissing    Type = "POST_RUN_SENSOR_MISSING"
	RunStuck                Type = "RUN_STUCK"
	WatchdogDegraded        Type = "WATCHDOG_DEGRADED"
)

// Root-cause events (docs/root-cause.md).
const (
	// RootCauseResolved: a downstream condition stored blocked by an
	// upstream root had cleared when the root recovered.
	RootCauseResolved Type = "ROOT_CAUSE_RESOLVED"
)

// Dry-run events.
const (
	DryRunWouldTrigger   Type = "DRY_RUN_WOULD_TRIGGER"
	DryRunLateData       Type = "DRY_RUN_LATE_DATA"
	DryRunSLAProjection  Type = "DRY_RUN_SLA_PROJECTION"
	DryRunCompleted      Type = "DRY_RUN_COMPLETED"
	DryRunDrift          Type = "DRY_RUN_DRIFT"
	DryRunWouldRerun     Type = "DRY_RUN_WOULD_RERUN"
	DryRunRerunRejected  Type = "DRY_RUN_RERUN_REJECTED"
	DryRunWouldRetry     Type = "DRY_RUN_WOULD_RETRY"
	DryRunRetryExhausted Type = "DRY_RUN_RETRY_EXHAUSTED"
)

// Operator and configuration events.
const (
	ConfigInvalid   Type = "CONFIG_INVALID"
	PipelinePaused  Type = "PIPELINE_PAUSED"
	PipelineResumed Type = "PIPELINE_RESUMED"
	InfraAlarm      Type = "INFRA_ALARM"
	// Items someone else wrote into the store (the AWS runtime's sensor
	// and job-log tables) that cannot be what their key says.
	SensorRejected    Type = "SENSOR_REJECTED"
	JobReportRejected Type = "JOB_REPORT_REJECTED"
)

// Backfill events (a range of past periods run on request).
const (
	BackfillRequested     Type = "BACKFILL_REQUESTED"
	BackfillPeriodStarted Type = "BACKFILL_PERIOD_STARTED"
	BackfillPeriodSkipped Type = "BACKFILL_PERIOD_SKIPPED"
	BackfillCompleted     Type = "BACKFILL_COMPLETED"
	BackfillCancelled     Type = "BACKFILL_CANCELLED"
)

// Silence events (internal/silence).
const (
	SilenceCreated Type = "SILENCE_CREATED"
	SilenceExpired Type = "SILENCE_EXPIRED"
)

// Group is the family an event type belongs to: what part of Interlock
// emits it. A filter over event types names groups (InGroup), never a
// prefix of the type's name: a new type joins its group here, where it is
// defined, and a name that happens to share a prefix joins nothing.
type Group string

// Groups, as the constants above are grouped.
const (
	GroupLifecycle Group = "lifecycle" // a run's life, from validation to post-run
	GroupSLA       Group = "sla"
	GroupWatchdog  Group = "watchdog"
	GroupRootCause Group = "root-cause"
	GroupDryRun    Group = "dry-run"  // a dry-run pipeline's projections
	GroupOperator  Group = "operator" // operators, configuration and items written by others
	GroupBackfill  Group = "backfill"
	GroupSilence   Group = "silence"
)

// Groups lists every group.
func Groups() []Group {
	return []Group{GroupLifecycle, GroupSLA, GroupWatchdog, GroupRootCause, GroupDryRun, GroupOperator, GroupBackfill, GroupSilence}
}

// Spec describes one event type.
type Spec struct {
	Type    Type
	Group   Group
	Level   Level
	Summary string
}

var catalogue = map[Type]Spec{}

func def(t Type, g Group, l Level, summary string) {
	catalogue[t] = Spec{Type: t, Group: g, Level: l, Summary: summary}
}

func init() {
	def(ValidationPassed, GroupLifecycle, LevelInfo, "all validation rules passed for the period")
	def(ValidationExhausted, GroupLifecycle, LevelError, "the evaluation window closed before the rules passed")
	def(JobTriggered, GroupLifecycle, LevelInfo, "the job was started (one event per trigger)")
	def(JobCompleted, GroupLifecycle, LevelInfo, "the job reported success (one event per success)")
	def(JobFailed, GroupLifecycle, LevelError, "the job reported failure")
	def(JobPollExhausted, GroupLifecycle, LevelError, "the job's poll window closed without a result; its state is unknown")
	def(RetryExhausted, GroupLifecycle, LevelError, "the retry budget or the trigger call's infrastructure retries are used up")
	def(InfraFailure, GroupLifecycle, LevelError, "Interlock could not carry out a step because of an infrastructure error")
	def(TriggerOutcomeUnknown, GroupLifecycle, LevelWarning, "a trigger call was found in flight with no process to record its result (the process stopped during the call); its outcome is being established")
	def(PipelineExcluded, GroupLifecycle, LevelInfo, "the period is excluded by schedule.exclude (weekends, days, dates or a calendar)")
	def(LateDataArrival, GroupLifecycle, LevelWarning, "new trigger data arrived after the period's job succeeded")
	def(RerunAccepted, GroupLifecycle, LevelInfo, "a rerun was accepted")
	def(RerunRejected, GroupLifecycle, LevelWarning, "a rerun was refused by a budget or the circuit breaker")
	def(PostRunBaselineCaptured, GroupLifecycle, LevelInfo, "post-run baseline captured at job success")
	def(BaselineCaptureFailed, GroupLifecycle, LevelError, "the post-run baseline could not be captured")
	def(PostRunDrift, GroupLifecycle, LevelWarning, "a post-run sensor drifted from its baseline after completion")
	def(PostRunDriftInflight, GroupLifecycle, LevelWarning, "a post-run sensor drifted while the job was running (informational)")
	def(PostRunPassed, GroupLifecycle, LevelInfo, "post-run rules passed")
	def(PostRunFailed, GroupLifecycle, LevelError, "post-run rules failed")

	def(SLAWarning, GroupSLA, LevelWarning, "the SLA warning time passed and the period is not done")
	def(SLABreach, GroupSLA, LevelError, "the SLA deadline passed and the period is not done")
	def(SLAMet, GroupSLA, LevelInfo, "the job succeeded before the SLA deadline")
	def(RelativeSLAWarning, GroupSLA, LevelWarning, "the relative SLA warning time passed")
	def(RelativeSLABreach, GroupSLA, LevelError, "first trigger-sensor arrival plus sla.maxDuration passed without completion")

	def(SFNTimeout, GroupWatchdog, LevelError, "a run's time-to-live expired without a terminal state; the run is set FAILED_FINAL")
	def(ScheduleMissed, GroupWatchdog, LevelError, "a cron schedule's expected start passed with no run for the period")
	def(ScheduleRecovered, GroupWatchdog, LevelInfo, "a run appeared for a period reported as SCHEDULE_MISSED")
	def(IrregularScheduleMissed, GroupWatchdog, LevelError, "an inclusion date passed with no run")
	def(TriggerRecovered, GroupWatchdog, LevelInfo, "the watchdog started a run for a stored sensor that satisfied the trigger")
	def(SensorDeadlineExpired, GroupWatchdog, LevelWarning, "the trigger deadline passed with no run; the period is closed until a rerun")
	def(PostRunSensorMissing, GroupWatchdog, LevelWarning, "no post-run sensor arrived within postRun.sensorTimeout after completion")
	def(RunStuck, GroupWatchdog, LevelWarning, "a run stayed in a non-terminal state longer than job.stuckAfter")
	def(WatchdogDegraded, GroupWatchdog, LevelError, "one or more watchdog checks failed")

	def(RootCauseResolved, GroupRootCause, LevelInfo, "a downstream problem stored as blocked by an upstream root (Detail.blockedBy) had cleared when the root recovered; Detail.type names it")

	def(DryRunWouldTrigger, GroupDryRun, LevelInfo, "dry-run: the job would have been triggered")
	def(DryRunLateData, GroupDryRun, LevelInfo, "dry-run: trigger data arrived after the would-be trigger")
	def(DryRunSLAProjection, GroupDryRun, LevelInfo, "dry-run: projected completion against the SLA")
	def(DryRunCompleted, GroupDryRun, LevelInfo, "dry-run: the would-be run is complete")
	def(DryRunDrift, GroupDryRun, LevelInfo, "dry-run: a post-run sensor drifted from its baseline")
	def(DryRunWouldRerun, GroupDryRun, LevelInfo, "dry-run: a rerun would have been accepted")
	def(DryRunRerunRejected, GroupDryRun, LevelInfo, "dry-run: a rerun would have been refused")
	def(DryRunWouldRetry, GroupDryRun, LevelInfo, "dry-run: a failed job would have been retried")
	def(DryRunRetryExhausted, GroupDryRun, LevelInfo, "dry-run: the retry budget would have been used up")

	def(ConfigInvalid, GroupOperator, LevelError, "a configuration file was refused; the last valid version keeps running")
	def(PipelinePaused, GroupOperator, LevelInfo, "an operator paused the pipeline")
	def(PipelineResumed, GroupOperator, LevelInfo, "an operator resumed the pipeline")
	def(InfraAlarm, GroupOperator, LevelError, "an infrastructure alarm changed state (AWS runtime)")
	def(SensorRejected, GroupOperator, LevelWarning, "a sensor item written to the store could not be a sensor (bad shape, unknown pipeline); it names the item")
	def(JobReportRejected, GroupOperator, LevelWarning, "a job-log record could not be applied (unknown pipeline, bad key); it names the item")

	def(BackfillRequested, GroupBackfill, LevelInfo, "an operator asked to run a range of past periods (from, to, only, maxActive)")
	def(BackfillPeriodStarted, GroupBackfill, LevelInfo, "a backfill started (or reran) one period of its range")
	def(BackfillPeriodSkipped, GroupBackfill, LevelInfo, "a backfill skipped one period of its range, saying why")
	def(BackfillCompleted, GroupBackfill, LevelInfo, "a backfill has no period left to run (counts succeeded, failed, skipped)")
	def(BackfillCancelled, GroupBackfill, LevelInfo, "an operator cancelled a backfill: no new period starts, running ones finish")
	def(SilenceCreated, GroupSilence, LevelInfo, "an operator silenced alerts matching its matchers until its end (who, matchers, end, comment)")
	def(SilenceExpired, GroupSilence, LevelInfo, "an operator ended a silence before its end")
}

// Lookup returns the spec of t and whether t is in the catalogue.
func Lookup(t Type) (Spec, bool) {
	s, ok := catalogue[t]
	return s, ok
}

// InGroup reports whether t is in one of groups (false for a type not in
// the catalogue).
func InGroup(t Type, groups ...Group) bool {
	return slices.Contains(groups, catalogue[t].Group) // an unknown type's is ""
}

// Types lists every event type, sorted.
func Types() []Type {
	out := make([]Type, 0, len(catalogue))
	for t := range catalogue {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
