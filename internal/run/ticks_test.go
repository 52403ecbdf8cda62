package run

import (
	"strings"
	"testing"

	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
)

func TestCronTick(t *testing.T) {
	p := mustPipeline(t, strings.Replace(basePipeline, "  trigger: {key: ready, check: exists}\n", "  cron: \"0 7 * * *\"\n", 1))
	hourly := mustPipeline(t, strings.Replace(basePipeline, "  trigger: {key: ready, check: exists}\n", "  cron: \"15 * * * *\"\n", 1))
	cases := []struct {
		name     string
		hourly   bool
		due, now time.Time
		per      string
		next     string
	}{
		{"on time", false, hm(7, 0), hm(7, 0), "2026-03-10", "2026-03-11T07:00"},
		{"processed late the same day", false, hm(7, 0), hm(9, 0), "2026-03-10", "2026-03-11T07:00"},
		{"processed two days late: no replay", false, hm(7, 0), hm(7, 0).Add(49 * time.Hour), "2026-03-10", "2026-03-13T07:00"},
		{"processed early (a clock behind): after the due time", false, hm(7, 0), hm(6, 59), "2026-03-10", "2026-03-11T07:00"},
		{"hourly", true, hm(7, 15), hm(7, 15), "2026-03-10T07", "2026-03-10T08:15"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pp := p
			if c.hourly {
				pp = hourly
			}
			per, next := CronTick(pp, c.due, c.now)
			if per.String() != c.per || next.UTC().Format("2006-01-02T15:04") != c.next {
				t.Fatalf("CronTick = %s, %s; want %s, %s", per, next.UTC().Format("2006-01-02T15:04"), c.per, c.next)
			}
		})
	}
}

func TestConfigTimersAndPeriodTick(t *testing.T) {
	const job = "job: {type: glue, config: {jobName: j}}\n"
	cases := []struct {
		name          string
		doc           string
		cron, periodA string // "-" when not set
	}{
		{"cron and an absolute deadline", "pipeline: {id: p1}\nschedule: {cron: \"0 7 * * *\"}\nsla: {deadline: \"10:00\"}\n" + job, "2026-03-11T07:00", "2026-03-11T00:00"},
		{"trigger with a relative SLA only", "pipeline: {id: p1}\nschedule:\n  trigger: {key: ready, check: exists}\nsla: {maxDuration: 2h}\n" + job, "-", "-"},
		{"hourly deadline", "pipeline: {id: p1}\nschedule:\n  trigger: {key: ready, check: exists}\nsla: {deadline: \":30\"}\n" + job, "-", "2026-03-10T09:00"},
		{"dry-run: no period timer", "pipeline: {id: p1}\ndryRun: true\nschedule:\n  trigger: {key: ready, check: exists}\nsla: {deadline: \"10:00\"}\n" + job, "-", "-"},
	}
	f := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02T15:04")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustPipeline(t, c.doc)
			cronAt, periodAt := ConfigTimers(p, hm(8, 0))
			if f(cronAt) != c.cron || f(periodAt) != c.periodA {
				t.Fatalf("ConfigTimers = %s, %s; want %s, %s", f(cronAt), f(periodAt), c.cron, c.periodA)
			}
			if NeedsPeriodTimer(p) != (c.periodA != "-") {
				t.Fatalf("NeedsPeriodTimer = %v", NeedsPeriodTimer(p))
			}
			if periodAt.IsZero() {
				return
			}
			per, next := PeriodTick(p, periodAt)
			if !per.Start(p.Schedule.Location).Equal(periodAt) || !next.Equal(per.Next().Start(p.Schedule.Location)) || !next.After(periodAt) {
				t.Fatalf("PeriodTick(%s) = %s, %s", f(periodAt), per, f(next))
			}
		})
	}
}

func TestFirstLoadedAt(t *testing.T) {
	daily := mustPipeline(t, strings.Replace(basePipeline, "  trigger: {key: ready, check: exists}\n", "  cron: \"0 7 * * *\"\n", 1))
	later := mustPipeline(t, strings.Replace(basePipeline, "  trigger: {key: ready, check: exists}\n", "  cron: \"0 9 * * *\"\n", 1))
	trig := mustPipeline(t, basePipeline)
	prev, now := hm(1, 0), hm(8, 0)
	cases := []struct {
		name      string
		exists    bool
		old, next string
		want      time.Time
	}{
		{"first load", false, "", "daily", now},
		{"same cron", true, "daily", "daily", prev},
		{"cron changed", true, "daily", "later", now},
		{"cron added", true, "trig", "daily", now},
		{"cron removed", true, "daily", "trig", now},
		{"no cron either side", true, "trig", "trig", prev},
		{"the old version no longer parses", true, "", "later", prev},
	}
	pipes := map[string]*pipeline.Pipeline{"daily": daily, "later": later, "trig": trig}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FirstLoadedAt(c.exists, prev, pipes[c.old], pipes[c.next], now); !got.Equal(c.want) {
				t.Fatalf("FirstLoadedAt = %v, want %v", got, c.want)
			}
		})
	}
	for s, want := range map[State]Step{Evaluating: StepEvaluate, Triggering: StepTrigger, Running: StepPoll, Completed: StepNone, FailedFinal: StepNone} {
		if got := StepOf(s); got != want {
			t.Errorf("StepOf(%s) = %q, want %q", s, got, want)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	for _, c := range []struct {
		name    string
		exists  bool
		stored  string
		removed bool
		want    ConfigAction
	}{
		{"first load", false, "", false, ConfigNew},
		{"a change", true, "old", false, ConfigNew},
		{"a change while removed", true, "old", true, ConfigNew},
		{"the running version", true, "h", false, ConfigKeep},
		{"the removed version back", true, "h", true, ConfigRestore},
	} {
		if got := LoadConfig(c.exists, c.stored, c.removed, "h"); got != c.want {
			t.Errorf("%s: LoadConfig = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNeedsCronTimer(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want bool
	}{
		{"a cron schedule", strings.Replace(basePipeline, "  trigger: {key: ready, check: exists}\n", "  cron: \"0 7 * * *\"\n", 1), true},
		{"a trigger only", basePipeline, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := NeedsCronTimer(mustPipeline(t, c.doc)); got != c.want {
				t.Fatalf("NeedsCronTimer = %v, want %v", got, c.want)
			}
		})
	}
}
