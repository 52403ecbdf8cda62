package decide

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/lineage"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/sla"
	"github.com/interlockhq/interlock/internal/store"
)

// Explanation is what `interlock explain` shows: why a period of a
// pipeline would or would not run, right now.
type Explanation struct {
	PipelineID string    `json:"pipelineId"`
	ScheduleID string    `json:"scheduleId"`
	Period     string    `json:"period"`
	Now        time.Time `json:"now"`
	Timezone   string    `json:"timezone"`
	Paused     bool      `json:"paused"`
	DryRun     bool      `json:"dryRun"`
	Excluded   bool      `json:"excluded"`
	// ExcludedBy says why the period is excluded, naming the rule of
	// schedule.exclude ("2026-03-14 (Saturday) is excluded as a weekend
	// (exclude.weekends)").
	ExcludedBy string `json:"excludedBy,omitempty"`

	Validation RuleSet      `json:"validation"`
	Trigger    *RuleCheck   `json:"trigger,omitempty"` // the trigger condition against the period's trigger sensor
	Run        *RunSummary  `json:"run,omitempty"`     // the period's run (the lock); nil: the lock is free
	Deadlines  Deadlines    `json:"deadlines"`
	Budgets    []BudgetUsed `json:"budgets"`
}

// RuleSet is an evaluation of a list of rules.
type RuleSet struct {
	Mode    string      `json:"mode"`
	Passed  bool        `json:"passed"`
	Summary string      `json:"summary"`
	Rules   []RuleCheck `json:"rules"`
}

// RuleCheck is one rule with what it saw.
type RuleCheck struct {
	Key          string        `json:"key"`
	Upstream     string        `json:"upstream,omitempty"` // check upstream: the upstream pipeline (Key holds it too)
	Check        string        `json:"check"`
	Field        string        `json:"field,omitempty"`
	Value        *sensor.Value `json:"value,omitempty"`
	Passed       bool          `json:"passed"`
	Observed     *sensor.Value `json:"observed,omitempty"`
	SensorKey    string        `json:"sensorKey,omitempty"`  // the stored key that served the rule (a per-period key maps to its base key)
	ReceivedAt   *time.Time    `json:"receivedAt,omitempty"` // when Interlock received the sensor's current content
	SensorAge    string        `json:"sensorAge,omitempty"`
	Reason       string        `json:"reason"`
	FieldPresent bool          `json:"fieldPresent"`
	// Lineage is the OpenLineage run event the sensor holds, when one
	// of the pipeline's lineage sources wrote it (lineage.EventOf).
	Lineage *lineage.EventRef `json:"lineage,omitempty"`
}

// RunSummary is the stored run of the period.
type RunSummary struct {
	State        run.State    `json:"state"`
	Outcome      run.Outcome  `json:"outcome,omitempty"`
	Cause        run.Cause    `json:"cause"`
	Generation   int          `json:"generation"`
	Attempt      int          `json:"attempt"`
	StateSince   time.Time    `json:"stateSince"`
	EvalDeadline *time.Time   `json:"evaluationWindowCloses,omitempty"`
	PollDeadline *time.Time   `json:"pollWindowCloses,omitempty"`
	JobRunID     string       `json:"jobRunId,omitempty"`
	LastFailure  *run.Failure `json:"lastFailure,omitempty"`
	LastOutput   *JobOutput   `json:"lastOutput,omitempty"` // what the last finished job printed (output.go)
	// TriggerCall says what becomes of a trigger call in flight and when:
	// its lease, or — after the process that made it stopped — the lookup
	// of its job, or why its type cannot be looked up and when the run
	// ends as outcome unknown (run.CallStatus).
	TriggerCall string `json:"triggerCall,omitempty"`
}

// Deadlines are the period's resolved instants.
type Deadlines struct {
	SLATimezone string     `json:"slaTimezone,omitempty"` // the zone the SLA deadline is read in (sla.timezone, default schedule.timezone)
	SLAWarning  *time.Time `json:"slaWarning,omitempty"`
	SLABreach   *time.Time `json:"slaBreach,omitempty"`
	// SLA alerts are forward-only: a warning or breach time that came
	// before the pipeline was first loaded (LoadedAt) is not reported —
	// no SLA_WARNING, and no SLA_BREACH nor verdict at completion.
	LoadedAt             *time.Time `json:"loadedAt,omitempty"` // set when one of the two came before it
	SLAWarningBeforeLoad bool       `json:"slaWarningBeforeLoad,omitempty"`
	SLABreachBeforeLoad  bool       `json:"slaBreachBeforeLoad,omitempty"`
	RelativeSLABreach    *time.Time `json:"relativeSlaBreach,omitempty"`
	TriggerDeadline      *time.Time `json:"triggerDeadline,omitempty"`
	NextCronTick         *time.Time `json:"nextCronTick,omitempty"`
	FirstTriggerSensor   *time.Time `json:"firstTriggerSensor,omitempty"`
}

