package run

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

var (
	t0           = runtest.T0
	day          = runtest.Day
	hm           = runtest.HM
	mustPipeline = runtest.Pipeline
)

const basePipeline = runtest.Base

func types(eff Effect) []event.Type {
	var out []event.Type
	for _, n := range eff.Notes {
		out = append(out, n.Type)
	}
	return out
}

func sameTypes(a, b []event.Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var key = Key{PipelineID: "p1", ScheduleID: "stream", Period: "2026-03-10"}

func TestEvaluationLoop(t *testing.T) {
	p := mustPipeline(t, basePipeline)
	r, eff := Start(key, CauseSensor, 1, p, t0)
	if r.State != Evaluating || eff.Next != StepEvaluate || !eff.NextAt.Equal(t0) {
		t.Fatalf("Start: state %s next %s at %v", r.State, eff.Next, eff.NextAt)
	}
	if !r.EvalDeadline.Equal(t0.Add(time.Hour)) {
		t.Fatalf("EvalDeadline = %v", r.EvalDeadline)
	}
	cases := []struct {
		name      string
		at        time.Duration
		passed    bool
		wantState State
		wantNext  Step
		wantAt    time.Duration
		wantTypes []event.Type
	}{
		{"not ready, interval later", 0, false, Evaluating, StepEvaluate, 5 * time.Minute, nil},
		{"not ready near the end waits only until the window closes", 58 * time.Minute, false, Evaluating, StepEvaluate, time.Hour, nil},
		{"passes", 10 * time.Minute, true, Triggering, StepTrigger, 10 * time.Minute, []event.Type{event.ValidationPassed}},
		{"passes at the window's close", time.Hour, true, Triggering, StepTrigger, time.Hour, []event.Type{event.ValidationPassed}},
		{"window closed", time.Hour, false, FailedFinal, StepNone, 0, []event.Type{event.ValidationExhausted}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := rule.Outcome{Mode: rule.All, Passed: c.passed, Results: []rule.Result{{Rule: rule.Rule{Key: "ready", Op: rule.Exists}, Passed: c.passed}}}
			next, eff := AfterEvaluation(r, out, p, t0.Add(c.at))
			if next.State != c.wantState || eff.Next != c.wantNext {
				t.Fatalf("state %s next %s, want %s %s", next.State, eff.Next, c.wantState, c.wantNext)
			}
			if c.wantNext != StepNone && !eff.NextAt.Equal(t0.Add(c.wantAt)) {
				t.Fatalf("next at %v, want %v", eff.NextAt, t0.Add(c.wantAt))
			}
			if !sameTypes(types(eff), c.wantTypes) {
				t.Fatalf("events %v, want %v", types(eff), c.wantTypes)
			}
			if next.State == FailedFinal && (next.Outcome != OutcomeValidationExhausted || !eff.Ended || !next.ExpiresAt.IsZero()) {
				t.Fatalf("exhausted run: outcome %s ended %v expires %v", next.Outcome, eff.Ended, next.ExpiresAt)
			}
		})
	}
}

func TestTriggerErrorsRetryWithBackoffThenGiveUp(t *testing.T) {
	p := mustPipeline(t, basePipeline) // triggerRetries: 2
	r := Run{Key: key, State: Triggering}
	r, _ = BeginTrigger(r, p, t0)
	if !r.TriggerInFlight {
		t.Fatal("BeginTrigger did not mark the call in flight")
	}
	r, eff := AfterTriggerError(r, "503", p, t0)
	if r.State != Triggering || eff.Next != StepTrigger || !eff.NextAt.Equal(t0.Add(30*time.Second)) || r.TriggerInFlight {
		t.Fatalf("first error: %s %s %v inflight=%v", r.State, eff.Next, eff.NextAt, r.TriggerInFlight)
	}
	r, eff = AfterTriggerError(r, "503", p, t0)
	if !eff.NextAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("second backoff at %v, want +1m", eff.NextAt)
	}
	r, eff = AfterTriggerError(r, "503", p, t0)
	if r.State != FailedFinal || r.Outcome != OutcomeTriggerExhausted || !sameTypes(types(eff), []event.Type{event.RetryExhausted}) || !eff.Ended {
		t.Fatalf("third error: %s %s %v", r.State, r.Outcome, types(eff))
	}
}

func TestTriggerBackoff(t *testing.T) {
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 10 * time.Minute, 10 * time.Minute}
	for i, w := range want {
		if got := TriggerBackoff(i + 1); got != w {
			t.Errorf("TriggerBackoff(%d) = %v, want %v", i+1, got, w)
		}
	}
}

