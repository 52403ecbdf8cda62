package run

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// TestRerunPeriodKindMatchesThePipeline: a rerun names a period of the
// kind the pipeline runs, for every kind of pipeline. A rerun of an hour
// of a daily trigger-only pipeline was accepted (only daily cron
// pipelines refused hours), and opened an hourly run nothing expected.
func TestRerunPeriodKindMatchesThePipeline(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	at := now.Add(-time.Hour)
	pipe := func(schedule string) string {
		return "pipeline: {id: kiri}\nschedule: " + schedule + "\njob: {type: glue, config: {jobName: j}}\n"
	}
	const trig = `trigger: {key: go, check: exists}`
	dayData := []sensor.Record{{Key: "go", Data: Detail("ok", true), ReceivedAt: at}}
	dateField := []sensor.Record{{Key: "go", Data: Detail("date", "2026-11-23"), ReceivedAt: at}}
	hourKey := []sensor.Record{{Key: "go#2026-11-24T05", ReceivedAt: at}}
	hourField := []sensor.Record{{Key: "go", Data: Detail("date", "2026-11-24", "hour", "05"), ReceivedAt: at}}
	both := append(append([]sensor.Record{}, dayData...), hourKey...)
	others := []sensor.Record{{Key: "audit#2026-11-24T05", ReceivedAt: at}, {Key: "go#eu#2026-11-24T05", ReceivedAt: at}}
	for _, c := range []struct {
		name         string
		doc          string
		stored       []sensor.Record
		days, hours  bool
		dayErr, hErr string // what each refusal says
	}{
		{"daily cron", pipe(`{cron: "0 6 * * *"}`), nil, true, false, "", "its cron fires at most once a day"},
		{"daily cron with a trigger naming hours", pipe(`{cron: "0 6 * * *", ` + trig + `}`), hourKey, true, false, "", "its cron fires at most once a day"},
		{"hourly cron", pipe(`{cron: "0 * * * *"}`), nil, false, true, "its cron fires more than once a day", ""},
		{"every 15 minutes", pipe(`{cron: "*/15 * * * *"}`), dayData, false, true, "its cron fires more than once a day", ""},
		{"trigger with a :MM deadline", pipe(`{trigger: {key: go, check: exists, deadline: ":30"}}`), nil, false, true, `":MM" deadline`, ""},
		{"inclusion calendar", pipe(`{include: {dates: ["2026-11-24"]}, ` + trig + `}`), hourKey, true, false, "", "inclusion calendar"},
		{"trigger, no sensor yet", pipe(`{` + trig + `}`), nil, true, false, "", "none of its trigger sensors has named an hour yet"},
		{"trigger, sensors name no period", pipe(`{` + trig + `}`), dayData, true, false, "", "its trigger sensors name dates, none an hour"},
		{"trigger, a date field", pipe(`{` + trig + `}`), dateField, true, false, "", "name dates, none an hour"},
		{"trigger, other keys name hours", pipe(`{` + trig + `}`), append(append([]sensor.Record{}, dayData...), others...), true, false, "", "name dates, none an hour"},
		{"trigger, an hour suffix", pipe(`{` + trig + `}`), hourKey, false, true, "its trigger sensors name hours, none a date", ""},
		{"trigger, date and hour fields", pipe(`{` + trig + `}`), hourField, false, true, "name hours, none a date", ""},
		{"trigger, both", pipe(`{` + trig + `}`), both, true, true, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustPipeline(t, c.doc)
			if k := KindsOfPeriod(p, c.stored); k.Days != c.days || k.Hours != c.hours {
				t.Fatalf("KindsOfPeriod = %+v, want days %v hours %v", k, c.days, c.hours)
			}
			for _, tc := range []struct {
				period string
				ok     bool
				says   string
			}{
				{"2026-11-24", c.days, c.dayErr},
				{"2026-11-24T06", c.hours, c.hErr},
			} {
				per, _ := schedule.ParsePeriod(tc.period)
				err := CheckRerunPeriod(p, per, now, c.stored)
				if tc.ok {
					if err != nil {
						t.Errorf("rerun of %s refused: %v", tc.period, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "pipeline kiri runs") {
					t.Errorf("rerun of %s = %v, want a refusal saying %q", tc.period, err, tc.says)
				}
			}
		})
	}
}

// TestInclusionCalendarPeriodsAreDays: a trigger sensor naming an hour of
// a pipeline with an inclusion calendar names that hour's day, as for a
// daily cron (the config already refuses ":MM" deadlines there).
func TestInclusionCalendarPeriodsAreDays(t *testing.T) {
	p := mustPipeline(t, "pipeline: {id: inc}\nschedule: {include: {dates: [\"2026-11-24\"]}, trigger: {key: go, check: exists}}\njob: {type: glue, config: {jobName: j}}\n")
	per, err := SensorPeriod(p, "go#2026-11-24T05", sensor.Object{}, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	if err != nil || per.String() != "2026-11-24" {
		t.Fatalf("period %v %v, want the day", per, err)
	}
}

// TestBackfillRerunHasItsOwnBudget: a backfill's rerun neither draws on
// maxManualReruns nor meets the circuit breaker, and reopens the period
// with Cause backfill.
func TestBackfillRerunHasItsOwnBudget(t *testing.T) {
	p := mustPipeline(t, "pipeline: {id: bf}\nschedule:\n  cron: \"0 6 * * *\"\n  timezone: America/New_York\njob: {type: glue, config: {jobName: j}}\n")
	ok := &Run{State: Completed, Outcome: OutcomeSucceeded}
	used := make([]string, p.Job.MaxManualReruns+3)
	for i := range used {
		used[i] = ReasonManual
	}
	d := DecideRerun(RerunInput{Reason: ReasonBackfill, Existing: ok, Ledger: append(used, ReasonBackfill)}, p)
	if !d.Accepted || d.CircuitBreaker != BreakerBackfill {
		t.Fatalf("DecideRerun(backfill) = %+v", d)
	}
	if in := (RerunInput{Reason: ReasonBackfill, Existing: ok}); in.NeedsFreshData() {
		t.Fatal("a backfill's rerun reads fresh data for a breaker it skips")
	}
	if d := DecideRerun(RerunInput{Reason: ReasonManual, Existing: ok, Ledger: used, FreshData: true}, p); d.Accepted {
		t.Fatal("a manual rerun past its budget was accepted")
	}
	if d := DecideRerun(RerunInput{Reason: ReasonBackfill, Existing: &Run{State: Running}}, p); d.Accepted {
		t.Fatal("a backfill reopened a run in progress")
	}
	r, eff := Reopen(ok, Key{PipelineID: "bf", ScheduleID: "cron", Period: "2026-03-04"}, ReasonBackfill, ReasonBackfill, d, 1, p, hm(12, 0))
	if r.Cause != CauseBackfill || eff.LedgerSource != ReasonBackfill || eff.LedgerReason != ReasonBackfill {
		t.Fatalf("Reopen(backfill): cause %s, ledger %s/%s", r.Cause, eff.LedgerReason, eff.LedgerSource)
	}
}

func TestDryRunRerun(t *testing.T) {
	if n := DryRunRerun("manual", RerunDecision{Accepted: true}); n.Type != event.DryRunWouldRerun {
		t.Errorf("accepted: %v", n.Type)
	}
	if n := DryRunRerun("manual", RerunDecision{Label: "budget"}); n.Type != event.DryRunRerunRejected || !strings.HasSuffix(n.Message, ": budget") {
		t.Errorf("rejected: %v %q", n.Type, n.Message)
	}
}
