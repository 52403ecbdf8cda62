package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/watchdog"
)

const fxClose = `
pipeline: {id: fx, owner: treasury}
schedule:
  trigger: {key: ready, check: exists}
validation:
  rules: [{key: ready, check: exists}]
sla: {deadline: "+1d 06:00", expectedDuration: 1h}
job: {type: glue, config: {jobName: fx}, pollInterval: 1m}
`

// TestReloadArmsNoSLAForSettledOpenPeriods: a reload arms the SLA timers
// of periods still open (a "+1d" deadline of yesterday), except for a
// period whose run completed or failed, or that had its verdict before a
// rerun reopened it: such a period says nothing more, and keeps no timer.
func TestReloadArmsNoSLAForSettledOpenPeriods(t *testing.T) {
	f := newFixture(t)
	apply := func(owner string) {
		t.Helper()
		if _, err := f.eng.ApplyConfig(t.Context(), "fx.yaml", []byte(strings.Replace(fxClose, "treasury", owner, 1))); err != nil {
			t.Fatal(err)
		}
	}
	day10 := run.Key{PipelineID: "fx", ScheduleID: "stream", Period: "2026-03-10"}
	day11 := run.Key{PipelineID: "fx", ScheduleID: "stream", Period: "2026-03-11"}
	timers := func(k run.Key) (warning, breach bool) {
		t.Helper()
		has := func(key string) bool {
			_, err := f.st.TimerGet(t.Context(), key)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			return err == nil
		}
		return has("sla-warning/" + k.PipelineID + "/" + k.ScheduleID + "/" + k.Period), has(watchdog.SLABreachTimerKey(k))
	}
	apply("treasury")
	if w, b := timers(day10); !w || !b {
		t.Fatalf("2026-03-10 at load: warning timer %v, breach timer %v; want both", w, b)
	}
	// A second pipeline whose 2026-03-10 run fails: its rules wait for
	// rows that never come, and the evaluation window closes.
	failing := strings.NewReplacer("id: fx,", "id: fxv,", "rules: [{key: ready, check: exists}]", "rules: [{key: ready, check: exists}, {key: rows, check: exists}]\n  ", "schedule:\n", "schedule:\n  evaluation: {window: 10m, interval: 5m}\n").Replace(fxClose)
	if _, err := f.eng.ApplyConfig(t.Context(), "fxv.yaml", []byte(failing)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.PutSensor(t.Context(), "fxv", "ready", obj("date", "2026-03-10")); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(10 * time.Minute)
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	failed := run.Key{PipelineID: "fxv", ScheduleID: "stream", Period: "2026-03-10"}
	if r, err := f.st.RunGet(t.Context(), failed); err != nil || r.State != run.FailedFinal {
		t.Fatalf("fxv 2026-03-10: %+v %v", r, err)
	}
	if _, err := f.eng.PutSensor(t.Context(), "fx", "ready", obj("date", "2026-03-10")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Minute)
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(f.events(t, event.SLAMet)); n != 1 {
		t.Fatalf("%d SLA_MET, want 1", n)
	}

	// Past midnight, 2026-03-10's deadline (06:00 on the 11th) is still
	// ahead, but its run completed: a reload arms 2026-03-11 only.
	f.clk.Set(time.Date(2026, 3, 11, 0, 30, 0, 0, time.UTC))
	apply("treasury-ops")
	if w, b := timers(day11); !w || !b {
		t.Fatalf("2026-03-11 after the reload: warning timer %v, breach timer %v; want both", w, b)
	}
	if w, b := timers(day10); w || b {
		t.Fatalf("completed 2026-03-10 after the reload: warning timer %v, breach timer %v; want none", w, b)
	}
	if _, err := f.eng.ApplyConfig(t.Context(), "fxv.yaml", []byte(strings.Replace(failing, "treasury", "treasury-ops", 1))); err != nil {
		t.Fatal(err)
	}
	if w, b := timers(failed); w || b {
		t.Fatalf("failed 2026-03-10 after the reload: warning timer %v, breach timer %v; want none", w, b)
	}

	// New data reopens 2026-03-10 (late data → rerun): its run is going
	// again, but the period had its verdict; another reload arms nothing.
	if _, err := f.eng.PutSensor(t.Context(), "fx", "ready", obj("date", "2026-03-10", "rows", 2)); err != nil {
		t.Fatal(err)
	}
	if r, err := f.st.RunGet(t.Context(), day10); err != nil || r.State.Terminal() {
		t.Fatalf("2026-03-10 not reopened: %+v %v", r, err)
	}
	apply("treasury")
	if w, b := timers(day10); w || b {
		t.Fatalf("reopened 2026-03-10 after a reload: warning timer %v, breach timer %v; want none", w, b)
	}
}

// TestWatchdogRearmsALostSLATimer: the watchdog's sla-scheduling check is
// the net behind the engine's arming — a period whose breach timer is gone
// (lost, say) gets its timers back at the next pass.
func TestWatchdogRearmsALostSLATimer(t *testing.T) {
	f := newFixture(t)
	if _, err := f.eng.ApplyConfig(t.Context(), "fx.yaml", []byte(fxClose)); err != nil {
		t.Fatal(err)
	}
	day10 := run.Key{PipelineID: "fx", ScheduleID: "stream", Period: "2026-03-10"}
	warnKey, breachKey := "sla-warning/fx/stream/2026-03-10", watchdog.SLABreachTimerKey(day10)
	lost := store.Change{TimerDeletes: []store.TimerDelete{{Key: warnKey}, {Key: breachKey}}}
	if err := f.st.Commit(t.Context(), lost); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.WatchdogPass(t.Context(), 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{warnKey, breachKey} {
		if tm, err := f.st.TimerGet(t.Context(), k); err != nil {
			t.Fatalf("timer %s after the pass: %v", k, err)
		} else if k == breachKey && !tm.DueAt.Equal(time.Date(2026, 3, 11, 6, 0, 0, 0, time.UTC)) {
			t.Fatalf("breach timer due %v", tm.DueAt)
		}
	}
}