func TestTriggerInterruptedIsNotRetried(t *testing.T) {
	r := Run{Key: key, State: Triggering, TriggerInFlight: true}
	next, eff := TriggerInterrupted(r, t0)
	if next.State != FailedFinal || next.Outcome != OutcomeTriggerUnknown || eff.Next != StepNone {
		t.Fatalf("got %s %s next %s", next.State, next.Outcome, eff.Next)
	}
	if !sameTypes(types(eff), []event.Type{event.InfraFailure}) {
		t.Fatalf("events %v", types(eff))
	}
}

func TestPolling(t *testing.T) {
	p := mustPipeline(t, basePipeline) // pollInterval 1m, pollWindow 30m
	r := Run{Key: key, State: Triggering}
	r, eff := Triggered(r, "glue", "jr-1", map[string]string{"k": "v"}, p, t0)
	if r.State != Running || r.Attempt != 1 || eff.Next != StepPoll || !eff.NextAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Triggered: %s attempt %d next %s %v", r.State, r.Attempt, eff.Next, eff.NextAt)
	}
	if !sameTypes(types(eff), []event.Type{event.JobTriggered}) {
		t.Fatalf("events %v", types(eff))
	}
	still, eff := AfterPollRunning(r, p, t0.Add(29*time.Minute+30*time.Second))
	if still.State != Running || !eff.NextAt.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("last poll not clamped to the window: %v", eff.NextAt)
	}
	done, eff := AfterPollRunning(r, p, t0.Add(30*time.Minute))
	if done.State != FailedFinal || done.Outcome != OutcomePollExhausted || !sameTypes(types(eff), []event.Type{event.JobPollExhausted}) {
		t.Fatalf("poll exhausted: %s %s %v", done.State, done.Outcome, types(eff))
	}
	ok, eff := JobSucceeded(r, t0.Add(10*time.Minute))
	if ok.State != Completed || !eff.Succeeded || !ok.EndedAt.Equal(t0.Add(10*time.Minute)) || !sameTypes(types(eff), []event.Type{event.JobCompleted}) {
		t.Fatalf("success: %s %v %v", ok.State, eff.Succeeded, types(eff))
	}
}

func TestJobFailureBudgets(t *testing.T) {
	p := mustPipeline(t, basePipeline) // maxRetries 2, maxCodeRetries 1
	running := Run{Key: key, State: Running, Attempt: 1}
	cases := []struct {
		name      string
		cat       Category
		used      int
		excluded  string
		wantState State
		wantTypes []event.Type
		ledger    string
	}{
		{"transient with budget retries at once", Transient, 0, "", Triggering, []event.Type{event.JobFailed}, LedgerJobRetry},
		{"transient budget used up", Transient, 2, "", FailedFinal, []event.Type{event.JobFailed, event.RetryExhausted}, ""},
		{"timeout counts against maxRetries", Timeout, 1, "", Triggering, []event.Type{event.JobFailed}, LedgerJobRetry},
		{"permanent uses maxCodeRetries", Permanent, 1, "", FailedFinal, []event.Type{event.JobFailed, event.RetryExhausted}, ""},
		{"permanent within maxCodeRetries", Permanent, 0, "", Triggering, []event.Type{event.JobFailed}, LedgerJobRetry},
		{"excluded period is not retried", Transient, 0, "2026-03-10 (Tuesday) is excluded by date (exclude.dates)", FailedFinal, []event.Type{event.JobFailed, event.PipelineExcluded}, ""},
		{"empty category is transient", "", 0, "", Triggering, []event.Type{event.JobFailed}, LedgerJobRetry},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, eff := JobFailed(running, Failure{Category: c.cat, Message: "boom"}, c.used, c.excluded, p, t0)
			if next.State != c.wantState || !sameTypes(types(eff), c.wantTypes) || eff.LedgerReason != c.ledger {
				t.Fatalf("got %s %v ledger %q; want %s %v %q", next.State, types(eff), eff.LedgerReason, c.wantState, c.wantTypes, c.ledger)
			}
			if next.LastFailure == nil || next.LastFailure.Message != "boom" {
				t.Fatalf("LastFailure = %+v", next.LastFailure)
			}
			if c.wantState == Triggering && (eff.Next != StepTrigger || !eff.NextAt.Equal(t0)) {
				t.Fatalf("retry not immediate: %s %v", eff.Next, eff.NextAt)
			}
		})
	}
}

