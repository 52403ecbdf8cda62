package watchdog

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
)

func TestSLABreachTimerKey(t *testing.T) {
	if got, want := SLABreachTimerKey(key("gold", "stream", "2026-03-10T07")), "sla-breach/gold/stream/2026-03-10T07"; got != want {
		t.Errorf("SLABreachTimerKey = %q, want %q", got, want)
	}
}

func TestSLAScheduling(t *testing.T) {
	daily := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\nsla: {deadline: \"10:00\", expectedDuration: 30m}\n" + job
	hourly := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\nsla: {deadline: \":30\"}\n" + job
	cases := []struct {
		name        string
		doc         string
		now         string
		firstLoaded string
		paused      bool
		runs        map[string]run.State
		markers     map[string]string
		timers      []string // periods whose breach timer is set
		want        []string
		breachAt    string // of the first finding
	}{
		{name: "timer missing before the breach", doc: daily, now: "2026-03-10T08:00:00Z",
			want: []string{"(arm-sla) p/stream/2026-03-10"}, breachAt: "2026-03-10T10:00:00Z"},
		{name: "timer present", doc: daily, now: "2026-03-10T08:00:00Z", timers: []string{"2026-03-10"}},
		{name: "breach passed: nothing to arm", doc: daily, now: "2026-03-10T10:00:00Z"},
		{name: "verdict given", doc: daily, now: "2026-03-10T08:00:00Z", markers: map[string]string{"2026-03-10": run.MarkerSLAVerdict}},
		{name: "breach reported", doc: daily, now: "2026-03-10T08:00:00Z", markers: map[string]string{"2026-03-10": run.MarkerSLABreach}},
		{name: "run completed", doc: daily, now: "2026-03-10T08:00:00Z", runs: map[string]run.State{"2026-03-10": run.Completed}},
		{name: "run failed", doc: daily, now: "2026-03-10T08:00:00Z", runs: map[string]run.State{"2026-03-10": run.FailedFinal}},
		{name: "run still going", doc: daily, now: "2026-03-10T08:00:00Z", runs: map[string]run.State{"2026-03-10": run.Running},
			want: []string{"(arm-sla) p/stream/2026-03-10"}},
		{name: "paused: SLA alerts continue", doc: daily, now: "2026-03-10T08:00:00Z", paused: true,
			want: []string{"(arm-sla) p/stream/2026-03-10"}},
		{name: "dry-run", doc: daily + "dryRun: true\n", now: "2026-03-10T08:00:00Z"},
		{name: "excluded date", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, exclude: {dates: [2026-03-10]}}\nsla: {deadline: \"10:00\"}\n" + job,
			now: "2026-03-10T08:00:00Z"},
		{name: "off the inclusion calendar", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, include: {dates: [2026-03-11]}}\nsla: {deadline: \"10:00\"}\n" + job,
			now: "2026-03-10T08:00:00Z"},
		{name: "relative SLA only: nothing to arm here", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\nsla: {maxDuration: 2h}\n" + job,
			now: "2026-03-10T08:00:00Z"},
		{name: "hourly :30: current and previous hour", doc: hourly, now: "2026-03-10T10:10:00Z",
			want: []string{"(arm-sla) p/stream/2026-03-10T09", "(arm-sla) p/stream/2026-03-10T10"}, breachAt: "2026-03-10T10:30:00Z"},
		{name: "hourly :30: previous hour's breach passed", doc: hourly, now: "2026-03-10T10:40:00Z",
			want: []string{"(arm-sla) p/stream/2026-03-10T10"}},
		{name: "hourly :30: previous hour began before the first load, its breach is after it", doc: hourly, now: "2026-03-10T10:10:00Z", firstLoaded: "2026-03-10T10:05:00Z",
			want: []string{"(arm-sla) p/stream/2026-03-10T09", "(arm-sla) p/stream/2026-03-10T10"}},
		{name: "hourly :30: previous hour armed", doc: hourly, now: "2026-03-10T10:10:00Z", timers: []string{"2026-03-10T09"},
			want: []string{"(arm-sla) p/stream/2026-03-10T10"}},
		{name: "+1d 02:00: yesterday's breach is still ahead", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\nsla: {deadline: \"+1d 02:00\"}\n" + job,
			now:  "2026-03-11T01:00:00Z",
			want: []string{"(arm-sla) p/stream/2026-03-10", "(arm-sla) p/stream/2026-03-11"}, breachAt: "2026-03-11T02:00:00Z"},
		{name: "New York: 10:00 EDT is 14:00Z", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, timezone: America/New_York}\nsla: {deadline: \"10:00\"}\n" + job,
			now: "2026-03-10T13:59:00Z", want: []string{"(arm-sla) p/stream/2026-03-10"}, breachAt: "2026-03-10T14:00:00Z"},
		{name: "New York: breach passed", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, timezone: America/New_York}\nsla: {deadline: \"10:00\"}\n" + job,
			now: "2026-03-10T14:00:00Z"},
		{name: "New York: the current period is the local date", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, timezone: America/New_York}\nsla: {deadline: \"23:00\"}\n" + job,
			now: "2026-03-11T02:00:00Z", want: []string{"(arm-sla) p/stream/2026-03-10"}, breachAt: "2026-03-11T03:00:00Z"},
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
			for per, st := range c.runs {
				s.addRun(run.Run{Key: key("p", "stream", per), State: st})
			}
			for per, kind := range c.markers {
				s.addMarker(key("p", "stream", per), kind, now.Add(-time.Minute))
			}
			for _, per := range c.timers {
				s.BreachTimers[key("p", "stream", per)] = true
			}
			fs := runCheck(t, CheckSLAScheduling, s)
			expect(t, fs, c.want...)
			for _, f := range fs {
				if f.Event != "" || f.Marker != "" || f.Action != ActionArmSLA {
					t.Errorf("finding %+v: want a silent ActionArmSLA without a marker", f)
				}
			}
			if c.breachAt != "" && len(fs) > 0 {
				if got := detailString(fs[0], "breachAt"); got != c.breachAt {
					t.Errorf("breachAt = %s, want %s", got, c.breachAt)
				}
			}
		})
	}
}

func TestRelativeSLA(t *testing.T) {
	rel := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\nsla: {maxDuration: 1h}\n" + job
	cases := []struct {
		name        string
		doc         string
		now         string
		firstLoaded string
		paused      bool
		arrivals    map[string]string // period → first arrival
		runs        map[string]run.State
		markers     map[string]string
		want        []string
		status      string
	}{
		{name: "breach reached with no run", doc: rel, now: "2026-03-10T08:00:00Z", arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"},
			want: []string{"RELATIVE_SLA_BREACH p/stream/2026-03-10"}, status: "not started"},
		{name: "before the breach", doc: rel, now: "2026-03-10T07:59:59Z", arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"}},
		{name: "run still going", doc: rel, now: "2026-03-10T08:30:00Z", arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"},
			runs: map[string]run.State{"2026-03-10": run.Running}, want: []string{"RELATIVE_SLA_BREACH p/stream/2026-03-10"}, status: "RUNNING"},
		{name: "run completed", doc: rel, now: "2026-03-10T08:30:00Z", arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"},
			runs: map[string]run.State{"2026-03-10": run.Completed}},
		{name: "run failed: its failure event carries the news", doc: rel, now: "2026-03-10T08:30:00Z", arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"},
			runs: map[string]run.State{"2026-03-10": run.FailedFinal}},
		{name: "deduplicated (engine or watchdog already sent it)", doc: rel, now: "2026-03-10T08:30:00Z", arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"},
			markers: map[string]string{"2026-03-10": run.MarkerRelBreach}},
		{name: "verdict given before a rerun reopened the period", doc: rel, now: "2026-03-10T08:30:00Z", arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"},
			runs: map[string]run.State{"2026-03-10": run.Evaluating}, markers: map[string]string{"2026-03-10": run.MarkerSLAVerdict}},
		{name: "paused: SLA alerts continue", doc: rel, now: "2026-03-10T08:30:00Z", paused: true, arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"},
			want: []string{"RELATIVE_SLA_BREACH p/stream/2026-03-10"}},
		{name: "dry-run", doc: rel + "dryRun: true\n", now: "2026-03-10T08:30:00Z", arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"}},
		{name: "excluded period", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}, exclude: {dates: [2026-03-10]}}\nsla: {maxDuration: 1h}\n" + job,
			now: "2026-03-10T08:30:00Z", arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"}},
		{name: "breach before the first load", doc: rel, now: "2026-03-10T08:30:00Z", firstLoaded: "2026-03-10T08:10:00Z",
			arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"}},
		{name: "no sla.maxDuration", doc: "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\nsla: {deadline: \"10:00\"}\n" + job,
			now: "2026-03-10T08:30:00Z", arrivals: map[string]string{"2026-03-10": "2026-03-10T07:00:00Z"}},
		{name: "hourly periods and yesterday's (T+1) period alike", doc: rel, now: "2026-03-10T08:30:00Z",
			arrivals: map[string]string{"2026-03-10T06": "2026-03-10T06:10:00Z", "2026-03-10T07": "2026-03-10T07:40:00Z", "2026-03-09": "2026-03-10T01:00:00Z"},
			want:     []string{"RELATIVE_SLA_BREACH p/stream/2026-03-09", "RELATIVE_SLA_BREACH p/stream/2026-03-10T06"}},
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
			for per, a := range c.arrivals {
				s.addMarker(key("p", "stream", per), run.MarkerFirstArrival, at(t, a))
			}
			for per, st := range c.runs {
				s.addRun(run.Run{Key: key("p", "stream", per), State: st})
			}
			for per, kind := range c.markers {
				s.addMarker(key("p", "stream", per), kind, now.Add(-time.Minute))
			}
			fs := runCheck(t, CheckRelativeSLA, s)
			expect(t, fs, c.want...)
			for _, f := range fs {
				if f.Marker != run.MarkerRelBreach || f.Action != ActionNone {
					t.Errorf("finding %+v: want marker %s, no action", f, run.MarkerRelBreach)
				}
			}
			if c.status != "" && len(fs) > 0 {
				if got := detailString(fs[0], "status"); got != c.status {
					t.Errorf("status = %q, want %q", got, c.status)
				}
				if got := detailString(fs[0], "breachAt"); got != "2026-03-10T08:00:00Z" {
					t.Errorf("breachAt = %s", got)
				}
			}
		})
	}
}