// BudgetUsed is one budget of the period and how much of it is used.
type BudgetUsed struct {
	Name string `json:"name"`
	Used int    `json:"used"`
	Max  int    `json:"max"`
}

// JobOutput is the output of the period's last finished job, as its
// JOB_COMPLETED or JOB_FAILED event recorded it.
type JobOutput struct {
	Event   event.Type `json:"event"`
	At      time.Time  `json:"at"`
	Attempt int        `json:"attempt,omitempty"`
	Output  string     `json:"output"`
}

// LastJobOutput is the output of the period's last finished job among
// its events evs, oldest first, of schedule scheduleID (run.LastJobOutput);
// nil when that job printed nothing.
func LastJobOutput(evs []event.Event, scheduleID string) *JobOutput {
	o, ok := run.LastJobOutput(evs, scheduleID)
	if !ok {
		return nil
	}
	return &JobOutput{Event: o.Event.Type, At: o.Event.Time, Attempt: o.Attempt, Output: o.Output}
}

// ExplainIn asks why a period of a pipeline would or would not run, now.
type ExplainIn struct {
	PipelineID string
	// Period is as asked ("": the current one).
	Period   string
	Rules    rule.Options
	Findable Findable
}

// explainPeriod is the period an explain of p asks about at now: the
// current one for "", else the period named (ErrInvalidRequest when it
// is not one).
func explainPeriod(p *pipeline.Pipeline, period string, now time.Time) (schedule.Period, error) {
	if period == "" {
		return run.CurrentPeriod(p, now), nil
	}
	per, err := schedule.ParsePeriod(period)
	if err != nil {
		return per, fmt.Errorf("%w: period: %v", ErrInvalidRequest, err)
	}
	return per, nil
}

// ExplainNeeds names what explaining period of pipelineID at now reads
// (needs.Explain), with the configs known.
func ExplainNeeds(cfg needs.Configs, pipelineID, period string, now time.Time) needs.Set {
	p := cfg(pipelineID)
	if p == nil {
		return needs.Pipeline(pipelineID)
	}
	per, err := explainPeriod(p, period, now)
	if err != nil {
		return needs.Pipeline(pipelineID)
	}
	return needs.Explain(p, cfg, per)
}

// Explain evaluates a period of a pipeline as it stands at now, deciding
// nothing: the validation rules as a rerun asked for now would see them,
// the trigger condition against the period's trigger sensor, the run
// (the lock), its call in flight and its last job's output (the page of
// the event log needs.JobOutputEvents names: LastJobOutput), the
// deadlines and the budgets.
func Explain(in ExplainIn, f *Facts, now time.Time) (Explanation, error) {
	lp, err := f.KnownPipeline(in.PipelineID)
	if err != nil {
		return Explanation{}, err
	}
	p := lp.P
	per, err := explainPeriod(p, in.Period, now)
	if err != nil {
		return Explanation{}, err
	}
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	x := Explanation{PipelineID: p.ID, ScheduleID: key.ScheduleID, Period: key.Period, Now: now, Timezone: p.Schedule.Location.String(),
		Paused: lp.Row.Paused, DryRun: p.DryRun, Excluded: run.Excluded(p, per), ExcludedBy: run.ExclusionReason(p, per)}
	sensors, err := SensorsFor(f, p.ID, per, p.Validation.Rules, nil)
	if err != nil {
		return x, err
	}
	// As a rerun asked for now would see them (a past period: its own
	// sensors, not today's plain flags).
	sensors = run.PeriodSensors(p, per, run.CauseRerun, sensors, now)
	out, err := Validation(f, in.Rules, p, per, sensors, now)
	if err != nil {
		return x, err
	}
	x.Validation = RuleSet{Mode: string(out.Mode), Passed: out.Passed, Summary: out.Summary()}
	for _, r := range out.Results {
		x.Validation.Rules = append(x.Validation.Rules, ruleCheck(p, r, sensors, now))
	}
	if p.Schedule.Trigger != nil {
		rc, err := explainTrigger(f, in.Rules, p, per, now)
		if err != nil {
			return x, err
		}
		x.Trigger = &rc
	}
	r, err := f.Run(key)
	if err != nil {
		return x, err
	}
	if r != nil {
		x.Run = summarize(*r)
		if x.Run.TriggerCall, err = CallStatus(f, lp, *r, in.Findable, now); err != nil {
			return x, err
		}
		page, err := f.eventsIn(needs.JobOutputEvents(key))
		if err != nil {
			return x, err
		}
		x.Run.LastOutput = LastJobOutput(page.Events, key.ScheduleID)
	}
	var arrival time.Time
	m, err := f.Marker(key, run.MarkerFirstArrival)
	if err != nil {
		return x, err
	}
	if m != nil {
		arrival = m.At
	}
	x.Deadlines = deadlines(p, per, lp.Row.FirstLoadedAt, arrival, now)
	ledger, err := f.Ledger(key)
	if err != nil {
		return x, err
	}
	x.Budgets = budgets(p, ledger)
	return x, nil
}

