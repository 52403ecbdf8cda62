package deps

import (
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/schedule"
)

// TestTriggeredNamesThePeriodAndCause: JOB_TRIGGERED carries the run's
// cause and its period's instants in the schedule's zone, for readers
// that know no config (the openlineage sink's nominalTime).
func TestTriggeredNamesThePeriodAndCause(t *testing.T) {
	p := runtest.Pipeline(t, `pipeline: {id: berlin}
schedule: {cron: "0 6 * * *", timezone: Europe/Berlin}
job: {type: glue, config: {jobName: x}}
`)
	r := run.Run{Key: run.Key{PipelineID: "berlin", ScheduleID: "cron", Period: "2026-11-20"}, State: run.Triggering, Cause: run.CauseCron}
	_, eff := run.Triggered(r, "glue", "jr-1", nil, p, runtest.T0)
	d := eff.Notes[0].Detail
	for field, want := range map[string]string{"cause": "cron", "periodStart": "2026-11-19T23:00:00Z", "periodEnd": "2026-11-20T23:00:00Z"} {
		if v, _ := d.Get(field); v.String() != want && v.String() != `"`+want+`"` {
			t.Errorf("detail %s = %v, want %s", field, v, want)
		}
	}
}

// TestUpstreamParent: the upstream run a run its upstreams opened counts
// as started by: the last period of the last known upstream rule.
func TestUpstreamParent(t *testing.T) {
	hourly := runtest.Pipeline(t, `pipeline: {id: hourly}
schedule: {cron: "0 * * * *"}
job: {type: glue, config: {jobName: x}}
`)
	daily := runtest.Pipeline(t, `pipeline: {id: daily}
schedule: {cron: "0 6 * * *"}
job: {type: glue, config: {jobName: x}}
`)
	down := runtest.Pipeline(t, `pipeline: {id: down}
validation:
  rules:
    - {check: upstream, pipeline: daily, offset: -1d}
    - {check: upstream, pipeline: hourly}
job: {type: glue, config: {jobName: x}}
`)
	per := schedule.Daily(schedule.Date{Year: 2026, Month: 11, Day: 20})
	ups := map[string]*pipeline.Pipeline{"daily": daily, "hourly": hourly}
	id, up, ok := UpstreamParent(down, ups, per)
	if !ok || id != "hourly" || up.String() != "2026-11-20T23" {
		t.Fatalf("UpstreamParent = %s %s %v, want the hourly upstream's last hour 2026-11-20T23", id, up, ok)
	}
	delete(ups, "hourly") // removed: the one before it
	if id, up, ok = UpstreamParent(down, ups, per); !ok || id != "daily" || up.String() != "2026-11-19" {
		t.Fatalf("UpstreamParent = %s %s %v, want daily's 2026-11-19 (offset -1d)", id, up, ok)
	}
	if _, _, ok = UpstreamParent(down, nil, per); ok {
		t.Fatal("a parent named with no upstream config known")
	}
	notes := WithParent([]run.Note{{Type: event.JobTriggered, Detail: run.Detail("attempt", 1)}, {Type: event.JobCompleted}}, "daily", up)
	if v, _ := notes[0].Detail.Get("parentPipeline"); v.String() != `"daily"` && v.String() != "daily" {
		t.Errorf("parentPipeline %v", v)
	}
	if v, _ := notes[0].Detail.Get("attempt"); v.String() != "1" {
		t.Errorf("WithParent lost attempt: %v", v)
	}
	if notes[1].Detail.Len() != 0 {
		t.Errorf("WithParent touched a %s note", notes[1].Type)
	}
}

// TestNamesParent: only a run its upstreams opened names an upstream
// parent on its JOB_TRIGGERED; every other cause names none.
func TestNamesParent(t *testing.T) {
	for _, c := range []struct {
		cause run.Cause
		want  bool
	}{
		{run.CauseUpstream, true},
		{run.CauseCron, false},
		{run.CauseSensor, false},
		{run.CauseRerun, false},
		{run.CauseRecovered, false},
		{run.CauseResume, false},
		{run.CauseBackfill, false},
		{"", false},
	} {
		if got := NamesParent(run.Run{Cause: c.cause}); got != c.want {
			t.Errorf("NamesParent(cause %q) = %v, want %v", c.cause, got, c.want)
		}
	}
}
