package backfill

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/schedule"
)

func TestAdmit(t *testing.T) {
	cases := []struct {
		name    string
		stored  []Stored
		id      string
		running int
	}{
		{"the first backfill is 1", nil, "1", -1},
		{"one past the greatest, in any order", []Stored{{"2", Completed}, {"10", Cancelled}, {"9", Completed}}, "11", -1},
		{"ids that are not numbers are passed over", []Stored{{"x", Completed}, {"1", Completed}}, "2", -1},
		{"a running backfill refuses a second", []Stored{{"1", Completed}, {"2", Running}}, "3", 1},
		{"cancelled and completed ones do not", []Stored{{"1", Cancelled}, {"2", Completed}}, "3", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, running := Admit(c.stored)
			if id != c.id || running != c.running {
				t.Fatalf("Admit = %q, %d; want %q, %d", id, running, c.id, c.running)
			}
			if got := RunningOf(c.stored); got != c.running {
				t.Fatalf("RunningOf = %d, want %d", got, c.running)
			}
		})
	}
}

func TestBegin(t *testing.T) {
	day := func(d int) schedule.Period {
		return schedule.Daily(schedule.Date{Year: 2026, Month: time.March, Day: d})
	}
	planned := []PlannedPeriod{{Period: day(2), Run: true}, {Period: day(3)}, {Period: day(4), Run: true}}
	cases := []struct {
		name     string
		planned  []PlannedPeriod
		reverse  bool
		from, to string
		periods  string
		wouldRun int
	}{
		{"oldest first", planned, false, "2026-03-02", "2026-03-04", "2026-03-02 2026-03-03 2026-03-04", 2},
		{"newest first names the range earliest first", []PlannedPeriod{planned[2], planned[1], planned[0]}, true,
			"2026-03-02", "2026-03-04", "2026-03-04 2026-03-03 2026-03-02", 2},
		{"one period", planned[1:2], false, "2026-03-03", "2026-03-03", "2026-03-03", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := Begin(c.planned, c.reverse)
			var pers []string
			for _, p := range b.Periods {
				if p.State != PeriodPending || p.Reason != "" {
					t.Fatalf("period %+v is not pending", p)
				}
				pers = append(pers, p.Period)
			}
			if b.From != c.from || b.To != c.to || strings.Join(pers, " ") != c.periods || b.WouldRun != c.wouldRun {
				t.Fatalf("Begin = %s..%s [%s] %d; want %s..%s [%s] %d", b.From, b.To, strings.Join(pers, " "), b.WouldRun, c.from, c.to, c.periods, c.wouldRun)
			}
		})
	}
}

