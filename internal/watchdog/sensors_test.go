package watchdog

import (
	"reflect"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Without a watched trigger pipeline the checks read no sensor: a pass
// over pipelines with a cron and post-run rules, or with a trigger in dry-run, finds the
// same with their sensors as without them, and ReadsSensors says so.
func TestReadsSensorsOnlyForTriggers(t *testing.T) {
	now := at(t, "2026-03-10T13:00:00Z")
	cron := parse(t, "pipeline: {id: c}\nschedule: {cron: \"0 6 * * *\", time: \"06:00\"}\npostRun: {rules: [{key: up, check: exists}]}\n"+job)
	trig := parse(t, "pipeline: {id: t}\nschedule: {trigger: {key: up, check: equals, field: status, value: ready}}\n"+job)
	dry := parse(t, "pipeline: {id: d}\ndryRun: true\nschedule: {trigger: {key: up, check: equals, field: status, value: ready}}\n"+job)

	build := func(withSensors bool) *Snapshot {
		s := snap(now, loaded(cron), loaded(dry))
		s.addRun(run.Run{Key: key("c", "cron", "2026-03-09"), State: run.Completed, Outcome: run.OutcomeSucceeded,
			EndedAt: now.Add(-20 * time.Hour), UpdatedAt: now.Add(-20 * time.Hour)})
		if withSensors {
			ready := map[string]sensor.Value{"status": sensor.StringValue("ready")}
			for _, pid := range []string{"c", "d"} {
				s.addSensor(pid, "up", now.Add(-2*time.Hour), ready)
				s.addSensor(pid, "up#2026-03-09", now.Add(-26*time.Hour), ready)
			}
		}
		return s
	}
	if ReadsSensors(build(true).Pipelines) {
		t.Fatal("ReadsSensors without a watched trigger pipeline: true")
	}
	with, without := Pass(build(true)), Pass(build(false))
	if len(with.Findings) == 0 {
		t.Fatal("the pass found nothing: the comparison would say nothing")
	}
	if !reflect.DeepEqual(with, without) {
		t.Fatalf("sensors changed the pass:\nwith    %+v\nwithout %+v", with, without)
	}
	if !ReadsSensors([]Pipeline{loaded(cron), loaded(trig)}) {
		t.Fatal("ReadsSensors with a trigger pipeline: false")
	}
}

// Watched sensors are the trigger data of live trigger pipelines: the
// trigger key and its per-period spellings, not other keys, nothing of a
// cron or dry-run pipeline.
func TestWatches(t *testing.T) {
	trig := parse(t, "pipeline: {id: t}\nschedule: {trigger: {key: up, check: exists}}\n"+job)
	dry := parse(t, "pipeline: {id: d}\ndryRun: true\nschedule: {trigger: {key: up, check: exists}}\n"+job)
	cron := parse(t, "pipeline: {id: c}\nschedule: {cron: \"0 6 * * *\"}\npostRun: {rules: [{key: up, check: exists}]}\n"+job)
	for _, tc := range []struct {
		p    *pipeline.Pipeline
		key  string
		want bool
	}{
		{trig, "up", true}, {trig, "up-v2", true}, {trig, "up#2026-03-10", true}, {trig, "up#20260310T05", true},
		{trig, "up#eu", false}, {trig, "down", false},
		{dry, "up", false}, {cron, "up", false}, {nil, "up", false},
	} {
		if got := Watches(tc.p, tc.key); got != tc.want {
			id := "<nil>"
			if tc.p != nil {
				id = tc.p.ID
			}
			t.Errorf("Watches(%s, %q) = %v, want %v", id, tc.key, got, tc.want)
		}
	}
}

// A config load stamps WatchChangedAt when it changes which sensors are
// watched (trigger key, trigger added or removed, dry run switched, the
// stored config unreadable), keeps the stamp otherwise, and a first load
// has none.
func TestWatchChangedAt(t *testing.T) {
	now, before := at(t, "2026-03-10T13:00:00Z"), at(t, "2026-03-01T00:00:00Z")
	trig := func(key string) *pipeline.Pipeline {
		return parse(t, "pipeline: {id: t}\nschedule: {trigger: {key: "+key+", check: exists}}\n"+job)
	}
	dry := parse(t, "pipeline: {id: t}\ndryRun: true\nschedule: {trigger: {key: up, check: exists}}\n"+job)
	cron := parse(t, "pipeline: {id: t}\nschedule: {cron: \"0 6 * * *\"}\n"+job)
	cronToo := parse(t, "pipeline: {id: t}\nschedule: {cron: \"0 7 * * *\"}\n"+job)
	for _, tc := range []struct {
		name       string
		exists     bool
		prev, next *pipeline.Pipeline
		want       time.Time
	}{
		{"FirstLoad", false, nil, trig("up"), time.Time{}},
		{"SameTrigger", true, trig("up"), trig("up"), before},
		{"NoTriggerEither", true, cron, cronToo, before},
		{"TriggerKeyChanged", true, trig("up"), trig("ready"), now},
		{"TriggerAdded", true, cron, trig("up"), now},
		{"TriggerRemoved", true, trig("up"), cron, now},
		{"DryRunSwitchedLive", true, dry, trig("up"), now},
		{"StoredConfigUnreadable", true, nil, trig("up"), now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WatchChangedAt(tc.exists, tc.prev, before, tc.next, now); !got.Equal(tc.want) {
				t.Fatalf("WatchChangedAt = %v, want %v", got, tc.want)
			}
		})
	}
}

