package engine

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// Only the timers whose decisions read and write their own pipeline's
// records are taken beside others (RunDueOn): a pipeline with upstreams
// reads their runs, and the dependency, backfill, pause, silence and
// maintenance timers reach across pipelines.
func TestBesideOthers(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "e.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := New(Options{Store: st, Clock: clock.NewVirtual(time.Date(2026, 3, 10, 5, 0, 0, 0, time.UTC)), Passive: true})
	if err := e.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	for id, doc := range map[string]string{
		"up":   "pipeline: {id: up}\nschedule: {cron: \"0 6 * * *\"}\njob: {type: glue, config: {jobName: j}}\n",
		"down": "pipeline: {id: down}\nschedule: {cron: \"0 7 * * *\"}\nvalidation: {rules: [{check: upstream, pipeline: up}]}\njob: {type: glue, config: {jobName: j}}\n",
	} {
		if _, err := e.ApplyConfig(t.Context(), id+".yaml", []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	key := func(id string) run.Key { return run.Key{PipelineID: id, ScheduleID: "cron", Period: "2026-03-10"} }
	for _, c := range []struct {
		kind, pipeline string
		want           bool
	}{
		{string(run.StepEvaluate), "up", true},
		{string(run.StepTrigger), "up", true},
		{string(run.StepPoll), "up", true},
		{string(run.TimerCron), "up", true},
		{string(run.TimerSLAWarning), "up", true},
		{string(run.TimerSLABreach), "up", true},
		{string(run.TimerPeriod), "up", true},
		{string(run.StepEvaluate), "down", false}, // reads up's runs
		{string(run.TimerCron), "down", false},
		{string(run.TimerDownstreams), "up", false},
		{string(run.TimerUpstream), "down", false},
		{string(run.TimerRelease), "up", false},
		{string(run.TimerBackfill), "up", false},
		{string(run.TimerResume), "up", false},
		{string(run.TimerSilenceEnd), "", false},
		{string(run.TimerMaintenanceEnd), "", false},
		{string(run.StepEvaluate), "unknown", false}, // no config known
	} {
		tm := store.Timer{Key: c.kind + "/" + c.pipeline, Kind: c.kind, Run: key(c.pipeline)}
		if got := e.besideOthers(tm); got != c.want {
			t.Errorf("besideOthers(%s of %q) = %v, want %v", c.kind, c.pipeline, got, c.want)
		}
	}
}