// statesString renders periods as "state/reason" in order.
func statesString(ps []Period) string {
	var out []string
	for _, p := range ps {
		s := string(p.State)
		if p.Reason != "" {
			s += "/" + p.Reason
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestFire(t *testing.T) {
	now := runtest.HM(12, 0)
	pend := func(per string) Period { return Period{Period: per, State: PeriodPending} }
	act := func(per string) Period { return Period{Period: per, State: PeriodActive} }
	done := &run.Run{State: run.Completed}
	going := &run.Run{State: run.Running}
	cases := []struct {
		name      string
		periods   []Period
		runs      map[string]*run.Run
		maxActive int
		paused    bool
		step      Step
		index     int
		wake      time.Time
		changed   bool
		states    string
	}{
		{"room to start: the first pending, at once", []Period{act("a"), pend("b"), pend("c")}, map[string]*run.Run{"a": going}, 2, false,
			StepStart, 1, now, true, "active pending pending"},
		{"maxActive reached: wait a poll", []Period{act("a"), act("b"), pend("c")}, map[string]*run.Run{"a": going, "b": going}, 2, false,
			StepWait, -1, now.Add(Poll), false, "active active pending"},
		{"an ended run makes room", []Period{act("a"), act("b"), pend("c")}, map[string]*run.Run{"a": done, "b": going}, 2, false,
			StepStart, 2, now, true, "succeeded active pending"},
		{"a gone run fails its period", []Period{act("a"), pend("b")}, nil, 1, false,
			StepStart, 1, now, true, "failed/its run is gone pending"},
		{"paused: nothing starts, an ended run is still judged", []Period{act("a"), pend("b")}, map[string]*run.Run{"a": done}, 2, true,
			StepWait, -1, now.Add(Poll), true, "succeeded pending"},
		{"nothing pending or active: complete, the timer goes", []Period{{Period: "a", State: PeriodSkipped}, act("b")}, map[string]*run.Run{"b": done}, 2, false,
			StepComplete, -1, time.Time{}, true, "skipped succeeded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := statesString(c.periods)
			f := Fire(c.periods, c.runs, c.maxActive, c.paused, now)
			if f.Step != c.step || f.Index != c.index || !f.WakeAt.Equal(c.wake) || f.Changed != c.changed || statesString(f.Periods) != c.states {
				t.Fatalf("Fire = %v %d wake %s changed %v [%s]; want %v %d wake %s changed %v [%s]",
					f.Step, f.Index, f.WakeAt.Format(time.Kitchen), f.Changed, statesString(f.Periods), c.step, c.index, c.wake.Format(time.Kitchen), c.changed, c.states)
			}
			if statesString(c.periods) != before {
				t.Fatal("Fire modified the stored periods")
			}
		})
	}
}

func TestStarted(t *testing.T) {
	cases := []struct {
		name            string
		dryRun, started bool
		state           PeriodState
		reason          string
	}{
		{"started", false, true, PeriodActive, "no run"},
		{"a rerun refused on the commit's facts", false, false, PeriodSkipped, "not started: no run"},
		{"dry-run records what it would do", true, false, PeriodSkipped, "the pipeline is in dry-run: it recorded what it would do (no run)"},
		{"dry-run even with a run in the batch", true, true, PeriodSkipped, "the pipeline is in dry-run: it recorded what it would do (no run)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if st, why := Started(c.dryRun, c.started, "no run"); st != c.state || why != c.reason {
				t.Fatalf("Started = %s %q, want %s %q", st, why, c.state, c.reason)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	for _, c := range []struct {
		from, to State
		ok       bool
	}{{Running, Cancelled, true}, {Completed, Completed, false}, {Cancelled, Cancelled, false}} {
		if st, ok := Cancel(c.from); st != c.to || ok != c.ok {
			t.Errorf("Cancel(%s) = %s %v, want %s %v", c.from, st, ok, c.to, c.ok)
		}
	}
}

func TestWakes(t *testing.T) {
	bf := func(st run.State) run.Run { return run.Run{State: st, Cause: run.CauseBackfill} }
	ended := bf(run.Completed)
	running := bf(run.Running)
	cron := run.Run{State: run.Completed, Cause: run.CauseCron}
	cases := []struct {
		name string
		prev *run.Run
		r    run.Run
		want bool
	}{
		{"a backfilled run ends", &running, ended, true},
		{"a new backfilled run that ends at once", nil, bf(run.FailedFinal), true},
		{"still running", &running, running, false},
		{"ended already", &ended, ended, false},
		{"not a backfill's run", &running, cron, false},
	}
	for _, c := range cases {
		if got := WakesOnEnd(c.prev, c.r); got != c.want {
			t.Errorf("WakesOnEnd %s = %v, want %v", c.name, got, c.want)
		}
	}
	now := runtest.HM(12, 0)
	for _, c := range []struct {
		due  time.Time
		want bool
	}{{now.Add(Poll), true}, {now, false}, {now.Add(-time.Minute), false}} {
		if got := WakesOnResume(c.due, now); got != c.want {
			t.Errorf("WakesOnResume(due %s) = %v, want %v", c.due.Format(time.Kitchen), got, c.want)
		}
	}
}

func TestRunsOf(t *testing.T) {
	day := func(d int) schedule.Period {
		return schedule.Daily(schedule.Date{Year: 2026, Month: time.March, Day: d})
	}
	r := func(d int, sched string) run.Run {
		return run.Run{Key: run.Key{PipelineID: "p", ScheduleID: sched, Period: day(d).String()}}
	}
	newestFirst := []schedule.Period{day(4), day(3), day(2)}
	if got := RangeStart(newestFirst); got != "2026-03-02" {
		t.Fatalf("RangeStart = %s, want the earliest period", got)
	}
	cases := []struct {
		name string
		runs []run.Run
		want string // period=schedule, in period order
	}{
		{"own schedule", []run.Run{r(2, "cron"), r(3, "cron")}, "2026-03-02=cron 2026-03-03=cron"},
		{"the other schedule stands in", []run.Run{r(3, "stream")}, "2026-03-03=stream"},
		{"own schedule first in the list", []run.Run{r(3, "cron"), r(3, "stream")}, "2026-03-03=cron"},
		{"own schedule later in the list", []run.Run{r(3, "stream"), r(3, "cron")}, "2026-03-03=cron"},
		{"outside the range", []run.Run{r(1, "cron"), r(5, "cron"), r(4, "cron")}, "2026-03-04=cron"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := RunsOf(newestFirst, c.runs, "cron")
			var out []string
			for d := 1; d <= 5; d++ {
				if x, ok := got[day(d).String()]; ok {
					out = append(out, x.Period+"="+x.ScheduleID)
				}
			}
			if s := strings.Join(out, " "); s != c.want {
				t.Fatalf("RunsOf = %s, want %s", s, c.want)
			}
		})
	}
}

func TestStartOf(t *testing.T) {
	live := runtest.Pipeline(t, runtest.Base)
	dry := runtest.Pipeline(t, "dryRun: true\n"+runtest.Base)
	wed := schedule.Daily(schedule.Date{Year: 2026, Month: time.March, Day: 4})
	failed := &run.Run{State: run.FailedFinal, Outcome: run.OutcomeRetriesExhausted}
	going := &run.Run{State: run.Running}
	cases := []struct {
		name     string
		dry      bool
		only     Only
		existing *run.Run
		start    Start
		marked   bool
		why      string
	}{
		{"no run: a new one, marked", false, OnlyMissing, nil, StartNew, true, "no run yet"},
		{"an ended run: a rerun, marked", false, OnlyFailed, failed, StartRerun, true, "rerun: its run failed (FAILED_FINAL, retries-exhausted)"},
		{"in progress: skipped, not marked", false, OnlyAll, going, StartSkip, false, "a run is in progress (RUNNING)"},
		{"not selected: skipped", false, OnlyMissing, failed, StartSkip, false, "it has a run (FAILED_FINAL, retries-exhausted); --only failed or all reruns it"},
		{"dry-run: a would-be run, never marked", true, OnlyMissing, nil, StartNew, false, "no run yet"},
		{"dry-run rerun, never marked", true, OnlyAll, failed, StartRerun, false, "rerun: its run ended FAILED_FINAL, retries-exhausted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := live
			if c.dry {
				p = dry
			}
			s, marked, why := StartOf(p, wed, c.only, c.existing)
			if s != c.start || marked != c.marked || why != c.why {
				t.Fatalf("StartOf = %v %v %q, want %v %v %q", s, marked, why, c.start, c.marked, c.why)
			}
		})
	}
}

func TestWakeAt(t *testing.T) {
	now := time.Date(2026, 3, 10, 10, 20, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	for _, c := range []struct {
		name string
		read *time.Time
		want time.Time
	}{
		{"no timer stored: now", nil, now},
		{"due later (a Poll away): now", at(5 * time.Minute), now},
		{"due now (a firing may be racing): just before", at(0), now.Add(-time.Nanosecond)},
		{"overdue: just before what was read", at(-time.Minute), now.Add(-time.Minute - time.Nanosecond)},
	} {
		got := WakeAt(c.read, now)
		if !got.Equal(c.want) {
			t.Errorf("%s: WakeAt = %s, want %s", c.name, got, c.want)
		}
		if c.read != nil && !got.Before(*c.read) {
			t.Errorf("%s: WakeAt %s is not earlier than the due time read %s", c.name, got, *c.read)
		}
	}
}
