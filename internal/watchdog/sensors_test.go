package watchdog

import (
	"reflect"
	"testing"
	"time"

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
