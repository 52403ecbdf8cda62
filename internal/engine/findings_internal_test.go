package engine

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// TestFindingsAtOnceLogWhatOneByOneWould: a pass that commits its
// findings at the same time (by event shard) leaves the event log a pass
// committing them one by one leaves — every shard in the same order —
// and reports the same events in the same order.
func TestFindingsAtOnceLogWhatOneByOneWould(t *testing.T) {
	pass := func(atOnce int) (logged, raised []string) {
		saved := findingsAtOnce
		findingsAtOnce = atOnce
		defer func() { findingsAtOnce = saved }()
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "e.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		clk := clock.NewVirtual(time.Date(2026, 3, 10, 5, 0, 0, 0, time.UTC))
		e := New(Options{Store: st, Clock: clk, Passive: true})
		if err := e.Open(t.Context()); err != nil {
			t.Fatal(err)
		}
		var drop store.Change
		for i := range 40 { // more pipelines than shards: several findings per shard
			id := fmt.Sprintf("p%02d", i)
			doc := "pipeline: {id: " + id + "}\nschedule: {cron: \"0 6 * * *\"}\njob: {type: glue, config: {jobName: j}}\n"
			if _, err := e.ApplyConfig(t.Context(), id+".yaml", []byte(doc)); err != nil {
				t.Fatal(err)
			}
			drop.TimerDeletes = append(drop.TimerDeletes, store.TimerDelete{Key: cronTimerKey(id)})
		}
		if err := st.Commit(t.Context(), drop); err != nil { // the ticks never fire: every period is missed
			t.Fatal(err)
		}
		clk.Set(time.Date(2026, 3, 10, 7, 0, 0, 0, time.UTC))
		rep, err := e.WatchdogPass(t.Context(), 30*time.Minute)
		if err != nil || rep.Degraded() {
			t.Fatalf("pass: %v %v", err, rep.Result.Failed)
		}
		for _, ev := range rep.Raised {
			raised = append(raised, string(ev.Type)+" "+ev.PipelineID)
		}
		page, err := st.EventList(t.Context(), store.EventListParams{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range page.Events {
			logged = append(logged, string(ev.Type)+" "+ev.PipelineID+" "+ev.Date)
		}
		return logged, raised
	}
	wantLog, wantRaised := pass(1)
	gotLog, gotRaised := pass(8)
	missed := 0
	for _, r := range wantRaised {
		if r[:len(event.ScheduleMissed)] == string(event.ScheduleMissed) {
			missed++
		}
	}
	if missed != 40 {
		t.Fatalf("one by one: %d SCHEDULE_MISSED, want 40: %v", missed, wantRaised)
	}
	if fmt.Sprint(gotLog) != fmt.Sprint(wantLog) || fmt.Sprint(gotRaised) != fmt.Sprint(wantRaised) {
		t.Fatalf("at once:\nlog    %v\nraised %v\none by one:\nlog    %v\nraised %v", gotLog, gotRaised, wantLog, wantRaised)
	}
}
