package run

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
)

func TestExclusionReasonNamesTheRule(t *testing.T) {
	opt := pipeline.Options{Calendars: map[string]schedule.Calendar{
		"holidays": {Name: "holidays", Dates: []schedule.Date{{Year: 2026, Month: time.December, Day: 25}}},
	}}
	p, err := pipeline.ParsePipeline("test.yaml", []byte(`
pipeline: {id: p1}
schedule:
  trigger: {key: ready, check: exists}
  exclude: {weekends: true, days: [wednesday, sunday], dates: ["2026-03-09", "2026-03-15"], calendar: holidays}
job: {type: glue, config: {jobName: j}}
`), opt)
	if err != nil {
		t.Fatal(err)
	}
	day := func(m time.Month, d int) schedule.Period {
		return schedule.Daily(schedule.Date{Year: 2026, Month: m, Day: d})
	}
	cases := []struct {
		name string
		per  schedule.Period
		want string
	}{
		{"a weekend", day(time.March, 14), "2026-03-14 (Saturday) is excluded as a weekend (exclude.weekends)"},
		{"a weekday of exclude.days", day(time.March, 11), "2026-03-11 (Wednesday) is excluded on Wednesdays (exclude.days)"},
		{"a date of exclude.dates", day(time.March, 9), "2026-03-09 (Monday) is excluded by date (exclude.dates)"},
		{"a date of the named calendar", day(time.December, 25), "2026-12-25 (Friday) is excluded by calendar holidays (exclude.calendar)"},
		{"every rule that applies", day(time.March, 15), "2026-03-15 (Sunday) is excluded as a weekend (exclude.weekends) and on Sundays (exclude.days) and by date (exclude.dates)"},
		{"an hour of an excluded date", schedule.HourlyPeriod(schedule.Date{Year: 2026, Month: time.March, Day: 9}, 7), "2026-03-09 (Monday) is excluded by date (exclude.dates)"},
		{"not excluded", day(time.March, 10), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ExclusionReason(p, c.per); got != c.want {
				t.Fatalf("ExclusionReason = %q\nwant             %q", got, c.want)
			}
		})
	}
}

func TestPassedMessageSaysWhichRulesPassed(t *testing.T) {
	res := func(key string, op rule.Op, field string, passed bool) rule.Result {
		return rule.Result{Rule: rule.Rule{Key: key, Op: op, Field: field}, Passed: passed}
	}
	results := []rule.Result{res("ready", rule.Exists, "", false), res("rows", rule.GTE, "count", true), res("audit", rule.Exists, "", true)}
	cases := []struct {
		name string
		out  rule.Outcome
		want string
	}{
		{"ALL", rule.Outcome{Mode: rule.All, Passed: true, Results: []rule.Result{res("ready", rule.Exists, "", true)}}, "all validation rules passed"},
		{"ANY names the rules that passed", rule.Outcome{Mode: rule.Any, Passed: true, Results: results}, "validation passed (ANY mode, 2 of 3 rules): rows gte count, audit exists passed"},
		{"ANY with one rule passing", rule.Outcome{Mode: rule.Any, Passed: true, Results: results[:2]}, "validation passed (ANY mode, 1 of 2 rules): rows gte count passed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := PassedMessage(c.out); got != c.want {
				t.Fatalf("PassedMessage = %q\nwant          %q", got, c.want)
			}
		})
	}
}

func TestRetriesUsedCountsOnlyRetries(t *testing.T) {
	cases := []struct {
		name   string
		ledger []string
		want   int
	}{
		{"empty", nil, 0},
		{"retries", []string{LedgerJobRetry, LedgerJobRetry}, 2},
		{"reruns are not retries", []string{ReasonManual, ReasonLateData, ReasonDrift, "backfill"}, 0},
		{"mixed", []string{LedgerJobRetry, ReasonManual, LedgerJobRetry}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := RetriesUsed(c.ledger); got != c.want {
				t.Fatalf("RetriesUsed = %d, want %d", got, c.want)
			}
		})
	}
}