func TestDecideRerun(t *testing.T) {
	p := mustPipeline(t, basePipeline) // drift and manual budgets default 1
	done := &Run{Key: key, State: Completed, EndedAt: t0}
	failed := &Run{Key: key, State: FailedFinal}
	running := &Run{Key: key, State: Running}
	cases := []struct {
		name     string
		in       RerunInput
		accepted bool
		label    string
		breaker  string
	}{
		{"never ran", RerunInput{Reason: ReasonManual}, true, "", "skipped (the period never ran)"},
		{"after failure, no fresh data needed", RerunInput{Reason: ReasonManual, Existing: failed}, true, "", "skipped (the last run did not succeed)"},
		{"after success with fresh data", RerunInput{Reason: ReasonManual, Existing: done, FreshData: true}, true, "", "passed"},
		{"after success without fresh data", RerunInput{Reason: ReasonManual, Existing: done}, false, "no sensor data has changed", "rejected"},
		{"run in progress", RerunInput{Reason: ReasonManual, Existing: running}, false, "in progress", "not evaluated (refused first: a run is in progress)"},
		{"excluded, the rule named", RerunInput{Reason: ReasonManual, Exclusion: "2026-03-14 (Saturday) is excluded as a weekend (exclude.weekends)"}, false,
			"the period is excluded: 2026-03-14 (Saturday) is excluded as a weekend (exclude.weekends)", "not evaluated (refused first: the period is excluded)"},
		{"manual budget used", RerunInput{Reason: ReasonManual, Existing: failed, Ledger: []string{ReasonManual}}, false, "manual rerun limit exceeded (1/1)", "not evaluated (refused first: the rerun budget is used up)"},
		{"budget used after a success: the breaker was not evaluated", RerunInput{Reason: ReasonManual, Existing: done, FreshData: true, Ledger: []string{ReasonManual}}, false, "manual rerun limit exceeded (1/1)", "not evaluated (refused first: the rerun budget is used up)"},
		{"other reasons have their own count", RerunInput{Reason: "reprocess", Existing: failed, Ledger: []string{ReasonManual}}, true, "", "skipped (the last run did not succeed)"},
		{"drift and late data share a budget", RerunInput{Reason: ReasonDrift, Existing: done, FreshData: true, Ledger: []string{ReasonLateData}}, false, "drift rerun limit exceeded (1/1)", "not evaluated (refused first: the rerun budget is used up)"},
		{"job retries do not count against reruns", RerunInput{Reason: ReasonDrift, Existing: done, FreshData: true, Ledger: []string{LedgerJobRetry, LedgerJobRetry}}, true, "", "passed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := DecideRerun(c.in, p)
			if d.Accepted != c.accepted || (c.label != "" && !strings.Contains(d.Label, c.label)) {
				t.Fatalf("got accepted=%v label=%q; want %v containing %q", d.Accepted, d.Label, c.accepted, c.label)
			}
			if d.CircuitBreaker != c.breaker {
				t.Fatalf("circuit breaker %q, want %q", d.CircuitBreaker, c.breaker)
			}
		})
	}
}

func TestReopen(t *testing.T) {
	p := mustPipeline(t, basePipeline)
	prev := &Run{Key: key, State: Completed, Outcome: OutcomeSucceeded, Attempt: 2, Generation: 0, JobRunID: "x", EndedAt: t0}
	r, eff := Reopen(prev, key, ReasonDrift, "sensor audit", RerunDecision{Accepted: true, Budget: 1}, 3, p, t0.Add(time.Hour))
	if r.State != Evaluating || r.Generation != 1 || r.Attempt != 0 || r.JobRunID != "" || !r.EndedAt.IsZero() || r.ConfigVersion != 3 || r.Cause != CauseRerun {
		t.Fatalf("reopened run: %+v", r)
	}
	if eff.LedgerReason != ReasonDrift || eff.Next != StepEvaluate || !sameTypes(types(eff), []event.Type{event.RerunAccepted}) {
		t.Fatalf("effect: %+v", eff)
	}
	if prev.Generation != 0 {
		t.Fatal("Reopen modified the stored run")
	}
}

func TestDrift(t *testing.T) {
	obj := func(kv ...any) sensor.Object { return Detail(kv...) }
	cases := []struct {
		name      string
		base, cur sensor.Object
		threshold float64
		drifted   bool
		ok        bool
	}{
		{"equal", obj("count", 100), obj("count", 100), 0, false, true},
		{"above threshold", obj("count", 100), obj("count", 130), 0, true, true},
		{"at threshold is not drift", obj("count", 100), obj("count", 110), 10, false, true},
		{"to zero is drift", obj("count", 5000), obj("count", 0), 0, true, true},
		{"numeric string", obj("count", "100"), obj("count", 101), 0, true, true},
		{"missing field", obj("count", 100), obj("rows", 101), 0, false, false},
		{"not numeric", obj("count", "many"), obj("count", 101), 0, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Drift(c.base, c.cur, "count", c.threshold)
			if d.Drifted != c.drifted || d.Comparable != c.ok {
				t.Fatalf("got %+v", d)
			}
		})
	}
}

