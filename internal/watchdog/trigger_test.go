package watchdog

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

type sensorSpec struct {
	key     string
	changed string
	fields  map[string]sensor.Value
}

func ready() map[string]sensor.Value { return map[string]sensor.Value{"status": str("ready")} }

func TestTriggerReconciliation(t *testing.T) {
	trig := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: equals, field: status, value: ready}}\n" + job
	cases := []struct {
		name        string
		doc         string
		now         string
		firstLoaded string
		paused      bool
		sensors     []sensorSpec
		runs        []string
		markers     map[string]string
		want        []string
		sensorKey   string // of the first finding
	}{
		{name: "trigger data with no run", doc: trig, now: "2026-03-10T08:10:00Z",
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", ready()}},
			want:    []string{"TRIGGER_RECOVERED p/stream/2026-03-10"}, sensorKey: "up"},
		{name: "condition not satisfied", doc: trig, now: "2026-03-10T08:10:00Z",
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", map[string]sensor.Value{"status": str("late")}}}},
		{name: "key does not match the trigger", doc: trig, now: "2026-03-10T08:10:00Z",
			sensors: []sensorSpec{{"other", "2026-03-10T08:00:00Z", ready()}}},
		{name: "within the grace minute of its arrival", doc: trig, now: "2026-03-10T08:00:30Z",
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", ready()}}},
		{name: "the period has a run", doc: trig, now: "2026-03-10T08:10:00Z", runs: []string{"2026-03-10"},
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", ready()}}},
		{name: "deduplicated", doc: trig, now: "2026-03-10T08:10:00Z", markers: map[string]string{"2026-03-10": run.MarkerTriggerRecovered},
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", ready()}}},
		{name: "several sensors for one period: one finding, the earliest names it", doc: trig, now: "2026-03-10T08:10:00Z",
			sensors: []sensorSpec{{"up-b", "2026-03-10T08:05:00Z", ready()}, {"up-a", "2026-03-10T08:01:00Z", ready()}},
			want:    []string{"TRIGGER_RECOVERED p/stream/2026-03-10"}, sensorKey: "up-a"},
		{name: "per-hour keys recover each hour", doc: trig, now: "2026-03-10T09:10:00Z",
			sensors: []sensorSpec{{"up#20260310T07", "2026-03-10T07:05:00Z", ready()}, {"up#20260310T08", "2026-03-10T08:05:00Z", ready()}},
			runs:    []string{"2026-03-10T08"},
			want:    []string{"TRIGGER_RECOVERED p/stream/2026-03-10T07"}, sensorKey: "up#20260310T07"},
		{name: "period from the sensor's date field (yesterday's data)", doc: trig, now: "2026-03-11T03:00:00Z",
			sensors: []sensorSpec{{"up", "2026-03-11T02:00:00Z", map[string]sensor.Value{"status": str("ready"), "date": str("2026-03-10")}}},
			runs:    []string{"2026-03-11"},
			want:    []string{"TRIGGER_RECOVERED p/stream/2026-03-10"}},
		{name: "New York: the period is the local date at arrival", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: equals, field: status, value: ready}, timezone: America/New_York}\n" + job,
			now: "2026-03-11T02:10:00Z", sensors: []sensorSpec{{"up", "2026-03-11T02:00:00Z", ready()}},
			want: []string{"TRIGGER_RECOVERED p/stream/2026-03-10"}},
		{name: "excluded period", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: equals, field: status, value: ready}, exclude: {dates: [2026-03-10]}}\n" + job,
			now: "2026-03-10T08:10:00Z", sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", ready()}}},
		{name: "paused: Resume starts it", doc: trig, now: "2026-03-10T08:10:00Z", paused: true,
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", ready()}}},
		{name: "dry-run pipeline", doc: trig + "dryRun: true\n", now: "2026-03-10T08:10:00Z",
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", ready()}}},
		{name: "period observed in dry-run before a switch to live", doc: trig, now: "2026-03-10T08:10:00Z",
			markers: map[string]string{"2026-03-10": run.MarkerDryRun},
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", ready()}}},
		{name: "arrived before the first load", doc: trig, now: "2026-03-10T08:10:00Z", firstLoaded: "2026-03-10T08:05:00Z",
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", ready()}}},
		{name: "period beyond the lookback", doc: trig, now: "2026-03-10T08:10:00Z",
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", map[string]sensor.Value{"status": str("ready"), "date": str("2026-03-05")}}}},
		{name: "period in the future", doc: trig, now: "2026-03-10T08:10:00Z",
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", map[string]sensor.Value{"status": str("ready"), "date": str("2026-03-12")}}}},
		{name: "malformed period is skipped", doc: trig, now: "2026-03-10T08:10:00Z",
			sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", map[string]sensor.Value{"status": str("ready"), "date": str("yesterday")}}}},
		{name: "age condition judged now: still fresh", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: age_lt, field: at, value: 1h}}\n" + job,
			now: "2026-03-10T08:30:00Z", sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", map[string]sensor.Value{"at": str("2026-03-10T08:00:00Z")}}},
			want: []string{"TRIGGER_RECOVERED p/stream/2026-03-10"}},
		{name: "age condition judged now: stale data starts nothing", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: age_lt, field: at, value: 1h}}\n" + job,
			now: "2026-03-10T09:30:00Z", sensors: []sensorSpec{{"up", "2026-03-10T08:00:00Z", map[string]sensor.Value{"at": str("2026-03-10T08:00:00Z")}}}},
		{name: "cron and trigger: schedule id is cron", doc: "pipeline: {id: p}\nschedule: {cron: \"0 6 * * *\", trigger: {key: up, check: equals, field: status, value: ready}}\n" + job,
			now: "2026-03-10T05:10:00Z", sensors: []sensorSpec{{"up", "2026-03-10T05:00:00Z", ready()}},
			want: []string{"TRIGGER_RECOVERED p/cron/2026-03-10"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := at(t, c.now)
			p := parse(t, c.doc)
			wp := loaded(p)
			if c.firstLoaded != "" {
				wp.FirstLoadedAt = at(t, c.firstLoaded)
			}
			wp.Paused = c.paused
			s := snap(now, wp)
			for _, x := range c.sensors {
				s.addSensor("p", x.key, at(t, x.changed), x.fields)
			}
			for _, per := range c.runs {
				s.addRun(run.Run{Key: key("p", p.ScheduleID(), per), State: run.Completed})
			}
			for per, kind := range c.markers {
				s.addMarker(key("p", p.ScheduleID(), per), kind, now.Add(-time.Minute))
			}
			fs := runCheck(t, CheckTriggerReconciliation, s)
			expect(t, fs, c.want...)
			for _, f := range fs {
				if f.Action != ActionStartRun || f.Marker != run.MarkerTriggerRecovered || f.SensorKey == "" {
					t.Errorf("finding %+v: want ActionStartRun, marker %s and a sensor key", f, run.MarkerTriggerRecovered)
				}
			}
			if c.sensorKey != "" && len(fs) > 0 && fs[0].SensorKey != c.sensorKey {
				t.Errorf("SensorKey = %q, want %q", fs[0].SensorKey, c.sensorKey)
			}
		})
	}
}

func TestTriggerDeadlines(t *testing.T) {
	daily := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: equals, field: status, value: ready, deadline: \"10:00\"}}\n" + job
	cases := []struct {
		name        string
		doc         string
		now         string
		firstLoaded string
		paused      bool
		runs        []string
		sensors     []sensorSpec
		want        []string
		deadlineAt  string // of the first finding
	}{
		{name: "deadline passed with no run", doc: daily, now: "2026-03-10T10:05:00Z", runs: []string{"2026-03-09"},
			want: []string{"SENSOR_DEADLINE_EXPIRED p/stream/2026-03-10"}, deadlineAt: "2026-03-10T10:00:00Z"},
		{name: "at the deadline instant it has passed", doc: daily, now: "2026-03-10T10:00:00Z", runs: []string{"2026-03-09"},
			want: []string{"SENSOR_DEADLINE_EXPIRED p/stream/2026-03-10"}},
		{name: "deadline ahead", doc: daily, now: "2026-03-10T09:59:00Z", runs: []string{"2026-03-09"}},
		{name: "today and yesterday", doc: daily, now: "2026-03-10T10:05:00Z",
			want: []string{"SENSOR_DEADLINE_EXPIRED p/stream/2026-03-09", "SENSOR_DEADLINE_EXPIRED p/stream/2026-03-10"}},
		{name: "not the day before yesterday", doc: daily, now: "2026-03-10T09:00:00Z",
			want: []string{"SENSOR_DEADLINE_EXPIRED p/stream/2026-03-09"}},
		{name: "the period has a run", doc: daily, now: "2026-03-10T10:05:00Z", runs: []string{"2026-03-09", "2026-03-10"}},
		{name: "an hourly run of the date counts", doc: daily, now: "2026-03-10T10:05:00Z", runs: []string{"2026-03-09", "2026-03-10T08"}},
		{name: "trigger data waiting: trigger-reconciliation starts it", doc: daily, now: "2026-03-10T10:05:00Z", runs: []string{"2026-03-09"},
			sensors: []sensorSpec{{"up", "2026-03-10T09:50:00Z", ready()}}},
		{name: "trigger data waiting for an hour of the date", doc: daily, now: "2026-03-10T10:05:00Z", runs: []string{"2026-03-09"},
			sensors: []sensorSpec{{"up#20260310T08", "2026-03-10T09:50:00Z", ready()}}},
		{name: "excluded date", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists, deadline: \"10:00\"}, exclude: {dates: [2026-03-10]}}\n" + job,
			now: "2026-03-10T10:05:00Z", runs: []string{"2026-03-09"}},
		{name: "off the inclusion calendar", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists, deadline: \"10:00\"}, include: {dates: [2026-03-09]}}\n" + job,
			now: "2026-03-10T10:05:00Z", want: []string{"SENSOR_DEADLINE_EXPIRED p/stream/2026-03-09"}},
		{name: "paused", doc: daily, now: "2026-03-10T10:05:00Z", paused: true},
		{name: "dry-run", doc: daily + "dryRun: true\n", now: "2026-03-10T10:05:00Z"},
		{name: "deadline before the first load", doc: daily, now: "2026-03-10T10:05:00Z", firstLoaded: "2026-03-10T10:01:00Z"},
		{name: "first loaded before today's deadline", doc: daily, now: "2026-03-10T10:05:00Z", firstLoaded: "2026-03-10T09:00:00Z",
			want: []string{"SENSOR_DEADLINE_EXPIRED p/stream/2026-03-10"}},
		{name: "hourly :15: the previous two hours", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists, deadline: \":15\"}}\n" + job,
			now:  "2026-03-10T10:20:00Z",
			want: []string{"SENSOR_DEADLINE_EXPIRED p/stream/2026-03-10T08", "SENSOR_DEADLINE_EXPIRED p/stream/2026-03-10T09"}, deadlineAt: "2026-03-10T10:15:00Z"},
		{name: "hourly :15: before the minute", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists, deadline: \":15\"}}\n" + job,
			now: "2026-03-10T10:10:00Z", runs: []string{"2026-03-10T08"}},
		{name: "hourly :15: hour with a run", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists, deadline: \":15\"}}\n" + job,
			now: "2026-03-10T10:20:00Z", runs: []string{"2026-03-10T08", "2026-03-10T09"}},
		{name: "+1d 02:00: yesterday's period closes today", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists, deadline: \"+1d 02:00\"}}\n" + job,
			now: "2026-03-11T03:00:00Z", runs: []string{"2026-03-09"},
			want: []string{"SENSOR_DEADLINE_EXPIRED p/stream/2026-03-10"}, deadlineAt: "2026-03-11T02:00:00Z"},
		{name: "New York spring forward: 10:00 EDT is 14:00Z, not yet", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists, deadline: \"10:00\"}, timezone: America/New_York}\n" + job,
			now: "2026-03-08T13:59:00Z", runs: []string{"2026-03-07"}},
		{name: "New York spring forward: 10:00 EDT passed", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists, deadline: \"10:00\"}, timezone: America/New_York}\n" + job,
			now: "2026-03-08T14:00:00Z", runs: []string{"2026-03-07"},
			want: []string{"SENSOR_DEADLINE_EXPIRED p/stream/2026-03-08"}, deadlineAt: "2026-03-08T14:00:00Z"},
		{name: "New York: yesterday is the local yesterday (10:00 EST is 15:00Z)", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists, deadline: \"10:00\"}, timezone: America/New_York}\n" + job,
			now: "2026-03-08T03:00:00Z", runs: []string{"2026-03-06"},
			want: []string{"SENSOR_DEADLINE_EXPIRED p/stream/2026-03-07"}, deadlineAt: "2026-03-07T15:00:00Z"},
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
				s.addSensor("p", x.key, at(t, x.changed), x.fields)
			}
			fs := runCheck(t, CheckTriggerDeadlines, s)
			expect(t, fs, c.want...)
			for _, f := range fs {
				if f.Action != ActionClosePeriod || f.Marker != "" {
					t.Errorf("finding %+v: want ActionClosePeriod without a marker", f)
				}
			}
			if c.deadlineAt != "" && len(fs) > 0 {
				last := fs[len(fs)-1]
				if got := detailString(last, "deadlineAt"); got != c.deadlineAt {
					t.Errorf("deadlineAt = %s, want %s", got, c.deadlineAt)
				}
			}
		})
	}
}
