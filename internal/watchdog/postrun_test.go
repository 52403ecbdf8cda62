package watchdog

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
)

func TestPostRunSensors(t *testing.T) {
	doc := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\npostRun: {rules: [{key: audit, check: gte, field: count, value: 1}, {key: rows, check: exists}]}\n" + job
	ended := "2026-03-10T08:00:00Z"
	type runSpec struct {
		period  string
		state   run.State
		outcome run.Outcome
	}
	done := func(period string) runSpec { return runSpec{period, run.Completed, run.OutcomeSucceeded} }
	// arrived is when the engine recorded a post-run sensor for the
	// period ("" none); arrivedFor puts the record on another period.
	cases := []struct {
		name        string
		doc         string
		now         string
		firstLoaded string
		paused      bool
		r           runSpec
		arrived     string
		arrivedFor  string
		markers     []string
		want        []string
	}{
		{name: "no post-run sensor after the timeout", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"),
			want: []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10"}},
		{name: "within the timeout", doc: doc, now: "2026-03-10T09:59:59Z", r: done("2026-03-10")},
		{name: "sensor arrived after the success", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"), arrived: "2026-03-10T08:30:00Z"},
		{name: "arrival recorded before this success (an earlier run)", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"), arrived: "2026-03-10T07:00:00Z",
			want: []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10"}},
		{name: "arrival recorded for another period", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10"), arrived: "2026-03-10T08:30:00Z", arrivedFor: "2026-03-09",
			want: []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10"}},
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
		{name: "hourly period", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10T07"),
			want: []string{"POST_RUN_SENSOR_MISSING p/stream/2026-03-10T07"}},
		{name: "hourly period, arrived", doc: doc, now: "2026-03-10T10:00:00Z", r: done("2026-03-10T07"), arrived: "2026-03-10T08:10:00Z"},
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
			if c.arrived != "" {
				ak := k
				if c.arrivedFor != "" {
					ak = key("p", "stream", c.arrivedFor)
				}
				s.addMarker(ak, run.MarkerPostRunArrived, at(t, c.arrived))
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
