package needs

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// needsPipeline is a trigger pipeline with a validation rule, an upstream
// rule on "up" and a post-run rule: every kind of need.
const needsPipeline = `
pipeline: {id: p1}
schedule:
  trigger: {key: ready, check: exists}
  evaluation: {window: 1h, interval: 5m}
validation:
  rules: [{key: landed, check: exists}, {check: upstream, pipeline: up}]
postRun:
  rules: [{key: audit, check: exists}]
job: {type: command, config: {command: /bin/true}}
`

// cronDoc is a daily cron pipeline's document.
func cronDoc(id string) string {
	return "pipeline: {id: " + id + "}\nschedule: {cron: '0 6 * * *'}\njob: {type: command, config: {command: /bin/true}}\n"
}

func TestNeeds(t *testing.T) {
	p := runtest.Pipeline(t, needsPipeline)
	up := runtest.Pipeline(t, cronDoc("up"))
	cron := runtest.Pipeline(t, cronDoc("c1"))
	known := func(id string) *pipeline.Pipeline {
		return map[string]*pipeline.Pipeline{"p1": p, "up": up, "c1": cron}[id]
	}
	unknown := func(string) *pipeline.Pipeline { return nil }
	now := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	k := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	other := run.OtherSchedule(k)
	upRun := run.Key{PipelineID: "up", ScheduleID: up.ScheduleID(), Period: "2026-03-10"}
	step := run.PeriodTimer(run.TimerStep, k).String()
	ref := func(key string) SensorRef { return SensorRef{PipelineID: "p1", Key: key} }
	data := sensor.Object{}
	dated := run.Detail("date", "2026-03-09")
	slaP := runtest.Pipeline(t, "pipeline: {id: s1}\nschedule: {cron: '0 6 * * *'}\nsla: {deadline: '23:00'}\njob: {type: command, config: {command: /bin/true}}\n")
	slaKey := run.Key{PipelineID: "s1", ScheduleID: slaP.ScheduleID(), Period: "2026-03-10"}
	downKey := run.Key{PipelineID: "down", ScheduleID: "cron", Period: "2026-03-10"}
	per10 := schedule.Daily(schedule.Date{Year: 2026, Month: 3, Day: 10})

	stepOther := run.PeriodTimer(run.TimerStep, other).String()
	ended := now.Add(-time.Hour)
	succeededAt := func(key run.Key, at time.Time) ReadRuns {
		return func(k run.Key) (*run.Run, bool) {
			if k == key {
				return &run.Run{Key: key, State: run.Completed, EndedAt: at}, true
			}
			return nil, true
		}
	}
	hourlyUp := runtest.Pipeline(t, "pipeline: {id: h}\nschedule: {cron: '5 * * * *'}\njob: {type: command, config: {command: /bin/true}}\n")
	hoursP := runtest.Pipeline(t, "pipeline: {id: d}\nschedule: {cron: '0 6 * * *'}\nvalidation:\n  rules: [{check: upstream, pipeline: h, hours: all}]\njob: {type: command, config: {command: /bin/true}}\n")
	hourly := func(id string) *pipeline.Pipeline {
		return map[string]*pipeline.Pipeline{"h": hourlyUp, "d": hoursP}[id]
	}
	old := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-08"}
	hourKey := run.Key{PipelineID: "s1", ScheduleID: slaP.ScheduleID(), Period: "2026-03-10T05"}
	completed := func(key run.Key) ReadRuns {
		return func(k run.Key) (*run.Run, bool) {
			if k == key {
				return &run.Run{Key: key, State: run.Completed}, true
			}
			return nil, true
		}
	}
	evaluating := func(k run.Key) (*run.Run, bool) { return &run.Run{Key: k, State: run.Evaluating}, true }
	inFlight := func(k run.Key) (*run.Run, bool) {
		return &run.Run{Key: k, State: run.Triggering, TriggerInFlight: true}, true
	}
	landed := []SensorRef{ref("landed"), ref("landed#2026-03-10"), ref("landed#20260310")}
	audit := []SensorRef{ref("audit"), ref("audit#2026-03-10"), ref("audit#20260310")}
	failed := run.JobReport{Known: true, Status: run.JobStatusFailed}
	succeeded := run.JobReport{Known: true, Status: run.JobStatusSucceeded}

	type want struct {
		has, hasNot Set
	}
	cases := []struct {
		name string
		got  Set
		want want
	}{
		{"sensor write, config not known: row and sensor only",
			SensorWrite(nil, unknown, NoRunsRead, "p1", "landed", &data, now),
			want{has: Set{Pipelines: []string{"p1"}, Sensors: []SensorRef{ref("landed")}}, hasNot: Set{Runs: []run.Key{k}, Inboxes: []SensorRef{ref("landed")}}}},
		{"sensor write from the inbox: the inbox item too",
			SensorWrite(nil, unknown, NoRunsRead, "p1", "landed", nil, now),
			want{has: Set{Inboxes: []SensorRef{ref("landed")}}}},
		{"rule data: the run, its step timer, the rules' sensors and upstream run; no queries",
			SensorWrite(p, known, NoRunsRead, "p1", "landed", &data, now),
			want{has: Set{Pipelines: []string{"p1", "up"}, Runs: []run.Key{k, upRun}, Timers: []string{step}, Sensors: landed},
				hasNot: Set{MarkersOf: []run.Key{k}, Ledgers: []run.Key{k}, Baselines: []run.Key{k}, Runs: []run.Key{other}, Sensors: audit}}},
		{"rule data, upstream's config not known: its row, not its run",
			SensorWrite(p, unknown, NoRunsRead, "p1", "landed", &data, now),
			want{has: Set{Pipelines: []string{"up"}}, hasNot: Set{Runs: []run.Key{upRun}}}},
		{"trigger data: both schedules' runs and step timers, the markers, the evaluation",
			SensorWrite(p, known, NoRunsRead, "p1", "ready", &data, now),
			want{has: Set{Runs: []run.Key{k, other, upRun}, Timers: []string{step, stepOther}, MarkersOf: []run.Key{k}, Sensors: landed},
				hasNot: Set{Ledgers: []run.Key{k}, Baselines: []run.Key{k}}}},
		{"trigger data for a succeeded period: a rerun's facts",
			SensorWrite(p, known, completed(other), "p1", "ready", &data, now),
			want{has: Set{Ledgers: []run.Key{other}, MarkersOf: []run.Key{other}}, hasNot: Set{Ledgers: []run.Key{k}}}},
		{"trigger data for an evaluating run: no rerun",
			SensorWrite(p, known, evaluating, "p1", "ready", &data, now),
			want{hasNot: Set{Ledgers: []run.Key{k}}}},
		{"post-run data: the run, baseline, post-run sensors and a drift rerun's facts",
			SensorWrite(p, known, NoRunsRead, "p1", "audit", &data, now),
			want{has: Set{Runs: []run.Key{k}, Baselines: []run.Key{k}, Sensors: audit, Ledgers: []run.Key{k}, MarkersOf: []run.Key{k}}, hasNot: Set{Sensors: landed}}},
		{"post-run data after success: a drift rerun's facts",
			SensorWrite(p, known, completed(k), "p1", "audit", &data, now),
			want{has: Set{Ledgers: []run.Key{k}, MarkersOf: []run.Key{k}, Timers: []string{step}}}},
		{"a write naming its period: that period's facts",
			SensorWrite(p, known, NoRunsRead, "p1", "ready", &dated, now),
			want{has: Set{Runs: []run.Key{{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-09"}}}, hasNot: Set{Runs: []run.Key{k}}}},
		{"evaluate step: the rules' sensors and upstream run, no ledger",
			Step(run.StepEvaluate, p, known, NoRunsRead, k),
			want{has: Set{Pipelines: []string{"p1", "up"}, Runs: []run.Key{k, upRun}, Timers: []string{step}, Sensors: landed},
				hasNot: Set{Ledgers: []run.Key{k}, Sensors: audit}}},
		{"trigger step: the run's facts only",
			Step(run.StepTrigger, p, known, NoRunsRead, k),
			want{has: Call(k), hasNot: Set{MarkersOf: []run.Key{k}, Sensors: landed}}},
		{"trigger step of an interrupted call: its record, and settling it",
			Step(run.StepTrigger, p, known, inFlight, k),
			want{has: Set{MarkersOf: []run.Key{k, {PipelineID: "p1"}}, Ledgers: []run.Key{k}, Sensors: audit}}},
		{"step, config not known: step timer, run, row",
			Step(run.StepEvaluate, nil, unknown, NoRunsRead, k),
			want{has: Call(k), hasNot: Set{Sensors: landed}}},
		{"poll still running: the run's facts only",
			Poll(p, k, run.JobReport{Known: true, Status: "running"}),
			want{has: Set{Pipelines: []string{"p1"}, Runs: []run.Key{k}, Timers: []string{step}}, hasNot: Set{MarkersOf: []run.Key{k}, Ledgers: []run.Key{k}}}},
		{"poll failed: the ledger",
			Poll(p, k, failed),
			want{has: Set{Ledgers: []run.Key{k}}, hasNot: Set{MarkersOf: []run.Key{k}}}},
		{"poll succeeded: baseline sensors, SLA markers, downstream index",
			Poll(p, k, succeeded),
			want{has: Set{MarkersOf: []run.Key{k, {PipelineID: "p1"}}, Sensors: audit}, hasNot: Set{Ledgers: []run.Key{k}}}},
		{"trigger answer: the upstreams' rows; a synchronous verdict's facts",
			Answer(p, NoRunsRead, k, run.CallID{}, &succeeded),
			want{has: Set{Pipelines: []string{"up"}, MarkersOf: []run.Key{k}}}},
		{"trigger answer, a job started: no ledger, no markers",
			Answer(p, NoRunsRead, k, run.CallID{}, nil),
			want{hasNot: Set{Ledgers: []run.Key{k}, MarkersOf: []run.Key{k}}}},
		{"a late trigger answer: the markers (reported once)",
			Answer(p, evaluating, k, run.CallID{}, nil),
			want{has: Set{MarkersOf: []run.Key{k}}}},
		{"a config load, row not read: the row",
			Load(slaP, time.Time{}, false, now),
			want{has: Set{Pipelines: []string{"s1"}}, hasNot: Set{Runs: []run.Key{slaKey}}}},
		{"a config load: the run and markers of each period it arms SLA timers for",
			Load(slaP, now.Add(-48*time.Hour), true, now),
			want{has: Set{Runs: []run.Key{slaKey}, MarkersOf: []run.Key{slaKey}}}},
		{"a config load of a pipeline without SLA: the row",
			Load(p, now.Add(-48*time.Hour), true, now),
			want{hasNot: Set{Runs: []run.Key{k}, MarkersOf: []run.Key{k}}}},
		{"a job's failure report: the run's facts, its markers and ledger",
			JobLog(p, "p1", per10, failed),
			want{has: Set{Runs: []run.Key{k}, Timers: []string{step}, MarkersOf: []run.Key{k}, Ledgers: []run.Key{k}}, hasNot: Set{Sensors: audit}}},
		{"a job's success report: the success's facts",
			JobLog(p, "p1", per10, succeeded),
			want{has: Set{MarkersOf: []run.Key{k, {PipelineID: "p1"}}, Sensors: audit}, hasNot: Set{Ledgers: []run.Key{k}}}},
		{"an operator's rerun: the period's run, ledger, markers and step timer",
			RerunRequest(p, NoRunsRead, "p1", per10),
			want{has: Set{Pipelines: []string{"p1"}, Runs: []run.Key{k}, Ledgers: []run.Key{k}, MarkersOf: []run.Key{k}, Timers: []string{step}}}},
		{"an operator's rerun, config not known: the row",
			RerunRequest(nil, NoRunsRead, "p1", per10),
			want{has: Set{Pipelines: []string{"p1"}}, hasNot: Set{Runs: []run.Key{k}}}},
		{"an operator's rerun of a succeeded period: the circuit breaker's question",
			RerunRequest(p, succeededAt(k, ended), "p1", per10),
			want{has: Set{Changed: []ChangedSince{{PipelineID: "p1", Since: ended}}}}},
		{"an operator's rerun before its run is read: no circuit breaker yet",
			RerunRequest(p, NoRunsRead, "p1", per10),
			want{hasNot: Set{Changed: []ChangedSince{{PipelineID: "p1", Since: ended}}}}},
		{"an operator's rerun of a period not succeeded: no circuit breaker",
			RerunRequest(p, evaluating, "p1", per10),
			want{hasNot: Set{Changed: []ChangedSince{{PipelineID: "p1"}}}}},
		{"trigger data for a period succeeded before: the write is fresh data, no store read",
			SensorWrite(p, known, succeededAt(other, ended), "p1", "ready", &data, now),
			want{hasNot: Set{Changed: []ChangedSince{{PipelineID: "p1", Since: ended}}}}},
		{"trigger data for a period succeeded at the write's instant: the circuit breaker's question",
			SensorWrite(p, known, succeededAt(other, now), "p1", "ready", &data, now),
			want{has: Set{Changed: []ChangedSince{{PipelineID: "p1", Since: now}}}}},
		{"post-run data after success: the write is fresh data, no store read",
			SensorWrite(p, known, succeededAt(k, ended), "p1", "audit", &data, now),
			want{hasNot: Set{Changed: []ChangedSince{{PipelineID: "p1", Since: ended}}}}},
		{"post-run data at the success's instant: the circuit breaker's question",
			SensorWrite(p, known, succeededAt(k, now), "p1", "audit", &data, now),
			want{has: Set{Changed: []ChangedSince{{PipelineID: "p1", Since: now}}}}},
		{"an upstream rule on every hour of the day: the hours as one range",
			Evaluation(hoursP, per10, hourly),
			want{has: Set{Pipelines: []string{"h"}, RunRanges: []RunRange{{PipelineID: "h", ScheduleID: hourlyUp.ScheduleID(), From: "2026-03-10T00", To: "2026-03-10T23"}}},
				hasNot: Set{Runs: []run.Key{{PipelineID: "h", ScheduleID: hourlyUp.ScheduleID(), Period: "2026-03-10T00"}}}}},
		{"an upstream rule on one period: its run, no range",
			Evaluation(p, per10, known),
			want{has: Set{Runs: []run.Key{upRun}}, hasNot: Set{RunRanges: []RunRange{{PipelineID: "up", ScheduleID: up.ScheduleID(), From: "2026-03-10"}}}}},
		{"SLA timer of a daily period: the day's runs from its date on",
			Timer(slaP, known, NoMarkersRead, "t", run.TimerSLABreach, slaKey, now, now),
			want{has: Set{RunRanges: []RunRange{{PipelineID: "s1", ScheduleID: slaP.ScheduleID(), From: "2026-03-10"}}}}},
		{"SLA timer of an hourly period: no range",
			Timer(slaP, known, NoMarkersRead, "t", run.TimerSLABreach, hourKey, now, now),
			want{has: Set{Runs: []run.Key{hourKey}}, hasNot: Set{RunRanges: []RunRange{{PipelineID: "s1", ScheduleID: slaP.ScheduleID(), From: "2026-03-10"}}}}},
		{"an operator's rerun: the trigger sensors of every period (the period's kinds)",
			RerunRequest(p, NoRunsRead, "p1", per10),
			want{has: Set{Prefixes: []SensorPrefix{{PipelineID: "p1", Prefix: "ready"}}}}},
		{"an operator's rerun of a cron pipeline: no trigger sensors",
			RerunRequest(cron, NoRunsRead, "c1", per10),
			want{hasNot: Set{Prefixes: []SensorPrefix{{PipelineID: "c1", Prefix: ""}}}}},
		{"pause, sensor deletion: the row", func() Set { n := Pause("p1"); n.Add(DeleteSensor("p1")); return n }(),
			want{has: Set{Pipelines: []string{"p1"}}, hasNot: Set{Runs: []run.Key{k}, ActiveRuns: []string{"p1"}}}},
		{"handoff: the step timer as stored",
			HandOff(step),
			want{has: Set{Timers: []string{step}}, hasNot: Set{Pipelines: []string{"p1"}}}},
		{"resume before the plan: the row, the backfill timer, the active runs, the trigger sensors",
			Resume(p, known, NoRunsRead, "p1", nil, nil),
			want{has: Set{Pipelines: []string{"p1"}, Timers: []string{run.PipelineTimer(run.TimerBackfill, "p1").String()}, ActiveRuns: []string{"p1"},
				Prefixes: []SensorPrefix{{PipelineID: "p1", Prefix: "ready"}}}, hasNot: Set{Runs: []run.Key{k}}}},
		{"resume, config not known: no trigger sensors yet",
			Resume(nil, unknown, NoRunsRead, "p1", nil, nil),
			want{has: Set{ActiveRuns: []string{"p1"}}, hasNot: Set{Prefixes: []SensorPrefix{{PipelineID: "p1", Prefix: "ready"}}}}},
		{"resume with a plan: each re-armed run's facts, each period its data came for as trigger data",
			Resume(p, known, NoRunsRead, "p1", []run.Run{{Key: old}, {Key: other}}, &pause.ResumePlan{Rearm: []int{1}, Data: []pause.ResumeData{{Period: per10}}}),
			want{has: Set{Runs: []run.Key{other, k}, Timers: []string{stepOther, step}, MarkersOf: []run.Key{k}, Sensors: landed},
				hasNot: Set{Runs: []run.Key{old}, Ledgers: []run.Key{k}}}},
		{"resume with data for a succeeded period: its rerun and circuit breaker",
			Resume(p, known, succeededAt(k, ended), "p1", nil, &pause.ResumePlan{Data: []pause.ResumeData{{Period: per10}}}),
			want{has: Set{Ledgers: []run.Key{k}, Changed: []ChangedSince{{PipelineID: "p1", Since: ended}}}}},
		{"resume with a skipped cron tick: the period it starts, not as trigger data",
			Resume(cron, known, succeededAt(run.Key{PipelineID: "c1", ScheduleID: cron.ScheduleID(), Period: "2026-03-10"}, ended), "c1", nil, &pause.ResumePlan{CronPeriod: &per10}),
			want{has: Set{Runs: []run.Key{{PipelineID: "c1", ScheduleID: cron.ScheduleID(), Period: "2026-03-10"}}},
				hasNot: Set{Ledgers: []run.Key{{PipelineID: "c1", ScheduleID: cron.ScheduleID(), Period: "2026-03-10"}}}}},
		{"a watchdog timeout: the run's facts and ledger, the dedup marker's period",
			Finding(p, known, watchdog.Finding{Key: k, Marker: "m", Action: watchdog.ActionFailRun}),
			want{has: Set{Pipelines: []string{"p1"}, Runs: []run.Key{k}, Timers: []string{step}, Ledgers: []run.Key{k}, MarkersOf: []run.Key{k}}, hasNot: Set{Sensors: landed}}},
		{"a watchdog recovery: the period it starts",
			Finding(p, known, watchdog.Finding{Key: k, Action: watchdog.ActionStartRun}),
			want{has: Set{Runs: []run.Key{k, other, upRun}, Sensors: landed}, hasNot: Set{MarkersOf: []run.Key{k}, Ledgers: []run.Key{k}}}},
		{"a watchdog SLA repair: the period's SLA facts",
			Finding(slaP, known, watchdog.Finding{Key: slaKey, Action: watchdog.ActionArmSLA}),
			want{has: Set{Runs: []run.Key{slaKey}, MarkersOf: []run.Key{slaKey}}}},
		{"a watchdog close: the run it finds absent",
			Finding(p, known, watchdog.Finding{Key: k, Action: watchdog.ActionClosePeriod}),
			want{has: Set{Runs: []run.Key{k}}, hasNot: Set{Timers: []string{step}}}},
		{"a watchdog finding of a pipeline not running: the row",
			Finding(nil, unknown, watchdog.Finding{Key: k, Action: watchdog.ActionFailRun}),
			want{has: Set{Pipelines: []string{"p1"}}, hasNot: Set{Runs: []run.Key{k}}}},
		{"an interrupted call found at start: the run's facts and its recovery record's period",
			Interrupted(k),
			want{has: Set{Pipelines: []string{"p1"}, Runs: []run.Key{k}, Timers: []string{step}, MarkersOf: []run.Key{k}}, hasNot: Set{Ledgers: []run.Key{k}}}},
		{"a backfill request before its range is known: row, backfills, trigger sensors",
			BackfillRequest(p, "p1", ""),
			want{has: Set{Pipelines: []string{"p1"}, Backfills: []string{"p1"}, Prefixes: []SensorPrefix{{PipelineID: "p1", Prefix: "ready"}}},
				hasNot: Set{RunRanges: []RunRange{{PipelineID: "p1", From: "2026-03-01"}}}}},
		{"a backfill request with its range: the runs from its first period, every schedule's",
			BackfillRequest(p, "p1", "2026-03-01"),
			want{has: Set{RunRanges: []RunRange{{PipelineID: "p1", From: "2026-03-01"}}}}},
		{"a backfill's cancel: row and backfills",
			BackfillCancel("p1"),
			want{has: Set{Pipelines: []string{"p1"}, Backfills: []string{"p1"}}, hasNot: Set{Prefixes: []SensorPrefix{{PipelineID: "p1", Prefix: "ready"}}}}},
		{"a backfill step: each active period's run under either schedule; the period it starts",
			BackfillStep(p, known, "p1", []string{"2026-03-08"}, &per10),
			want{has: Set{Backfills: []string{"p1"}, Runs: []run.Key{old, run.OtherSchedule(old), k, other}, Ledgers: []run.Key{k, other}, Sensors: landed}}},
		{"a backfill step before the backfills are read: row and backfills",
			BackfillStep(p, known, "p1", nil, nil),
			want{has: Set{Pipelines: []string{"p1"}, Backfills: []string{"p1"}}, hasNot: Set{Runs: []run.Key{k}}}},
		{"a silenced condition at its silence's end: the period's condition facts",
			AfterSilence(k),
			want{has: Set{Pipelines: []string{"p1"}, Runs: []run.Key{k, other}, MarkersOf: []run.Key{k}}, hasNot: Set{Timers: []string{step}}}},
		{"a silence's expiry or end: the silence",
			Silence("s-1"),
			want{has: Set{Silences: []string{"s-1"}}}},
		{"arming the maintenance windows' ends: their timers",
			MaintenanceEnds([]string{"a", "b"}),
			want{has: Set{Timers: []string{"a", "b"}}}},
		{"a watchdog pass: the markers under no pipeline",
			WatchdogPass(),
			want{has: Set{MarkersOf: []run.Key{{}}}}},
		{"SLA timer: its period's run (no SLA: no markers)",
			Timer(p, known, NoMarkersRead, "t", run.TimerSLABreach, k, now, now),
			want{has: Set{Timers: []string{"t"}, Runs: []run.Key{k}}, hasNot: Set{MarkersOf: []run.Key{k}}}},
		{"cron tick: the period it starts",
			Timer(cron, known, NoMarkersRead, "c", run.TimerCron, run.Key{PipelineID: "c1"}, time.Date(2026, 3, 10, 6, 0, 0, 0, time.UTC), now),
			want{has: Set{Timers: []string{"c"}, Runs: []run.Key{{PipelineID: "c1", ScheduleID: cron.ScheduleID(), Period: "2026-03-10"}}}}},
		{"upstream timer: the period it re-evaluates or opens",
			Timer(p, known, NoMarkersRead, "u", run.TimerUpstream, k, now, now),
			want{has: Set{Runs: []run.Key{k, other, upRun}, Sensors: landed}}},
		{"downstreams timer: the index and the period's markers",
			Timer(p, known, NoMarkersRead, "d", run.TimerDownstreams, k, now, now),
			want{has: Set{Timers: []string{"d"}, Pipelines: []string{"p1"}, MarkersOf: []run.Key{{PipelineID: "p1"}, k}}, hasNot: Set{Pipelines: []string{"down"}}}},
		{"downstreams timer, index read: the downstreams' rows",
			Timer(p, known, func(run.Key) ([]string, bool) {
				return []string{run.DownstreamMarker("down").String(), run.MarkerFirstArrival}, true
			}, "d", run.TimerDownstreams, k, now, now),
			want{has: Set{Pipelines: []string{"down"}}}},
		{"release timer: the root period's condition facts",
			Timer(nil, unknown, NoMarkersRead, "r", run.TimerRelease, k, now, now),
			want{has: Set{Timers: []string{"r"}, Pipelines: []string{"p1"}, Runs: []run.Key{k, other}, MarkersOf: []run.Key{k}}}},
		{"release timer, markers read: each blocked downstream period's facts",
			Timer(nil, unknown, func(run.Key) ([]string, bool) {
				return []string{run.BlockedMarker(downKey, "SLA_BREACH").String()}, true
			}, "r", run.TimerRelease, k, now, now),
			want{has: Set{Pipelines: []string{"down"}, Runs: []run.Key{downKey, run.OtherSchedule(downKey)}, MarkersOf: []run.Key{downKey}}}},
		{"a timer of another family: itself and the row",
			Timer(p, known, NoMarkersRead, "r", run.TimerResume, run.Key{PipelineID: "p1"}, now, now),
			want{has: Set{Timers: []string{"r"}, Pipelines: []string{"p1"}}, hasNot: Set{Runs: []run.Key{k}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if missing := c.want.has.Minus(c.got); !missing.Empty() {
				t.Errorf("does not name %+v", missing)
			}
			if extra := c.want.hasNot.Minus(c.want.hasNot.Minus(c.got)); !extra.Empty() {
				t.Errorf("names %+v", extra)
			}
		})
	}
}

func TestNeedsAddMinus(t *testing.T) {
	k := run.Key{PipelineID: "p", Period: "2026-03-10"}
	var n Set
	n.Add(Set{Runs: []run.Key{k, k}, Timers: []string{"a"}})
	n.Add(Set{Runs: []run.Key{k}, Timers: []string{"b"}})
	if len(n.Runs) != 1 || !slices.Equal(n.Timers, []string{"a", "b"}) {
		t.Errorf("Add keeps each key once: %+v", n)
	}
	if left := n.Minus(Set{Timers: []string{"a"}}); !slices.Equal(left.Timers, []string{"b"}) || len(left.Runs) != 1 {
		t.Errorf("Minus: %+v", left)
	}
	if !(Set{}).Empty() || n.Empty() {
		t.Error("Empty")
	}
}

// TestSilenceEnd: a silence end timer names its silence, and once it is
// read and over the first page of the events its end judges — of its one
// pipeline, the condition-opening types, since its start; none while it
// is not over, none for a key of another family.
func TestSilenceEnd(t *testing.T) {
	now := runtest.T0
	key := run.SilenceEndTimer("s-1").String()
	s := silence.Silence{ID: "s-1", Matchers: silence.Matchers{Pipelines: []string{"p1"}}, StartsAt: now.Add(-time.Hour), EndsAt: now.Add(-time.Minute)}
	read := func(s *silence.Silence) ReadSilences {
		return func(id string) (*silence.Silence, bool) { return s, id == "s-1" }
	}
	notRead := func(string) (*silence.Silence, bool) { return nil, false }
	if n := SilenceEnd(key, notRead, now); !slices.Equal(n.Silences, []string{"s-1"}) || len(n.Events) != 0 {
		t.Fatalf("before the silence is read: %+v, want the silence alone", n)
	}
	n := SilenceEnd(key, read(&s), now)
	if len(n.Events) != 1 {
		t.Fatalf("over: %+v, want one page", n)
	}
	r := n.Events[0]
	if r.PipelineID != "p1" || !r.Since.Equal(s.StartsAt) || r.After != "" || r.Limit != EndEventsPage ||
		!strings.Contains(r.Types, string(event.SLABreach)) || strings.Contains(r.Types, string(event.JobTriggered)) {
		t.Fatalf("the page %+v, want p1's condition-opening events since the start", r)
	}
	extended := s
	extended.EndsAt = now.Add(time.Hour)
	if n := SilenceEnd(key, read(&extended), now); len(n.Events) != 0 {
		t.Fatalf("not over: %+v, want no page", n)
	}
	if n := SilenceEnd(key, read(nil), now); len(n.Events) != 0 {
		t.Fatalf("gone: %+v, want no page", n)
	}
	if n := SilenceEnd(run.MaintenanceEndTimer("w").String(), read(&s), now); !n.Empty() {
		t.Fatalf("a window's timer: %+v, want nothing", n)
	}
}

// TestMaintenanceEnd: a window's end timer names the first page of the
// events of the occurrence that ended at its due time; nothing for a
// window no longer configured.
func TestMaintenanceEnd(t *testing.T) {
	now := runtest.T0
	w, err := silence.NewWindow("nightly", "0 2 * * *", 2*time.Hour, "UTC", silence.Matchers{Pipelines: []string{"p1"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	key := run.MaintenanceEndTimer("nightly").String()
	n := MaintenanceEnd(key, []silence.Window{w}, runtest.HM(4, 0), now)
	if len(n.Events) != 1 || !n.Events[0].Since.Equal(runtest.HM(2, 0)) || n.Events[0].PipelineID != "p1" {
		t.Fatalf("needs %+v, want the 02:00-04:00 occurrence's first page of p1", n)
	}
	if n := MaintenanceEnd(key, nil, runtest.HM(4, 0), now); !n.Empty() {
		t.Fatalf("no window: %+v, want nothing", n)
	}
}