func TestPeriodRouting(t *testing.T) {
	p := mustPipeline(t, `
pipeline: {id: p1}
schedule:
  trigger: {key: hourly-status, check: exists}
  timezone: America/New_York
  exclude: {weekends: true}
sla: {deadline: ":30", expectedDuration: 10m}
postRun:
  rules: [{key: audit, check: exists}]
job: {type: command, config: {command: /bin/true}}
`)
	if !Hourly(p) {
		t.Fatal(`":MM" SLA deadline should make periods hourly`)
	}
	now := time.Date(2026, 3, 10, 13, 5, 0, 0, time.UTC) // 09:05 EDT
	if got := CurrentPeriod(p, now).String(); got != "2026-03-10T09" {
		t.Fatalf("CurrentPeriod = %s", got)
	}
	per, err := SensorPeriod(p, "hourly-status#20260310T07", sensor.Object{}, now)
	if err != nil || per.String() != "2026-03-10T07" {
		t.Fatalf("key suffix period = %v, %v", per, err)
	}
	per, err = SensorPeriod(p, "hourly-status", Detail("date", "20260309", "hour", "23"), now)
	if err != nil || per.String() != "2026-03-09T23" {
		t.Fatalf("field period = %v, %v", per, err)
	}
	if _, err := SensorPeriod(p, "hourly-status", Detail("date", "2026-13-01"), now); err == nil {
		t.Fatal("malformed date accepted")
	}
	if !Excluded(p, schedule.Daily(schedule.Date{Year: 2026, Month: 3, Day: 14})) || Excluded(p, schedule.Daily(schedule.Date{Year: 2026, Month: 3, Day: 16})) {
		t.Fatal("weekend exclusion")
	}
	if !MatchesTrigger(p, "hourly-status#20260310T07") || MatchesTrigger(p, "audit") {
		t.Fatal("trigger prefix match")
	}
	if k, ok := MatchesPostRun(p, "audit-2"); !ok || k != "audit" {
		t.Fatal("post-run prefix match")
	}
}

func TestNewData(t *testing.T) {
	p := mustPipeline(t, basePipeline)
	day := func(d int) schedule.Period { return schedule.Daily(schedule.Date{Year: 2026, Month: 3, Day: d}) }
	stored := &sensor.Record{Key: "ready", Data: Detail("status", "ready"), ReceivedAt: t0}
	cases := []struct {
		name   string
		stored *sensor.Record
		data   sensor.Object
		per    schedule.Period
		want   bool
	}{
		{"nothing stored", nil, Detail("status", "ready"), day(10), true},
		{"different content", stored, Detail("status", "late"), day(10), true},
		{"identical re-write, same period", stored, Detail("status", "ready"), day(10), false},
		{"same content, next day", stored, Detail("status", "ready"), day(11), true},
		{"numbers compare numerically", &sensor.Record{Key: "ready", Data: Detail("n", 1000000), ReceivedAt: t0}, Detail("n", 1e6), day(10), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := NewData(p, "ready", c.stored, c.data, c.per); got != c.want {
				t.Fatalf("NewData = %v, want %v", got, c.want)
			}
		})
	}
}

func TestDailyCronPipelinesRunDays(t *testing.T) {
	daily := mustPipeline(t, `
pipeline: {id: d}
schedule: {cron: "0 6 * * *", trigger: {key: ready, check: exists}}
job: {type: glue, config: {jobName: j}}
`)
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		key  string
		data sensor.Object
	}{
		{"ready#20260310T09", sensor.Object{}},
		{"ready", Detail("date", "2026-03-10", "hour", "10")},
	} {
		per, err := SensorPeriod(daily, c.key, c.data, now)
		if err != nil || per.String() != "2026-03-10" {
			t.Errorf("%s: period %v %v, want the day", c.key, per, err)
		}
	}
	hourlyOK := mustPipeline(t, basePipeline)
	if per, _ := SensorPeriod(hourlyOK, "ready#20260310T09", sensor.Object{}, now); per.String() != "2026-03-10T09" {
		t.Errorf("a trigger-only pipeline keeps the hour: %v", per)
	}
	hour, _ := schedule.ParsePeriod("2026-03-10T03")
	if err := CheckRerunPeriod(daily, hour, now, nil); err == nil {
		t.Error("an hourly rerun of a daily cron pipeline was accepted")
	}
	future, _ := schedule.ParsePeriod("2030-01-01")
	if err := CheckRerunPeriod(daily, future, now, nil); err == nil {
		t.Error("a rerun of a future period was accepted")
	}
	today, _ := schedule.ParsePeriod("2026-03-10")
	if err := CheckRerunPeriod(daily, today, now, nil); err != nil {
		t.Errorf("today's rerun refused: %v", err)
	}
}
