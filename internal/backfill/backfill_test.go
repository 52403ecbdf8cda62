package backfill

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/schedule"
)

func bfDaily(extra string) string {
	return "pipeline: {id: bf}\nschedule:\n  cron: \"0 6 * * *\"\n  timezone: America/New_York\n" + extra + "job: {type: glue, config: {jobName: j}}\n"
}

const bfHourly = "pipeline: {id: bf}\nschedule:\n  cron: \"0 * * * *\"\n  timezone: America/New_York\njob: {type: glue, config: {jobName: j}}\n"

func periodsString(ps []schedule.Period) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return strings.Join(out, " ")
}

func TestBackfillRange(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) // 08:00 in New York
	daily, hourly := runtest.Pipeline(t, bfDaily("")), runtest.Pipeline(t, bfHourly)
	days, hours := run.KindsOfPeriod(daily, nil), run.KindsOfPeriod(hourly, nil)
	req := func(from, to string) Request {
		return Request{From: from, To: to, Only: OnlyMissing, MaxActive: 2}
	}
	for _, c := range []struct {
		name   string
		hourly bool
		req    Request
		want   string // the periods, or the field error
	}{
		{"days inclusive", false, req("2026-03-03", "2026-03-05"), "2026-03-03 2026-03-04 2026-03-05"},
		{"one day", false, req("2026-03-05", "2026-03-05"), "2026-03-05"},
		{"reverse", false, Request{From: "2026-03-03", To: "2026-03-05", Only: OnlyAll, MaxActive: 1, Reverse: true}, "2026-03-05 2026-03-04 2026-03-03"},
		{"today has started", false, req("2026-03-09", "2026-03-10"), "2026-03-09 2026-03-10"},
		{"compact forms", false, req("20260304", "20260305"), "2026-03-04 2026-03-05"},
		// 2026-03-08 springs forward in New York: T02 is listed (the
		// plan skips it), the day has 23 hours of periods plus it.
		{"hours across the spring gap", true, req("2026-03-08T01", "2026-03-08T03"), "2026-03-08T01 2026-03-08T02 2026-03-08T03"},
		{"hours across midnight", true, req("2026-03-08T23", "2026-03-09T01"), "2026-03-08T23 2026-03-09T00 2026-03-09T01"},
		{"from after to", false, req("2026-03-05", "2026-03-04"), "from: 2026-03-05 is after to 2026-03-04"},
		{"hours: from after to", true, req("2026-03-05T10", "2026-03-05T09"), "from: 2026-03-05T10 is after to 2026-03-05T09"},
		{"into the future", false, req("2026-03-09", "2026-03-11"), "to: period 2026-03-11 has not started yet"},
		{"an hour not started", true, req("2026-03-10T07", "2026-03-10T09"), "to: period 2026-03-10T09 has not started yet"},
		{"the current hour has", true, req("2026-03-10T07", "2026-03-10T08"), "2026-03-10T07 2026-03-10T08"},
		{"an hour of a daily pipeline", false, req("2026-03-04T05", "2026-03-05T05"), "from: 2026-03-04T05 is an hour, but pipeline bf runs daily periods"},
		{"a date of an hourly pipeline", true, req("2026-03-04T05", "2026-03-05"), "to: 2026-03-05 is a date, but pipeline bf runs hourly periods"},
		{"a period that does not parse", false, req("2026-02-30", "2026-03-05"), "from: period \"2026-02-30\""},
		{"no to", false, req("2026-03-04", ""), "to: a period is required"},
		{"before 1970", false, req("1969-12-31", "2026-03-05"), "from: period 1969-12-31 is before 1970-01-01"},
		{"exactly the cap", false, req("2023-06-14", "2026-03-09"), "2023-06-14"},
		{"over the cap", false, req("2023-06-13", "2026-03-09"), "to: the range 2023-06-13..2026-03-09 holds more than 1000 periods"},
		{"unknown only", false, Request{From: "2026-03-04", To: "2026-03-05", Only: "some", MaxActive: 1}, `only: "some" is not one of missing, failed, all`},
		{"maxActive 0", false, Request{From: "2026-03-04", To: "2026-03-05", Only: OnlyAll}, "maxActive: 0 is not between 1 and 20"},
		{"maxActive over the cap", false, Request{From: "2026-03-04", To: "2026-03-05", Only: OnlyAll, MaxActive: 21}, "maxActive: 21 is not between 1 and 20"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, k := daily, days
			if c.hourly {
				p, k = hourly, hours
			}
			got, err := Range(p, c.req, k, now)
			if err != nil {
				var fe *FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v is not a FieldError", err)
				}
				if !strings.HasPrefix(err.Error(), c.want) {
					t.Fatalf("error %q, want it to start %q", err, c.want)
				}
				return
			}
			if s := periodsString(got); !strings.HasPrefix(s, c.want) {
				t.Fatalf("periods %q, want %q", s, c.want)
			}
			if c.name == "exactly the cap" && len(got) != MaxPeriods {
				t.Fatalf("%d periods, want %d", len(got), MaxPeriods)
			}
		})
	}
}

