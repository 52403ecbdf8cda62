// Package needs names, for each input the engine decides — a sensor
// write, a run's step, a timer — every stored fact its decision may read,
// before anything is read: the engine loads them in one batch
// (store.ReadFacts) and decides on them alone (docs/architecture.md, "The
// way of a sensor write"). It owns the mapping from an input, the config
// and the facts an earlier round read to the keys of the records to read.
//
// It never reads a store or the clock, and decides nothing about a run:
// naming a fact the decision turns out not to read costs a key in the
// batch; naming too little is a bug the engine counts (a late read) and
// its tests fail on.
package needs

import (
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/sla"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// The needs follow the config: the rule keys name sensors, the upstream
// rules name other pipelines' runs. The config comes from the parse
// cache before the pipeline's row is read; when the row read says the
// cache held another version, the engine asks again with the config
// read and loads what is missing (a second round).

// SensorRef names a pipeline's sensor.
type SensorRef struct{ PipelineID, Key string }

// RunRange names a pipeline's runs of a range of periods (store.RunList:
// bounds inclusive, compared as text; To empty: no end): an upstream's
// hours, the runs of a day from its date on.
type RunRange struct{ PipelineID, ScheduleID, From, To string }

// ChangedSince names the circuit breaker's question: whether any sensor
// of a pipeline received new content after Since (a succeeded run's end,
// as read).
type ChangedSince struct {
	PipelineID string
	Since      time.Time
}

// SensorPrefix names a pipeline's sensors whose key starts with Prefix,
// of every period (store.SensorListPrefix): the trigger sensors an
// operator's action reads for periods it cannot name.
type SensorPrefix struct{ PipelineID, Prefix string }

// Set names the stored facts a decision may read, by key. Markers are
// named by period: every marker of the period is read at once. The range
// kinds (RunRanges, Changed, ActiveRuns, Prefixes) are read in the same
// batch, each as its single list read.
type Set struct {
	Pipelines []string
	Sensors   []SensorRef // stored sensor states
	Inboxes   []SensorRef // inbox items (a store others write sensors into)
	Runs      []run.Key
	Timers    []string // timer keys
	MarkersOf []run.Key
	Baselines []run.Key
	Ledgers   []run.Key
	RunRanges []RunRange
	Changed   []ChangedSince
	// ActiveRuns are pipelines whose runs not ended are read
	// (store.RunList ActiveOnly).
	ActiveRuns []string
	Prefixes   []SensorPrefix
	Backfills  []string // pipelines whose backfills are read (store.BackfillList)
	Silences   []string // silences by id
	// AllPipelines reads every pipeline row (store.PipelineList): the
	// running set a config load checks its upstream graph against.
	AllPipelines bool
	// Events are pages of the event log (store.EventList): what a
	// silence's end judges.
	Events []EventRange
}

// EventRange names a page of the event log (store.EventList): the events
// of Types (their names, comma-separated; "" every type) at or after
// Since, of PipelineID ("" every pipeline's) and Period ("" every
// period's), past the cursor After (its text; "" the log's start), at
// most Limit (0: no bound).
type EventRange struct {
	PipelineID string
	Period     string
	Types      string
	Since      time.Time
	After      string
	Limit      int
}

// Configs answers a pipeline's config as the caller knows it (nil: not
// known, or not running).
type Configs func(id string) *pipeline.Pipeline

// Add adds other's keys to n, each once.
func (n *Set) Add(o Set) {
	n.Pipelines = addAll(n.Pipelines, o.Pipelines...)
	n.Sensors = addAll(n.Sensors, o.Sensors...)
	n.Inboxes = addAll(n.Inboxes, o.Inboxes...)
	n.Runs = addAll(n.Runs, o.Runs...)
	n.Timers = addAll(n.Timers, o.Timers...)
	n.MarkersOf = addAll(n.MarkersOf, o.MarkersOf...)
	n.Baselines = addAll(n.Baselines, o.Baselines...)
	n.Ledgers = addAll(n.Ledgers, o.Ledgers...)
	n.RunRanges = addAll(n.RunRanges, o.RunRanges...)
	n.Changed = addAll(n.Changed, o.Changed...)
	n.ActiveRuns = addAll(n.ActiveRuns, o.ActiveRuns...)
	n.Prefixes = addAll(n.Prefixes, o.Prefixes...)
	n.Backfills = addAll(n.Backfills, o.Backfills...)
	n.Silences = addAll(n.Silences, o.Silences...)
	n.AllPipelines = n.AllPipelines || o.AllPipelines
	n.Events = addAll(n.Events, o.Events...)
}

// Minus is what n names that have does not.
func (n Set) Minus(have Set) Set {
	return Set{
		Pipelines: minus(n.Pipelines, have.Pipelines),
		Sensors:   minus(n.Sensors, have.Sensors),
		Inboxes:   minus(n.Inboxes, have.Inboxes),
		Runs:      minus(n.Runs, have.Runs),
		Timers:    minus(n.Timers, have.Timers),
		MarkersOf: minus(n.MarkersOf, have.MarkersOf),
		Baselines: minus(n.Baselines, have.Baselines),
		Ledgers:   minus(n.Ledgers, have.Ledgers),
		RunRanges: minus(n.RunRanges, have.RunRanges),
		Changed:   minus(n.Changed, have.Changed),

		ActiveRuns: minus(n.ActiveRuns, have.ActiveRuns),
		Prefixes:   minus(n.Prefixes, have.Prefixes),
		Backfills:  minus(n.Backfills, have.Backfills),
		Silences:   minus(n.Silences, have.Silences),

		AllPipelines: n.AllPipelines && !have.AllPipelines,
		Events:       minus(n.Events, have.Events),
	}
}

// Empty reports whether n names nothing.
func (n Set) Empty() bool {
	return len(n.Pipelines)+len(n.Sensors)+len(n.Inboxes)+len(n.Runs)+len(n.Timers)+
		len(n.MarkersOf)+len(n.Baselines)+len(n.Ledgers)+len(n.RunRanges)+len(n.Changed)+
		len(n.ActiveRuns)+len(n.Prefixes)+len(n.Backfills)+len(n.Silences)+len(n.Events) == 0 && !n.AllPipelines
}

// TriggerSensors names a pipeline's trigger sensors of every period (the
// keys starting with its trigger key; run.MatchesTrigger decides which
// match): none for a pipeline without a trigger.
func TriggerSensors(p *pipeline.Pipeline) Set {
	if p.Schedule.Trigger == nil || p.Schedule.Trigger.Rule.Key == "" {
		return Set{}
	}
	return Set{Prefixes: []SensorPrefix{{PipelineID: p.ID, Prefix: p.Schedule.Trigger.Rule.Key}}}
}

func addAll[T comparable](s []T, vs ...T) []T {
	for _, v := range vs {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}

func minus[T comparable](s, have []T) []T {
	var out []T
	for _, v := range s {
		if !slices.Contains(have, v) {
			out = append(out, v)
		}
	}
	return out
}

// RuleSensors names the sensors rules read for a period: each rule key
// and its per-period forms (schedule.PeriodKeys).
func RuleSensors(pipelineID string, keys []string, per schedule.Period) []SensorRef {
	var out []SensorRef
	for _, k := range keys {
		for _, pk := range schedule.PeriodKeys(k, per) {
			out = addAll(out, SensorRef{PipelineID: pipelineID, Key: pk})
		}
	}
	return out
}

func ruleKeys(rs []rule.Rule) []string {
	keys := make([]string, 0, len(rs))
	for _, r := range rs {
		keys = append(keys, r.Key)
	}
	return keys
}

// Pipeline names a pipeline's row (a decision about it reads its
// config and pause state).
func Pipeline(id string) Set { return Set{Pipelines: []string{id}} }

// Resume names what resuming pipeline id reads: its row, its backfill
// timer (a backfill the pause held is woken), its active runs and its
// trigger sensors of every period; and, those read and the plan made
// (pause.PlanResume; nil before, or when the row says it is not paused),
// each re-armed run's facts (Call, active: the runs the plan indexes),
// the period of the cron tick the pause skipped (Start) and each period
// its trigger data came for, as trigger data's (Start; a succeeded
// period's rerun with its circuit breaker: the stored sensor's change
// may not be new since the run's end).
func Resume(p *pipeline.Pipeline, ups Configs, runs ReadRuns, id string, active []run.Run, plan *pause.ResumePlan) Set {
	n := Set{Pipelines: []string{id}, Timers: []string{run.PipelineTimer(run.TimerBackfill, id).String()}, ActiveRuns: []string{id}}
	if p == nil {
		return n
	}
	n.Add(TriggerSensors(p))
	if plan == nil {
		return n
	}
	for _, i := range plan.Rearm {
		n.Add(Call(active[i].Key))
	}
	start := func(per schedule.Period, trigger bool) {
		k := run.Key{PipelineID: id, ScheduleID: p.ScheduleID(), Period: per.String()}
		n.Add(Start(p, k, per, ups, trigger))
		if !trigger {
			return
		}
		for _, x := range []run.Key{k, run.OtherSchedule(k)} {
			if r, read := runs(x); read && r != nil && r.State == run.Completed {
				n.Add(Rerun(x))
				n.Add(FreshData(runs, x))
			}
		}
	}
	if plan.CronPeriod != nil {
		start(*plan.CronPeriod, false)
	}
	for _, d := range plan.Data {
		start(d.Period, true)
	}
	return n
}

// Finding names what committing a watchdog finding reads: the
// pipeline's row; the period's markers when a marker dedups the finding;
// and, p known, what its action decides on — the run a timeout fails
// (Call, and the ledger its failure counts) or a close finds absent, the
// period a recovery starts (Start), the SLA facts a repair arms from.
func Finding(p *pipeline.Pipeline, ups Configs, fd watchdog.Finding) Set {
	n := Pipeline(fd.Key.PipelineID)
	if fd.Marker != "" {
		n.MarkersOf = []run.Key{fd.Key}
	}
	if p == nil {
		return n
	}
	per, perErr := schedule.ParsePeriod(fd.Key.Period)
	switch fd.Action {
	case watchdog.ActionFailRun:
		n.Add(Call(fd.Key))
		n.Add(Set{Ledgers: []run.Key{fd.Key}})
	case watchdog.ActionClosePeriod:
		n.Add(Set{Runs: []run.Key{fd.Key}})
	case watchdog.ActionStartRun:
		if perErr == nil {
			n.Add(Start(p, fd.Key, per, ups, false))
		}
	case watchdog.ActionArmSLA:
		if perErr == nil {
			n.Add(slaNeeds(p, fd.Key, per))
		}
	}
	return n
}

// WatchdogPass names what recording a watchdog pass reads: the markers
// kept under no pipeline (the last pass, the degraded state raised).
func WatchdogPass() Set { return Set{MarkersOf: []run.Key{{}}} }

// Interrupted names what finding a run's trigger call interrupted at an
// engine's start reads (run.FoundInterrupted): the run's facts (Call: the
// row, the run, its step timer) and the period's markers (the call's
// recovery record).
func Interrupted(key run.Key) Set {
	n := Call(key)
	n.MarkersOf = []run.Key{key}
	return n
}

// BackfillRequest names what a backfill request of pipeline id reads:
// its row and its backfills (one running refuses it), with p known its
// trigger sensors (the kinds of period it runs: backfill.Range), and once
// the range is known (start: its first period, "" before) the
// pipeline's runs from there on, of every schedule (backfill.RunsOf).
func BackfillRequest(p *pipeline.Pipeline, id, start string) Set {
	n := Set{Pipelines: []string{id}, Backfills: []string{id}}
	if p == nil {
		return n
	}
	n.Add(TriggerSensors(p))
	if start != "" {
		n.RunRanges = []RunRange{{PipelineID: id, From: start}}
	}
	return n
}

// BackfillCancel names what cancelling a backfill of pipeline id reads:
// its row and its backfills.
func BackfillCancel(id string) Set { return Set{Pipelines: []string{id}, Backfills: []string{id}} }

// BackfillStep names what a backfill timer's step reads besides the
// timer: the row and the pipeline's backfills; with the running one read,
// each active period's run under either schedule id (active: their
// periods); and with the period backfill.Fire starts known (start; nil
// before), what starting it or rerunning it reads (Start, Rerun: which
// of them its run decides).
func BackfillStep(p *pipeline.Pipeline, ups Configs, id string, active []string, start *schedule.Period) Set {
	n := Set{Pipelines: []string{id}, Backfills: []string{id}}
	if p == nil {
		return n
	}
	key := func(period string) run.Key {
		return run.Key{PipelineID: id, ScheduleID: p.ScheduleID(), Period: period}
	}
	for _, period := range active {
		n.Add(Set{Runs: []run.Key{key(period), run.OtherSchedule(key(period))}})
	}
	if start != nil {
		k := key(start.String())
		n.Add(Start(p, k, *start, ups, false))
		n.Add(Rerun(k))
		n.Add(Rerun(run.OtherSchedule(k)))
	}
	return n
}

// Silence names what expiring a silence, or its end timer, reads: the
// silence as stored.
func Silence(id string) Set { return Set{Silences: []string{id}} }

// ReadSilences answers the silence of id an earlier round read: read
// false when it did not; nil when none is stored.
type ReadSilences func(id string) (s *silence.Silence, read bool)

// EndEventsPage is how many events a page of an end's events holds.
const EndEventsPage = 500

// EndEvents names the first page of the stored events the end of s
// judges (silence.EndQueryOf: the condition-opening types it covers,
// since its start); ok false when it judges none. Each page's cursor
// names the next.
func EndEvents(s silence.Silence) (EventRange, bool) {
	q := silence.EndQueryOf(s, event.Types(), deps.OpensCondition)
	if q.None() {
		return EventRange{}, false
	}
	types := make([]string, len(q.Types))
	for i, t := range q.Types {
		types[i] = string(t)
	}
	return EventRange{PipelineID: q.PipelineID, Types: strings.Join(types, ","), Since: q.Since, Limit: EndEventsPage}, true
}

// SilenceEnd names what a silence's end timer (timerKey) reads: the
// silence and, once it is read and over at now, the first page of the
// events its end judges (EndEvents).
func SilenceEnd(timerKey string, silences ReadSilences, now time.Time) Set {
	k, err := run.ParseTimerKey(timerKey)
	if err != nil || k.Family != run.TimerSilenceEnd {
		return Set{}
	}
	n := Silence(k.Name)
	if s, read := silences(k.Name); read && s != nil && s.Over(now) {
		if r, ok := EndEvents(*s); ok {
			n.Events = []EventRange{r}
		}
	}
	return n
}

// MaintenanceEnd names what a window's end timer (timerKey, due at due)
// reads besides the timer: the first page of the events the occurrence
// that ended judges (silence.EndedOccurrence among the windows
// configured; EndEvents).
func MaintenanceEnd(timerKey string, windows []silence.Window, due, now time.Time) Set {
	k, err := run.ParseTimerKey(timerKey)
	if err != nil || k.Family != run.TimerMaintenanceEnd {
		return Set{}
	}
	occ, ok := silence.EndedOccurrence(windows, k.Name, due, now)
	if !ok {
		return Set{}
	}
	r, ok := EndEvents(occ.Silence)
	if !ok {
		return Set{}
	}
	return Set{Events: []EventRange{r}}
}

// AfterSilence names what judging a silenced condition of the period
// key at its silence's end reads: the period's condition facts (its row,
// its run under either schedule id, its markers: the alert's dedup
// record among them).
func AfterSilence(key run.Key) Set { return condition(key) }

// MaintenanceEnds names what arming the maintenance windows' end timers
// reads: each window's end timer as stored (timerKeys).
func MaintenanceEnds(timerKeys []string) Set { return Set{Timers: timerKeys} }

// Pause names what pausing pipeline id reads: its row (the pause state,
// the version its write is conditioned on). The resume timer it sets or
// drops is written unconditioned.
func Pause(id string) Set { return Pipeline(id) }

// DeleteSensor names what an operator's deletion of a pipeline's sensor
// reads: the pipeline's row (it must run; the commit is conditioned on
// it). The sensor is deleted whatever it holds.
func DeleteSensor(id string) Set { return Pipeline(id) }

// HandOff names what handing an orphaned step to a new waiter reads: the
// step timer as stored now (run.HandsOff decides on it).
func HandOff(timerKey string) Set { return Set{Timers: []string{timerKey}} }

// Explain names what explaining period per of p reads: the row, the
// validation's facts (Evaluation), its trigger sensors of every period,
// and the period's run, markers (the first arrival, a call's recovery
// record), the run's step timer (a call in flight's lease), ledger
// (the budgets used) and last job's output (JobOutputEvents).
func Explain(p *pipeline.Pipeline, ups Configs, per schedule.Period) Set {
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	n := Pipeline(p.ID)
	n.Add(Evaluation(p, per, ups))
	n.Add(TriggerSensors(p))
	n.Add(Set{Runs: []run.Key{key}, MarkersOf: []run.Key{key}, Timers: []string{run.PeriodTimer(run.TimerStep, key).String()}, Ledgers: []run.Key{key},
		Events: []EventRange{JobOutputEvents(key)}})
	return n
}

// JobOutputEvents is the page of the event log the output of a period's
// last finished job is found in (run.LastJobOutput): the period's
// JOB_COMPLETED and JOB_FAILED events, all of them.
func JobOutputEvents(key run.Key) EventRange {
	return EventRange{PipelineID: key.PipelineID, Period: key.Period, Types: string(event.JobCompleted) + "," + string(event.JobFailed)}
}

// ReadRuns answers the runs an earlier round read: read false when key
// was not read (yet); r nil when it was and there is no run.
type ReadRuns func(key run.Key) (r *run.Run, read bool)

// NoRunsRead is ReadRuns before any round.
func NoRunsRead(run.Key) (*run.Run, bool) { return nil, false }

// ReadMarkers answers the kinds of a period's markers an earlier round
// read: read false when they were not read (yet).
type ReadMarkers func(key run.Key) (kinds []string, read bool)

// NoMarkersRead is ReadMarkers before any round.
func NoMarkersRead(run.Key) ([]string, bool) { return nil, false }

// Evaluation names what evaluating a period's validation rules
// reads: the rules' sensors, and each upstream's row and (its config
// known) the runs its rule judges: one period's run, or a rule mapping
// several periods (the hours of a day) their range (UpstreamRuns).
func Evaluation(p *pipeline.Pipeline, per schedule.Period, ups Configs) Set {
	n := Set{Sensors: RuleSensors(p.ID, ruleKeys(p.Validation.Rules), per)}
	for _, u := range p.Upstreams {
		n.Pipelines = addAll(n.Pipelines, u.Pipeline)
		up := ups(u.Pipeline)
		if up == nil {
			continue
		}
		n.Add(UpstreamRuns(up, deps.UpstreamPeriods(p, up, u, per)))
	}
	return n
}

// UpstreamRuns names an upstream's runs of the periods its rule maps:
// none, one period's run, or several periods (the hours of a day) as one
// range from the first to the last.
func UpstreamRuns(up *pipeline.Pipeline, pers []schedule.Period) Set {
	switch len(pers) {
	case 0:
		return Set{}
	case 1:
		return Set{Runs: []run.Key{{PipelineID: up.ID, ScheduleID: up.ScheduleID(), Period: pers[0].String()}}}
	}
	return Set{RunRanges: []RunRange{{PipelineID: up.ID, ScheduleID: up.ScheduleID(), From: pers[0].String(), To: pers[len(pers)-1].String()}}}
}

// DayRuns names the runs an SLA decision about a daily period may stand
// on when the period has no run of its own (sla.DayRun): its schedule's
// runs from the date on. None for an hourly period.
func DayRuns(key run.Key, per schedule.Period) Set {
	if per.Hourly {
		return Set{}
	}
	return Set{RunRanges: []RunRange{{PipelineID: key.PipelineID, ScheduleID: key.ScheduleID, From: per.Date.String()}}}
}

// writeFreshData is FreshData for a rerun a sensor write at now asks
// for: the write's own content, changed at now, is new data after a run
// that ended before now (run.FreshSince), and the store is read only for
// a run that ended at now or later.
func writeFreshData(runs ReadRuns, key run.Key, now time.Time) Set {
	if r, read := runs(key); read && r != nil && run.FreshSince(*r, now) {
		return Set{}
	}
	return FreshData(runs, key)
}

// FreshData names the circuit breaker's read for a rerun of key whose
// run, read by an earlier round, succeeded (run.RerunInput.NeedsFreshData):
// whether a sensor of the pipeline changed after the run ended.
func FreshData(runs ReadRuns, key run.Key) Set {
	if r, read := runs(key); read && r != nil && r.State == run.Completed {
		return Set{Changed: []ChangedSince{{PipelineID: key.PipelineID, Since: r.EndedAt}}}
	}
	return Set{}
}

// Call names what any decision about a run reads: the pipeline's
// row, the run and its step timer (a step timer's write is stamped from
// the stored one), and the pipeline's backfill timer (a backfilled run
// that ends wakes it, conditioned on the due time read:
// backfill.WakeAt). A step that only calls the job (the poll's status
// call) reads nothing more.
func Call(key run.Key) Set {
	return Set{Pipelines: []string{key.PipelineID}, Runs: []run.Key{key}, Timers: []string{
		run.PeriodTimer(run.TimerStep, key).String(), run.PipelineTimer(run.TimerBackfill, key.PipelineID).String()}}
}

// Success names what a run's success reads: the post-run rules'
// sensors (the baseline), the period's markers (the SLA verdict) and the
// pipeline's downstream index (its markers under the pipeline's id
// alone).
func Success(p *pipeline.Pipeline, key run.Key, per schedule.Period) Set {
	n := Set{MarkersOf: []run.Key{key, {PipelineID: key.PipelineID}}}
	n.Sensors = RuleSensors(p.ID, run.PostRunKeys(p), per)
	return n
}

// Report names what deciding on a job's report reads besides
// Call: the ledger for a failure (its budget), a success's facts.
func Report(p *pipeline.Pipeline, key run.Key, per schedule.Period, report run.JobReport) Set {
	switch {
	case report.Failed():
		return Set{Ledgers: []run.Key{key}}
	case report.Known && report.Status == run.JobStatusSucceeded:
		return Success(p, key, per)
	}
	return Set{}
}

// Rerun names what a rerun of the period key reads (late data,
// drift): the run, its ledger (budgets), its step timer and markers (the
// reopened run's SLA timers).
func Rerun(key run.Key) Set {
	n := Call(key)
	n.Ledgers = []run.Key{key}
	n.MarkersOf = []run.Key{key}
	return n
}

// Load names what a config load reads: the pipeline's row, every
// pipeline row when p has upstream rules (the cycle check), and, once
// the row read gives the first-load time (firstLoaded; known false
// before), each period whose SLA timers the load arms (sla.TimersToArm):
// its run and, when an SLA decision reads them, its markers.
func Load(p *pipeline.Pipeline, firstLoaded time.Time, known bool, now time.Time) Set {
	n := Pipeline(p.ID)
	// A config with upstream rules is checked against the running
	// pipelines' graph (pipeline.CycleThrough): one with none cannot
	// close a cycle and reads none.
	n.AllPipelines = len(p.Upstreams) > 0
	if !known {
		return n
	}
	for _, a := range sla.TimersToArm(p, firstLoaded, now) {
		n.Add(slaNeeds(p, run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: a.Period.String()}, a.Period))
	}
	return n
}

// JobLog names what a job's own report of its outcome (a job-log record)
// reads: the row, and with p known the run's facts (Call), the period's
// markers (the record's dedup marker) and what the report decides on
// (Report).
func JobLog(p *pipeline.Pipeline, id string, per schedule.Period, report run.JobReport) Set {
	n := Pipeline(id)
	if p != nil {
		k := run.Key{PipelineID: id, ScheduleID: p.ScheduleID(), Period: per.String()}
		n.Add(Call(k))
		n.Add(Set{MarkersOf: []run.Key{k}})
		n.Add(Report(p, k, per, report))
	}
	return n
}

// RerunRequest names what an operator's rerun of period per of
// pipeline id reads: the row, and with p known its trigger sensors (a
// trigger-only pipeline's say which kinds of period it runs:
// run.CheckRerunPeriod), the period's run, ledger, markers (the request's
// dedup record, the reopened run's SLA facts) and step timer (Rerun), and
// once the run is read its circuit breaker's question (FreshData).
func RerunRequest(p *pipeline.Pipeline, runs ReadRuns, id string, per schedule.Period) Set {
	n := Pipeline(id)
	if p != nil {
		k := run.Key{PipelineID: id, ScheduleID: p.ScheduleID(), Period: per.String()}
		n.Add(TriggerSensors(p))
		n.Add(Rerun(k))
		n.Add(FreshData(runs, k))
	}
	return n
}

// Start names what opening the period key reads (a trigger write, a
// cron tick, an upstream's success): its run under either schedule id
// (and the other's step timer: a run found there is evaluated), the
// period's markers when a decision reads them (first arrival, exclusion,
// dry-run records, SLA facts), the first evaluation's facts, and for a
// dry-run pipeline the post-run sensors its would-be trigger captures.
func Start(p *pipeline.Pipeline, key run.Key, per schedule.Period, ups Configs, trigger bool) Set {
	other := run.OtherSchedule(key)
	n := Call(key)
	n.Add(Set{Runs: []run.Key{other}, Timers: []string{run.PeriodTimer(run.TimerStep, other).String()}})
	if trigger || run.Excluded(p, per) || p.DryRun || sla.MarksNeeded(p, per) {
		n.MarkersOf = []run.Key{key}
	}
	n.Add(Evaluation(p, per, ups))
	if p.DryRun {
		n.Sensors = addAll(n.Sensors, RuleSensors(p.ID, run.PostRunKeys(p), per)...)
	}
	return n
}

// rerunsOf adds Rerun for each of keys whose run was read and
// succeeded: new data for such a period may rerun it.
func rerunsOf(n *Set, runs ReadRuns, now time.Time, keys ...run.Key) {
	for _, k := range keys {
		if r, read := runs(k); read && r != nil && r.State == run.Completed {
			n.Add(Rerun(r.Key))
			n.Add(writeFreshData(runs, r.Key, now))
		}
	}
}

// SensorWrite names the facts a sensor write of key may read: the
// pipeline's row, the sensor's stored state (and, data nil, its inbox
// item: the content is read with the facts), and with p known what its
// route decides on (run.RouteSensor) for the period the write belongs to —
// for data not known yet, the period of a write at now, a guess the
// engine checks once the content is read. Trigger data for a period whose
// run succeeded (runs: read by an earlier round) may rerun it: its Rerun
// too; post-run data names a drift rerun's at once.
func SensorWrite(p *pipeline.Pipeline, ups Configs, runs ReadRuns, pipelineID, key string, data *sensor.Object, now time.Time) Set {
	ref := SensorRef{PipelineID: pipelineID, Key: key}
	n := Set{Pipelines: []string{pipelineID}, Sensors: []SensorRef{ref}}
	if data == nil {
		n.Inboxes = []SensorRef{ref}
	}
	if p == nil {
		return n
	}
	var d sensor.Object
	if data != nil {
		d = *data
	}
	per, err := run.SensorWritePeriod(p, key, d, now)
	if err != nil {
		return n
	}
	k := run.Key{PipelineID: pipelineID, ScheduleID: p.ScheduleID(), Period: per.String()}
	switch route, _ := run.RouteSensor(p, key); route {
	case run.SensorForTrigger:
		n.Add(Start(p, k, per, ups, true))
		rerunsOf(&n, runs, now, k, run.OtherSchedule(k))
	case run.SensorForPostRun:
		n.Add(Set{Runs: []run.Key{k}, Baselines: []run.Key{k}, Sensors: RuleSensors(p.ID, run.PostRunKeys(p), per)})
		if p.DryRun {
			n.MarkersOf = addAll(n.MarkersOf, k)
		} else {
			// Post-run data comes after the success it checks: a drift
			// rerun's facts are named at once, not in a round of their
			// own; its circuit breaker's once the run is read.
			n.Add(Rerun(k))
			n.Add(writeFreshData(runs, k, now))
		}
	default:
		n.Add(Call(k))
		n.Add(Evaluation(p, per, ups))
	}
	return n
}

// ConfigRefusal names what a config file's refusal (or its acceptance,
// which clears the refusal's marker) reads: the row of the pipeline the
// document names (the version still running) and the markers of the
// pipeline (the file's config-invalid marker among them).
func ConfigRefusal(pipelineID string) Set {
	return Set{Pipelines: []string{pipelineID}, MarkersOf: []run.Key{{PipelineID: pipelineID}}}
}

// Reject names what reporting a rejected item reads: the markers of its
// day (key: decide.RejectMarker's), where its report is remembered.
func Reject(key run.Key) Set { return Set{MarkersOf: []run.Key{key}} }

// Step names the facts a run's step of kind step may read: the
// run's (Call), and with p known what the step decides on — an
// evaluation's rules; for a trigger step whose call was interrupted
// (the run read says so), the period's markers (the call's recovery
// record) and what settling the call reads (a failure's ledger, a
// success's facts). A poll's answer is Poll.
func Step(step run.Step, p *pipeline.Pipeline, ups Configs, runs ReadRuns, key run.Key) Set {
	n := Call(key)
	if p == nil {
		return n
	}
	per, err := schedule.ParsePeriod(key.Period)
	if err != nil {
		return n
	}
	switch step {
	case run.StepEvaluate:
		n.Add(Evaluation(p, per, ups))
	case run.StepTrigger:
		if r, read := runs(key); read && r != nil && r.TriggerInFlight {
			n.Add(Set{MarkersOf: []run.Key{key}, Ledgers: []run.Key{key}})
			n.Add(Success(p, key, per))
		}
	}
	return n
}

// Poll names what recording a poll's answer reads: the run's facts
// and what its report decides on (Report).
func Poll(p *pipeline.Pipeline, key run.Key, report run.JobReport) Set {
	n := Call(key)
	if p == nil {
		return n
	}
	if per, err := schedule.ParsePeriod(key.Period); err == nil {
		n.Add(Report(p, key, per, report))
	}
	return n
}

// Answer names what recording a trigger call's answer reads: the
// run's facts, the upstreams' rows (a run its upstreams opened names its
// parent) and, for a synchronous job's verdict (report known), what it
// decides on; a failed call's retry reads nothing more. An answer that
// comes after its run moved on (the run read awaits no call c) is
// reported once: the period's markers say whether it was.
func Answer(p *pipeline.Pipeline, runs ReadRuns, key run.Key, c run.CallID, report *run.JobReport) Set {
	n := Call(key)
	if r, read := runs(key); read && r != nil && !r.Awaits(c) {
		n.MarkersOf = []run.Key{key}
	}
	if p == nil {
		return n
	}
	n.Pipelines = addAll(n.Pipelines, p.UpstreamIDs()...)
	if report != nil {
		n.Add(Poll(p, key, *report))
	}
	return n
}

// Timer names the facts a timer that is not a run's step may read:
// the timer itself, the pipeline's row, and with p known those of the
// period it concerns — the one a cron tick starts (run.CronTick) or an
// upstream timer re-evaluates or opens (Start), the run and SLA
// facts of a period a period timer arms (run.PeriodTick) or an SLA timer
// names. A downstreams timer (key: the upstream's period that succeeded)
// reads the upstream's downstream index and the period's markers (what
// it blocked), then the rows of the downstreams the index names (markers:
// read by an earlier round). A release timer (key: a root's period) reads
// the period's condition facts, then those of each downstream period its
// blocked markers name. due is the timer's due time.
func Timer(p *pipeline.Pipeline, ups Configs, markers ReadMarkers, timerKey string, family run.TimerFamily, key run.Key, due, now time.Time) Set {
	n := Set{Timers: []string{timerKey}, Pipelines: []string{key.PipelineID}}
	if family == run.TimerSilenceEnd {
		return n // the silence, and what its end judges: SilenceEnd
	}
	if family == run.TimerRelease {
		n.Add(condition(key))
		kinds, _ := markers(key)
		for _, down := range blockedDowns(kinds) {
			n.Add(condition(down))
		}
		return n
	}
	if p == nil {
		return n
	}
	if family == run.TimerDownstreams {
		index := run.Key{PipelineID: key.PipelineID}
		n.MarkersOf = []run.Key{index, key}
		kinds, _ := markers(index)
		n.Pipelines = addAll(n.Pipelines, DownstreamIDs(kinds)...)
		return n
	}
	per, err := schedule.ParsePeriod(key.Period)
	k := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	switch family {
	case run.TimerCron:
		if run.NeedsCronTimer(p) {
			per, _ = run.CronTick(p, due, now)
			k.Period = per.String()
			n.Add(Start(p, k, per, ups, false))
		}
	case run.TimerUpstream:
		if err == nil {
			n.Add(Start(p, k, per, ups, false))
		}
	case run.TimerPeriod:
		if run.NeedsPeriodTimer(p) {
			per, _ = run.PeriodTick(p, due)
			k.Period = per.String()
			n.Add(slaNeeds(p, k, per))
		}
	case run.TimerSLAWarning, run.TimerSLABreach, run.TimerRelSLAWarning, run.TimerRelSLABreach:
		if err == nil {
			n.Add(slaNeeds(p, key, per)) // its own key: armed under the schedule id of its day
			n.Add(DayRuns(key, per))
		}
	}
	return n
}

// condition names a period's alert-condition facts (what
// store.ConditionFactsOf reads): its pipeline's row, its run under either
// schedule id and its markers.
func condition(key run.Key) Set {
	return Set{Pipelines: []string{key.PipelineID}, Runs: []run.Key{key, run.OtherSchedule(key)}, MarkersOf: []run.Key{key}}
}

// blockedDowns are the downstream periods a root period's blocked
// markers name (run.BlockedMarker), from their kinds.
func blockedDowns(kinds []string) []run.Key {
	var out []run.Key
	for _, kind := range kinds {
		if k, err := run.ParseMarkerKind(kind); err == nil && k.Name == run.MarkerBlocked {
			out = addAll(out, k.Down)
		}
	}
	return out
}

// DownstreamIDs are the pipelines a pipeline's downstream index names,
// from its markers' kinds (run.DownstreamMarker), sorted.
func DownstreamIDs(kinds []string) []string {
	var ids []string
	for _, kind := range kinds {
		if k, err := run.ParseMarkerKind(kind); err == nil && k.Name == run.MarkerDownstream {
			ids = append(ids, k.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// slaNeeds names a period's run and, when an SLA decision reads them, its
// markers.
func slaNeeds(p *pipeline.Pipeline, key run.Key, per schedule.Period) Set {
	n := Set{Runs: []run.Key{key}}
	if sla.MarksNeeded(p, per) {
		n.MarkersOf = []run.Key{key}
	}
	return n
}
