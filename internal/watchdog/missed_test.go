package watchdog

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

func TestMissedSchedules(t *testing.T) {
	daily := "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\"}\n" + job
	evaluating := func(k run.Key) run.Run { return run.Run{Key: k, State: run.Evaluating} }
	cron := func(period string) run.Key { return key("p", "cron", period) }
	cases := []struct {
		name        string
		doc         string
		now         string
		firstLoaded string // default: long ago
		paused      bool
		pauses      []pause.Window
		runs        []string // periods with a run
		markers     map[string]string
		want        []string
		expected    string // expectedTime of the first finding
		message     string // its message, where given
	}{
		{name: "missed after the grace minute", doc: daily, now: "2026-03-10T06:01:00Z", runs: []string{"2026-03-09"},
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-10"}, expected: "2026-03-10T06:00:00Z",
			message: "missed schedule for p: no run for 2026-03-10 by 2026-03-10 06:00 UTC"},
		{name: "within the grace minute", doc: daily, now: "2026-03-10T06:00:59Z", runs: []string{"2026-03-09"}},
		{name: "the period has a run", doc: daily, now: "2026-03-10T09:00:00Z", runs: []string{"2026-03-09", "2026-03-10"}},
		{name: "deduplicated by its marker", doc: daily, now: "2026-03-10T09:00:00Z", runs: []string{"2026-03-09"},
			markers: map[string]string{"2026-03-10": run.MarkerScheduleMissed}},
		{name: "every missed period within the lookback, once each", doc: daily, now: "2026-03-10T06:01:00Z",
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-09", "SCHEDULE_MISSED p/cron/2026-03-10"}},
		{name: "schedule.time later than the tick: not yet due", doc: "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\", time: \"09:00\"}\n" + job,
			now: "2026-03-10T08:59:00Z", runs: []string{"2026-03-09"}},
		{name: "schedule.time later than the tick: due", doc: "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\", time: \"09:00\"}\n" + job,
			now: "2026-03-10T09:01:00Z", runs: []string{"2026-03-09"},
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-10"}, expected: "2026-03-10T09:00:00Z"},
		{name: "schedule.time before the tick: the tick is the expected start", doc: "pipeline: {id: p}\nschedule: {cron: \"0 10 * * *\", time: \"09:00\"}\n" + job,
			now: "2026-03-10T09:30:00Z", runs: []string{"2026-03-08", "2026-03-09"}},
		{name: "schedule.time before the tick: due after the tick", doc: "pipeline: {id: p}\nschedule: {cron: \"0 10 * * *\", time: \"09:00\"}\n" + job,
			now: "2026-03-10T10:01:00Z", runs: []string{"2026-03-09"},
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-10"}, expected: "2026-03-10T10:00:00Z"},
		{name: "excluded weekend day", doc: "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\", exclude: {weekends: true}}\n" + job,
			now: "2026-03-14T07:00:00Z", runs: []string{"2026-03-13"}},
		{name: "excluded date, the other day is reported", doc: "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\", exclude: {dates: [2026-03-10]}}\n" + job,
			now: "2026-03-10T07:00:00Z", want: []string{"SCHEDULE_MISSED p/cron/2026-03-09"}},
		{name: "paused pipeline", doc: daily, now: "2026-03-10T07:00:00Z", paused: true},
		{name: "tick inside an earlier pause window", doc: daily, now: "2026-03-10T07:00:00Z", runs: []string{"2026-03-10"},
			pauses: []pause.Window{{From: time.Date(2026, 3, 9, 5, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 9, 8, 0, 0, 0, time.UTC)}}},
		{name: "tick outside the pause window", doc: daily, now: "2026-03-10T07:00:00Z", runs: []string{"2026-03-10"},
			pauses: []pause.Window{{From: time.Date(2026, 3, 9, 7, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 9, 8, 0, 0, 0, time.UTC)}},
			want:   []string{"SCHEDULE_MISSED p/cron/2026-03-09"}},
		{name: "dry-run pipeline", doc: "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\", trigger: {key: up, check: exists}}\n" + job + "dryRun: true\n", now: "2026-03-10T07:00:00Z"},
		{name: "period projected while in dry-run", doc: daily, now: "2026-03-10T07:00:00Z", runs: []string{"2026-03-09"},
			markers: map[string]string{"2026-03-10": run.MarkerDryRun}},
		{name: "first loaded after the tick", doc: daily, now: "2026-03-10T07:00:00Z", firstLoaded: "2026-03-10T06:00:30Z"},
		{name: "first loaded at the tick (never fired)", doc: daily, now: "2026-03-10T07:00:00Z", firstLoaded: "2026-03-10T06:00:00Z"},
		{name: "first loaded just before the tick", doc: daily, now: "2026-03-10T07:00:00Z", firstLoaded: "2026-03-10T05:59:00Z",
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-10"}},
		{name: "hourly cron: one finding per hour, not per tick", doc: "pipeline: {id: p}\nschedule: {cron: \"*/15 * * * *\"}\n" + job,
			now: "2026-03-10T10:01:00Z", firstLoaded: "2026-03-10T08:50:00Z",
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-10T09", "SCHEDULE_MISSED p/cron/2026-03-10T10"}, expected: "2026-03-10T09:00:00Z"},
		{name: "hourly cron: hour with a run is fine", doc: "pipeline: {id: p}\nschedule: {cron: \"*/15 * * * *\"}\n" + job,
			now: "2026-03-10T10:01:00Z", firstLoaded: "2026-03-10T08:50:00Z", runs: []string{"2026-03-10T09"},
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-10T10"}},
		{name: "hourly cron: first tick after the load starts the hour", doc: "pipeline: {id: p}\nschedule: {cron: \"*/15 * * * *\"}\n" + job,
			now: "2026-03-10T09:46:00Z", firstLoaded: "2026-03-10T09:20:00Z",
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-10T09"}, expected: "2026-03-10T09:30:00Z"},
		{name: "New York: the period is the local date, not the UTC one", doc: "pipeline: {id: p}\nschedule: {cron: \"0 22 * * *\", timezone: America/New_York}\n" + job,
			now: "2026-03-11T02:01:00Z", firstLoaded: "2026-03-10T12:00:00Z",
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-10"}, expected: "2026-03-11T02:00:00Z"},
		{name: "New York spring forward: 06:00 EDT is 10:00Z", doc: "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\", timezone: America/New_York}\n" + job,
			now: "2026-03-08T10:01:00Z", firstLoaded: "2026-03-07T12:00:00Z",
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-08"}, expected: "2026-03-08T10:00:00Z"},
		{name: "New York spring forward: schedule.time in local time", doc: "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\", time: \"07:30\", timezone: America/New_York}\n" + job,
			now: "2026-03-08T11:29:00Z", firstLoaded: "2026-03-07T12:00:00Z"},
		{name: "New York spring forward: schedule.time passed", doc: "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\", time: \"07:30\", timezone: America/New_York}\n" + job,
			now: "2026-03-08T11:31:00Z", firstLoaded: "2026-03-07T12:00:00Z",
			want: []string{"SCHEDULE_MISSED p/cron/2026-03-08"}, expected: "2026-03-08T11:30:00Z"},
		{name: "New York fall back: both passes of 01:00 are one hourly period", doc: "pipeline: {id: p}\nschedule: {cron: \"0 * * * *\", timezone: America/New_York}\n" + job,
			now: "2026-11-01T07:30:00Z", firstLoaded: "2026-11-01T04:30:00Z",
			want: []string{"SCHEDULE_MISSED p/cron/2026-11-01T01", "SCHEDULE_MISSED p/cron/2026-11-01T02"}, expected: "2026-11-01T05:00:00Z"},
		{name: "New York fall back: the repeated hour has its run", doc: "pipeline: {id: p}\nschedule: {cron: \"0 * * * *\", timezone: America/New_York}\n" + job,
			now: "2026-11-01T07:30:00Z", firstLoaded: "2026-11-01T05:30:00Z", runs: []string{"2026-11-01T01"},
			want: []string{"SCHEDULE_MISSED p/cron/2026-11-01T02"}, expected: "2026-11-01T07:00:00Z"},
		{name: "recovered: the late run showed up", doc: daily, now: "2026-03-10T09:00:00Z", runs: []string{"2026-03-09", "2026-03-10"},
			markers: map[string]string{"2026-03-09": run.MarkerScheduleMissed},
			want:    []string{"SCHEDULE_RECOVERED p/cron/2026-03-09"}},
		{name: "recovery reported once", doc: daily, now: "2026-03-10T09:00:00Z", runs: []string{"2026-03-09", "2026-03-10"},
			markers: map[string]string{"2026-03-09": run.MarkerScheduleMissed + "," + run.MarkerRecovered}},
		{name: "missed and still no run: silent", doc: daily, now: "2026-03-10T09:00:00Z", runs: []string{"2026-03-10"},
			markers: map[string]string{"2026-03-09": run.MarkerScheduleMissed}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := at(t, c.now)
			wp := loaded(parse(t, c.doc))
			if c.firstLoaded != "" {
				wp.FirstLoadedAt = at(t, c.firstLoaded)
			}
			wp.Paused, wp.Pauses = c.paused, c.pauses
			s := snap(now, wp)
			for _, per := range c.runs {
				s.addRun(evaluating(cron(per)))
			}
			for per, kinds := range c.markers {
				for _, kind := range splitComma(kinds) {
					s.addMarker(cron(per), kind, now.Add(-time.Hour))
				}
			}
			fs := runCheck(t, CheckMissedSchedules, s)
			expect(t, fs, c.want...)
			for _, f := range fs {
				wantMarker := run.MarkerScheduleMissed
				if f.Event == "SCHEDULE_RECOVERED" {
					wantMarker = run.MarkerRecovered
				}
				if f.Marker != wantMarker {
					t.Errorf("%s: marker = %q, want %q", f.Event, f.Marker, wantMarker)
				}
			}
			if c.expected != "" && len(fs) > 0 {
				if got := detailString(fs[0], "expectedTime"); got != c.expected {
					t.Errorf("expectedTime = %s, want %s", got, c.expected)
				}
				if c.message != "" && fs[0].Message != c.message {
					t.Errorf("message = %q, want %q", fs[0].Message, c.message)
				}
			}
		})
	}
}

func TestScheduleNotRecoveredByDeadlineClose(t *testing.T) {
	now := at(t, "2026-03-10T12:00:00Z")
	p := parse(t, "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\", trigger: {key: up, check: exists, deadline: \"10:00\"}}\n"+job)
	k := key("p", "cron", "2026-03-10")
	s := snap(now, loaded(p)).addRun(run.Close(k, 1, now.Add(-time.Hour))).addRun(run.Run{Key: key("p", "cron", "2026-03-09"), State: run.Completed})
	s.addMarker(k, run.MarkerScheduleMissed, now.Add(-5*time.Hour))
	expect(t, runCheck(t, CheckMissedSchedules, s))
	// A rerun reopens the closed period: now it recovers.
	r := s.Runs[k]
	r.State, r.Outcome, r.Generation = run.Evaluating, run.OutcomeNone, 1
	s.addRun(r)
	fs := runCheck(t, CheckMissedSchedules, s)
	expect(t, fs, "SCHEDULE_RECOVERED p/cron/2026-03-10")
	if len(fs) == 1 && detailString(fs[0], "kind") != "cron" {
		t.Errorf("kind = %q, want cron", detailString(fs[0], "kind"))
	}
}

func TestMissedInclusionDates(t *testing.T) {
	withTime := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: equals, field: status, value: ready}, include: {dates: [2026-03-10, 2026-03-12]}, time: \"09:00\"}\n" + job
	noTime := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: equals, field: status, value: ready}, include: {dates: [2026-03-10]}}\n" + job
	type sens struct {
		key, status, changed string
	}
	cases := []struct {
		name        string
		doc         string
		now         string
		firstLoaded string
		paused      bool
		runs        []string
		sensors     []sens
		markers     map[string]string
		want        []string
		expected    string
		message     string
	}{
		{name: "inclusion date passed with no run", doc: withTime, now: "2026-03-10T09:01:00Z",
			want: []string{"IRREGULAR_SCHEDULE_MISSED p/stream/2026-03-10"}, expected: "2026-03-10T09:00:00Z",
			message: "missed inclusion date for p: no run for 2026-03-10 by 2026-03-10 09:00 UTC"},
		{name: "within the grace minute", doc: withTime, now: "2026-03-10T09:00:30Z"},
		{name: "not an inclusion date", doc: withTime, now: "2026-03-11T12:00:00Z", runs: []string{"2026-03-10"}},
		{name: "no schedule.time: due at the end of the date", doc: noTime, now: "2026-03-10T23:59:00Z"},
		{name: "no schedule.time: missed after midnight", doc: noTime, now: "2026-03-11T00:01:00Z",
			want: []string{"IRREGULAR_SCHEDULE_MISSED p/stream/2026-03-10"}, expected: "2026-03-11T00:00:00Z"},
		{name: "the date has a run", doc: withTime, now: "2026-03-10T12:00:00Z", runs: []string{"2026-03-10"}},
		{name: "an hourly run of the date counts", doc: withTime, now: "2026-03-10T12:00:00Z", runs: []string{"2026-03-10T07"}},
		{name: "deduplicated", doc: withTime, now: "2026-03-10T12:00:00Z", markers: map[string]string{"2026-03-10": run.MarkerIrregularMissed}},
		{name: "excluded date", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, include: {dates: [2026-03-10]}, exclude: {dates: [2026-03-10]}, time: \"09:00\"}\n" + job,
			now: "2026-03-10T12:00:00Z"},
		{name: "trigger data waiting: left to trigger-reconciliation", doc: withTime, now: "2026-03-10T12:00:00Z",
			sensors: []sens{{"up", "ready", "2026-03-10T08:00:00Z"}}},
		{name: "trigger data that does not satisfy the condition", doc: withTime, now: "2026-03-10T12:00:00Z",
			sensors: []sens{{"up", "late", "2026-03-10T08:00:00Z"}},
			want:    []string{"IRREGULAR_SCHEDULE_MISSED p/stream/2026-03-10"}},
		{name: "paused", doc: withTime, now: "2026-03-10T12:00:00Z", paused: true},
		{name: "dry-run", doc: withTime + "dryRun: true\n", now: "2026-03-10T12:00:00Z"},
		{name: "first loaded after the expected time", doc: withTime, now: "2026-03-10T12:00:00Z", firstLoaded: "2026-03-10T09:30:00Z"},
		{name: "only dates within the lookback", doc: withTime, now: "2026-03-12T10:00:00Z",
			want: []string{"IRREGULAR_SCHEDULE_MISSED p/stream/2026-03-12"}},
		{name: "two dates within the lookback", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, include: {dates: [2026-03-09, 2026-03-10]}, time: \"09:00\"}\n" + job,
			now:  "2026-03-10T09:30:00Z",
			want: []string{"IRREGULAR_SCHEDULE_MISSED p/stream/2026-03-09", "IRREGULAR_SCHEDULE_MISSED p/stream/2026-03-10"}},
		{name: "New York: 09:00 EDT is 13:00Z, not yet", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, include: {dates: [2026-03-10]}, time: \"09:00\", timezone: America/New_York}\n" + job,
			now: "2026-03-10T12:59:00Z"},
		{name: "New York: 09:00 EDT passed", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, include: {dates: [2026-03-10]}, time: \"09:00\", timezone: America/New_York}\n" + job,
			now: "2026-03-10T13:01:00Z", want: []string{"IRREGULAR_SCHEDULE_MISSED p/stream/2026-03-10"}, expected: "2026-03-10T13:00:00Z"},
		{name: "New York, no time: end of the local date", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, include: {dates: [2026-03-10]}, timezone: America/New_York}\n" + job,
			now: "2026-03-11T04:01:00Z", want: []string{"IRREGULAR_SCHEDULE_MISSED p/stream/2026-03-10"}, expected: "2026-03-11T04:00:00Z"},
		{name: "recovered", doc: withTime, now: "2026-03-10T12:00:00Z", runs: []string{"2026-03-10"},
			markers: map[string]string{"2026-03-10": run.MarkerIrregularMissed}, want: []string{"SCHEDULE_RECOVERED p/stream/2026-03-10"}},
		{name: "recovered once", doc: withTime, now: "2026-03-10T12:00:00Z", runs: []string{"2026-03-10"},
			markers: map[string]string{"2026-03-10": run.MarkerIrregularMissed + "," + run.MarkerRecovered}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := at(t, c.now)
			wp := loaded(parse(t, c.doc))
			if c.firstLoaded != "" {
				wp.FirstLoadedAt = at(t, c.firstLoaded)
			}
			wp.Paused = c.paused
			s := snap(now, wp)
			for _, per := range c.runs {
				s.addRun(run.Run{Key: key("p", "stream", per), State: run.Completed})
			}
			for _, x := range c.sensors {
				s.addSensor("p", x.key, at(t, x.changed), map[string]sensor.Value{"status": str(x.status)})
			}
			for per, kinds := range c.markers {
				for _, kind := range splitComma(kinds) {
					s.addMarker(key("p", "stream", per), kind, now.Add(-time.Hour))
				}
			}
			fs := runCheck(t, CheckMissedInclusionDates, s)
			expect(t, fs, c.want...)
			for _, f := range fs {
				if f.Event == "SCHEDULE_RECOVERED" {
					if f.Marker != run.MarkerRecovered || detailString(f, "kind") != "inclusion" {
						t.Errorf("recovery: marker %q kind %q", f.Marker, detailString(f, "kind"))
					}
				} else if f.Marker != run.MarkerIrregularMissed {
					t.Errorf("marker = %q", f.Marker)
				}
			}
			if c.expected != "" && len(fs) > 0 {
				if got := detailString(fs[0], "expectedTime"); got != c.expected {
					t.Errorf("expectedTime = %s, want %s", got, c.expected)
				}
				if c.message != "" && fs[0].Message != c.message {
					t.Errorf("message = %q, want %q", fs[0].Message, c.message)
				}
			}
		})
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}