func TestPlanPeriod(t *testing.T) {
	p := runtest.Pipeline(t, bfDaily("  exclude: {weekends: true}\n"))
	weekdays := runtest.Pipeline(t, "pipeline: {id: bf}\nschedule: {cron: \"0 6 * * 1-5\"}\njob: {type: glue, config: {jobName: j}}\n")
	hourly := runtest.Pipeline(t, bfHourly)
	wed := schedule.Daily(schedule.Date{Year: 2026, Month: time.March, Day: 4})
	sat := schedule.Daily(schedule.Date{Year: 2026, Month: time.March, Day: 7})
	gap := schedule.HourlyPeriod(schedule.Date{Year: 2026, Month: time.March, Day: 8}, 2)
	ok := &run.Run{State: run.Completed, Outcome: run.OutcomeSucceeded}
	failed := &run.Run{State: run.FailedFinal, Outcome: run.OutcomeRetriesExhausted}
	going := &run.Run{State: run.Running}
	for _, c := range []struct {
		name     string
		only     Only
		existing *run.Run
		per      schedule.Period
		runs     bool
		why      string
	}{
		{"missing: no run", OnlyMissing, nil, wed, true, "no run yet"},
		{"missing: has a run", OnlyMissing, failed, wed, false, "it has a run (FAILED_FINAL, retries-exhausted)"},
		{"missing: succeeded", OnlyMissing, ok, wed, false, "it has a run (COMPLETED)"},
		{"failed: failed", OnlyFailed, failed, wed, true, "rerun: its run failed (FAILED_FINAL, retries-exhausted)"},
		{"failed: succeeded", OnlyFailed, ok, wed, false, "its run succeeded"},
		{"failed: never ran", OnlyFailed, nil, wed, false, "it never ran"},
		{"all: no run", OnlyAll, nil, wed, true, "no run yet"},
		{"all: succeeded", OnlyAll, ok, wed, true, "rerun: its run ended COMPLETED"},
		{"all: failed", OnlyAll, failed, wed, true, "rerun: its run ended FAILED_FINAL"},
		{"in progress is never touched", OnlyAll, going, wed, false, "a run is in progress (RUNNING)"},
		{"excluded weekend", OnlyAll, nil, sat, false, "2026-03-07 (Saturday) is excluded as a weekend (exclude.weekends)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs, why := PlanPeriod(p, c.per, c.only, c.existing)
			if runs != c.runs || !strings.HasPrefix(why, c.why) {
				t.Fatalf("PlanPeriod = %v %q, want %v %q", runs, why, c.runs, c.why)
			}
		})
	}
	if runs, why := PlanPeriod(weekdays, sat, OnlyMissing, nil); runs || why != "the cron never fires in this period" {
		t.Fatalf("a weekday cron on a Saturday: %v %q", runs, why)
	}
	if runs, _ := PlanPeriod(weekdays, wed, OnlyMissing, nil); !runs {
		t.Fatal("a weekday cron on a Wednesday is skipped")
	}
	if runs, why := PlanPeriod(hourly, gap, OnlyMissing, nil); runs || !strings.Contains(why, "does not exist in America/New_York") {
		t.Fatalf("the skipped hour: %v %q", runs, why)
	}
	plan := Plan(p, []schedule.Period{sat, wed}, OnlyMissing, func(per schedule.Period) *run.Run {
		if per == wed {
			return ok
		}
		return nil
	})
	if len(plan) != 2 || plan[0].Run || plan[1].Run || plan[1].Period != wed {
		t.Fatalf("Plan = %+v", plan)
	}
}

func TestNextBackfillStep(t *testing.T) {
	ps := func(states ...PeriodState) []Period {
		out := make([]Period, len(states))
		for i, s := range states {
			out[i] = Period{Period: "p", State: s}
		}
		return out
	}
	for _, c := range []struct {
		name      string
		ps        []Period
		maxActive int
		paused    bool
		step      Step
		index     int
	}{
		{"first pending", ps(PeriodPending, PeriodPending), 2, false, StepStart, 0},
		{"one active, room for another", ps(PeriodActive, PeriodPending, PeriodPending), 2, false, StepStart, 1},
		{"full", ps(PeriodActive, PeriodActive, PeriodPending), 2, false, StepWait, -1},
		{"skipped and ended periods free their place", ps(PeriodSkipped, PeriodSucceeded, PeriodFailed, PeriodActive, PeriodPending), 2, false, StepStart, 4},
		{"paused: no start", ps(PeriodPending), 2, true, StepWait, -1},
		{"nothing pending, one active", ps(PeriodSucceeded, PeriodActive), 2, false, StepWait, -1},
		{"all done", ps(PeriodSucceeded, PeriodSkipped, PeriodFailed), 2, false, StepComplete, -1},
		{"paused and all done: completes", ps(PeriodSucceeded), 1, true, StepComplete, -1},
		{"empty", nil, 1, false, StepComplete, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			step, i := NextStep(c.ps, c.maxActive, c.paused)
			if step != c.step || i != c.index {
				t.Fatalf("NextStep = %v %d, want %v %d", step, i, c.step, c.index)
			}
		})
	}
	c := CountPeriods(ps(PeriodPending, PeriodActive, PeriodActive, PeriodSkipped, PeriodSucceeded, PeriodFailed, PeriodFailed))
	if c != (Counts{Pending: 1, Active: 2, Skipped: 1, Succeeded: 1, Failed: 2}) {
		t.Fatalf("CountPeriods = %+v", c)
	}
}

func TestActivePeriodEnded(t *testing.T) {
	for _, c := range []struct {
		name  string
		r     *run.Run
		state PeriodState
		ended bool
	}{
		{"running", &run.Run{State: run.Running}, "", false},
		{"evaluating", &run.Run{State: run.Evaluating}, "", false},
		{"succeeded", &run.Run{State: run.Completed, Outcome: run.OutcomeSucceeded}, PeriodSucceeded, true},
		{"failed", &run.Run{State: run.FailedFinal, Outcome: run.OutcomeValidationExhausted}, PeriodFailed, true},
		{"gone", nil, PeriodFailed, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, _, ended := ActivePeriodEnded(c.r)
			if st != c.state || ended != c.ended {
				t.Fatalf("ActivePeriodEnded = %v %v, want %v %v", st, ended, c.state, c.ended)
			}
		})
	}
}
