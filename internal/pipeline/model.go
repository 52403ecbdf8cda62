package pipeline

import (
	"time"

	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
)

// Pipeline is one validated pipeline document. Every field holds a parsed
// value with its default applied; nothing in it needs checking again.
type Pipeline struct {
	ID          string
	Owner       string
	Description string
	Schedule    Schedule
	SLA         *SLA // nil: no SLA
	Validation  Validation
	PostRun     *PostRun // nil: no post-run checks
	Job         Job
	// Upstreams are the `{check: upstream}` rules of validation.rules
	// (also in Validation.Upstreams), in rule order: the pipelines whose
	// run for the mapped period must have succeeded (upstream.go).
	Upstreams []Upstream
	// DryRun: observe and project, never trigger (enforced at the
	// actuator and notifier boundary, product spec §3 item 10).
	DryRun bool
	// Lineage are the OpenLineage events the pipeline listens to
	// (lineage.go); nil: none.
	Lineage []LineageSource
	Source  Source
}

// Source says where a configuration came from, so a stored config
// version can be tied to the exact bytes that produced it.
type Source struct {
	File string // as given to the loader
	// SHA256 is the hex SHA-256 of the file's bytes, or, for a document
	// embedded in another file (a scenario), of its canonical YAML
	// re-encoding.
	SHA256 string
}

// Schedule ID values (product spec: one schedule per pipeline).
const (
	ScheduleCron   = "cron"
	ScheduleStream = "stream"
)

// ScheduleID is "cron" when the pipeline has a cron schedule, else
// "stream" (the reference's scheduleId, used in keys and events).
func (p *Pipeline) ScheduleID() string {
	if !p.Schedule.Cron.IsZero() {
		return ScheduleCron
	}
	return ScheduleStream
}

// Schedule says when a pipeline may run.
type Schedule struct {
	Cron     schedule.Cron  // zero (IsZero) when the pipeline has no cron
	Location *time.Location // schedule.timezone; never nil (default UTC)
	// Time is the expected start ("HH:MM"), used by the watchdog; nil
	// when not set.
	Time       *schedule.ClockTime
	Trigger    *Trigger // nil: no sensor trigger
	Evaluation Evaluation
	Include    *Include // nil: no inclusion calendar
	Exclude    Exclude
}

// Trigger is the sensor condition that starts a run.
type Trigger struct {
	Rule     rule.Rule
	Deadline schedule.Deadline // zero (IsZero) when not set
}

// Evaluation bounds the rule-evaluation loop of a run.
type Evaluation struct {
	Window   time.Duration // default 1h
	Interval time.Duration // default 5m; 0 < Interval ≤ Window
}

// Include is an inclusion calendar: the dates (irregular schedule) a
// pipeline is expected to run on.
type Include struct {
	Dates    []schedule.Date
	Calendar string          // named calendar merged in, "" if none
	Days     schedule.DaySet // Dates and the calendar merged
}

// Exclude lists the days a pipeline must not run, judged on the
// period's date in the schedule's time zone.
type Exclude struct {
	Weekends bool
	Weekdays []time.Weekday
	Dates    []schedule.Date
	Calendar string // "" if none
	// Days merges all of the above (weekends as Saturday and Sunday);
	// a period is excluded when Days.Contains(period.Date).
	Days schedule.DaySet
}

// SLA is a pipeline's time budget; it observes, it never stops a run.
type SLA struct {
	Deadline schedule.Deadline // zero when only MaxDuration is set
	// ExpectedDuration sets the warning lead (warning = breach −
	// ExpectedDuration); 0 means no warning timer for the absolute
	// deadline, and maxDuration/4 for the relative one.
	ExpectedDuration time.Duration
	// MaxDuration is the relative SLA from the period's first
	// trigger-sensor arrival; 0 when not set.
	MaxDuration time.Duration
	Location    *time.Location // sla.timezone, else schedule.timezone; never nil
	Critical    bool
}

// Validation are the rules that must pass before the job is triggered.
type Validation struct {
	Mode  rule.Mode   // default ALL
	Rules []rule.Rule // the sensor rules; upstream rules are in Upstreams
	// Upstreams are the upstream rules. Mode combines the sensor rules
	// only: every upstream rule must pass whatever the mode (a
	// dependency is never one of several alternatives).
	Upstreams []Upstream
}

// PostRun are the checks after a successful job.
type PostRun struct {
	Rules          []rule.Rule // always combined with ALL
	DriftField     string      // default "count"
	DriftThreshold float64     // drift iff |current − baseline| > threshold; default 0
	SensorTimeout  time.Duration
}

// Job is what a pipeline runs and its budgets. Budgets hold their
// resolved value: an omitted budget has its default, an explicit 0 is 0
// (disabled).
type Job struct {
	Type            JobType
	Config          JobConfig
	MaxRetries      int // retries after a job failure; default 0, 0–10
	MaxCodeRetries  int // instead of MaxRetries for PERMANENT failures; default 1, 0–3
	MaxDriftReruns  int // reruns for drift and late data; default 1, 0–5
	MaxManualReruns int // reruns for any other reason; default 1, 0–5
	TriggerRetries  int // infrastructure retries of the trigger call; default 3, 0–10
	PollInterval    time.Duration
	PollWindow      time.Duration
	// StuckAfter is nil when not set: the watchdog then uses
	// watchdog.stuckRunThreshold from interlock.yaml.
	StuckAfter *time.Duration
}
