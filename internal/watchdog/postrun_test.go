package watchdog

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

func TestPostRunSensors(t *testing.T) {
	doc := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\npostRun: {rules: [{key: audit, check: gte, field: count, value: 1}, {key: rows, check: exists}]}\n" + job
	ended := "2026-03-10T08:00:00Z"
	count := map[string]sensor.Value{"count": sensor.IntValue(5)}
	type runSpec struct {
		period  string
		state   run.State
		outcome run.Outcome
	}
	done := func(period string) runSpec { return runSpec{period, run.Completed, run.OutcomeSucceeded} }
	cases := []struct {
		name        string
		doc         string
		now         string
		firstLoaded string
		paused      bool
		r           runSpec
		sensors     []sensorSpec
		markers     []string
		want        []string
	}{
		{name: "no post-run sensor after the timeout", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"),
			want: []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10"}},
		{name: "within the timeout", doc: doc, now: "2026-03-10T09:59:59Z", r: done("2026-03-10")},
		{name: "sensor arrived after the success", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"),
			sensors: []sensorSpec{{"audit", "2026-03-10T08:30:00Z", count}}},
		{name: "any post-run rule key counts", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"),
			sensors: []sensorSpec{{"rows", "2026-03-10T08:30:00Z", count}}},
		{name: "sensor only from before the success", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"),
			sensors: []sensorSpec{{"audit", "2026-03-10T07:00:00Z", count}},
			want:    []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10"}},
		{name: "sensor for another period", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"),
			sensors: []sensorSpec{{"audit#2026-03-09", "2026-03-10T08:30:00Z", count}},
			want:    []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10"}},
		{name: "sensor of another key", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"),
			sensors: []sensorSpec{{"up", "2026-03-10T08:30:00Z", count}},
			want:    []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10"}},
		{name: "deduplicated", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"), markers: []string{run.MarkerPostRunMissing}},
		{name: "failed run", doc: doc, now: "2026-03-10T10:00:00Z", r: runSpec{"2026-03-10", run.FailedFinal, run.OutcomeRetriesExhausted}},
		{name: "run reopened by a rerun", doc: doc, now: "2026-03-10T10:00:00Z", r: runSpec{"2026-03-10", run.Evaluating, run.OutcomeNone}},
		{name: "paused: alerts continue", doc: doc, now: "2026-03-10T10:00:00Z", paused: true, r: done("2026-03-10"),
			want: []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10"}},
		{name: "dry-run", doc: doc + "dryRun: true\n", now: "2026-03-10T10:00:00Z", r: done("2026-03-10")},
		{name: "no post-run rules", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\n" + job, now: "2026-03-10T10:00:00Z", r: done("2026-03-10")},
		{name: "postRun.sensorTimeout", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\npostRun: {sensorTimeout: 30m, rules: [{key: audit, check: exists}]}\n" + job,
			now: "2026-03-10T08:30:00Z", r: done("2026-03-10"), want: []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10"}},
		{name: "expected before the first load", doc: doc, now: "2026-03-10T10:00:00Z", firstLoaded: "2026-03-10T10:00:01Z", r: done("2026-03-10")},
		{name: "hourly: the hour's sensor arrived", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10T07"),
			sensors: []sensorSpec{{"audit#20260310T07", "2026-03-10T08:10:00Z", count}}},
		{name: "hourly: only the next hour's sensor", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10T07"),
			sensors: []sensorSpec{{"audit#20260310T08", "2026-03-10T08:10:00Z", count}},
			want:    []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10T07"}},
		{name: "hourly: period from the sensor's hour field", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10T07"),
			sensors: []sensorSpec{{"audit", "2026-03-10T08:10:00Z", map[string]sensor.Value{"count": sensor.IntValue(5), "date": str("2026-03-10"), "hour": str("07")}}}},
		{name: "New York: a sensor without period fields belongs to the local date", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, timezone: America/New_York}\npostRun: {rules: [{key: audit, check: exists}]}\n" + job,
			now: "2026-03-11T06:00:00Z", r: done("2026-03-10"),
			sensors: []sensorSpec{{"audit", "2026-03-11T03:00:00Z", count}}}, // 23:00 EDT on the 10th
		{name: "UTC: the same instant is the next date", doc: doc, now: "2026-03-11T06:00:00Z", r: done("2026-03-10"),
			sensors: []sensorSpec{{"audit", "2026-03-11T03:00:00Z", count}},
			want:    []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10"}},
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
			k := key("p", "stream", c.r.period)
			r := run.Run{Key: k, State: c.r.state, Outcome: c.r.outcome}
			if c.r.state.Terminal() {
				r.EndedAt = at(t, ended)
			}
			s.addRun(r)
			for _, x := range c.sensors {
				s.addSensor("p", x.key, at(t, x.changed), x.fields)
			}
			for _, m := range c.markers {
				s.addMarker(k, m, now.Add(-time.Minute))
			}
			fs := runCheck(t, CheckPostRunSensors, s)
			expect(t, fs, c.want...)
			for _, f := range fs {
				if f.Marker != run.MarkerPostRunMissing {
					t.Errorf("marker = %q", f.Marker)
				}
				if detailString(f, "completedAt") != ended {
					t.Errorf("completedAt = %q", detailString(f, "completedAt"))
				}
			}
		})
	}
}