// explainTrigger evaluates the trigger condition against the newest
// trigger sensor of the period.
func explainTrigger(f *Facts, rules rule.Options, p *pipeline.Pipeline, per schedule.Period, now time.Time) (RuleCheck, error) {
	recs, err := f.TriggerRecords(p)
	if err != nil {
		return RuleCheck{}, err
	}
	i, ok := run.PeriodTriggerSensor(p, per, recs)
	if !ok {
		cond := p.Schedule.Trigger.Rule
		return RuleCheck{Key: cond.Key, Check: string(cond.Op), Field: cond.Field, Reason: "no trigger sensor for this period"}, nil
	}
	m := rule.SensorMap{recs[i].Key: recs[i]}
	return ruleCheck(p, run.TriggerCheck(p, recs[i], now, rules), m, now), nil
}

func ruleCheck(p *pipeline.Pipeline, r rule.Result, sensors rule.SensorMap, now time.Time) RuleCheck {
	rc := RuleCheck{Key: r.Rule.Key, Check: string(r.Rule.Op), Field: r.Rule.Field, Passed: r.Passed, Reason: r.Reason, FieldPresent: r.FieldPresent}
	if !r.Rule.Value.IsNull() {
		v := r.Rule.Value
		rc.Value = &v
	}
	if r.Rule.Op == rule.Op(pipeline.CheckUpstream) {
		rc.Upstream = r.Rule.Key
		return rc
	}
	if r.SensorPresent {
		if r.FieldPresent {
			v := r.Observed
			rc.Observed = &v
		}
		if rec, ok := sensors[r.Rule.Key]; ok {
			rc.SensorKey = rec.Key
			at := rec.ReceivedAt
			rc.ReceivedAt = &at
			rc.SensorAge = now.Sub(at).Round(time.Second).String()
			if ref, ok := lineage.EventOf(p, rec.Key, rec.Data); ok {
				rc.Lineage = &ref
			}
		}
	}
	return rc
}

func summarize(r run.Run) *RunSummary {
	s := &RunSummary{State: r.State, Outcome: r.Outcome, Cause: r.Cause, Generation: r.Generation, Attempt: r.Attempt, StateSince: r.StateSince, JobRunID: r.JobRunID, LastFailure: r.LastFailure}
	eval, poll := r.OpenWindows()
	if !eval.IsZero() {
		s.EvalDeadline = &eval
	}
	if !poll.IsZero() {
		s.PollDeadline = &poll
	}
	return s
}

// deadlines are a period's instants as the decisions resolve them: its
// SLAs as SLA timers are armed from them (sla.Tracks, forward-only by
// sla.BeforeLoad), the trigger deadline as the watchdog's
// trigger-deadlines check resolves it, and the next cron tick as the
// config's cron timer is set (run.ConfigTimers). arrival is the first
// trigger sensor's (zero: none yet).
func deadlines(p *pipeline.Pipeline, per schedule.Period, loadedAt, arrival, now time.Time) Deadlines {
	ptr := func(t time.Time) *time.Time { return &t }
	var d Deadlines
	if p.SLA != nil {
		d.SLATimezone = p.SLA.Location.String()
	}
	tracks, _ := sla.Tracks(p, per, arrival) // an absolute deadline that does not resolve is shown as none
	for _, t := range tracks {
		if t.Times.Relative {
			d.RelativeSLABreach = ptr(t.Times.Breach)
			continue
		}
		d.SLABreach = ptr(t.Times.Breach)
		if !t.Times.Warning.IsZero() {
			d.SLAWarning = ptr(t.Times.Warning)
		}
		d.SLAWarningBeforeLoad, d.SLABreachBeforeLoad = sla.BeforeLoad(t.Times, loadedAt)
		if d.SLAWarningBeforeLoad || d.SLABreachBeforeLoad {
			d.LoadedAt = ptr(loadedAt)
		}
	}
	if !arrival.IsZero() {
		d.FirstTriggerSensor = ptr(arrival)
	}
	if t := p.Schedule.Trigger; t != nil && !t.Deadline.IsZero() {
		if dl, err := t.Deadline.Resolve(per, p.Schedule.Location); err == nil {
			d.TriggerDeadline = ptr(dl)
		}
	}
	if cronAt, _ := run.ConfigTimers(p, now); !cronAt.IsZero() {
		d.NextCronTick = ptr(cronAt)
	}
	return d
}

// budgets are run.Budgets of the period's ledger: the counts and bounds
// the decisions judge on.
func budgets(p *pipeline.Pipeline, ledger []store.LedgerEntry) []BudgetUsed {
	bs := run.Budgets(p, LedgerReasons(ledger))
	out := make([]BudgetUsed, len(bs))
	for i, b := range bs {
		out[i] = BudgetUsed(b)
	}
	return out
}