// A pass reads the watched sensors changed since the last read (the
// window when it keeps none), and whole the trigger pipelines whose
// watched set changed since then: not the others, not without a trigger.
func TestPlanSensorReads(t *testing.T) {
	now := at(t, "2026-03-10T13:00:00Z")
	trig := func(id string, changed time.Time) Pipeline {
		wp := loaded(parse(t, "pipeline: {id: "+id+"}\nschedule: {trigger: {key: up, check: exists}}\n"+job))
		wp.WatchChangedAt = changed
		return wp
	}
	cron := loaded(parse(t, "pipeline: {id: c}\nschedule: {cron: \"0 6 * * *\"}\n"+job))
	cron.WatchChangedAt = now.Add(-time.Minute)
	warm := PlanRefresh(true, now.Add(-5*time.Minute), 1, now)
	full := PlanRefresh(false, time.Time{}, 0, now)
	ps := []Pipeline{
		cron,
		trig("never", time.Time{}),
		trig("lately", now.Add(-2*time.Minute)), // since the last pass
		trig("at-last-read", warm.Since),        // the boundary: read
		trig("before-last-pass", warm.Since.Add(-time.Nanosecond)),     // read whole by an earlier pass
		trig("in-window", full.SensorsFrom.Add(time.Hour)),             // within the window
		trig("at-window-edge", full.SensorsFrom.Add(-RefreshOverlap)),  // the boundary, clocks allowed for
		trig("before-window", full.SensorsFrom.Add(-RefreshOverlap-1)), // its sensors since were all decided by today's config
	}
	for _, tc := range []struct {
		name  string
		r     Refresh
		kept  bool
		since time.Time
		whole []string
	}{
		{"Incremental", warm, true, warm.SensorsSince, []string{"lately", "at-last-read"}},
		{"NothingKept", warm, false, warm.SensorsFrom, []string{"lately", "at-last-read", "before-last-pass", "in-window", "at-window-edge"}},
		{"Full", full, false, full.SensorsFrom, []string{"lately", "at-last-read", "before-last-pass", "in-window", "at-window-edge"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanSensorReads(tc.r, tc.kept, ps)
			if !got.Read || !got.Since.Equal(tc.since) || !reflect.DeepEqual(got.Pipelines, tc.whole) {
				t.Fatalf("PlanSensorReads = %+v, want Read, Since %v, whole %v", got, tc.since, tc.whole)
			}
		})
	}
	if got := PlanSensorReads(warm, true, []Pipeline{cron}); got.Read || len(got.Pipelines) != 0 {
		t.Fatalf("PlanSensorReads without a trigger pipeline = %+v, want nothing", got)
	}
}
