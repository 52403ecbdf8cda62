package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// failingTimers is the real store with one read broken: TimerList fails
// while broken is set.
type failingTimers struct {
	store.Store
	broken bool
}

func (f *failingTimers) TimerList(ctx context.Context, p store.TimerListParams) ([]store.Timer, error) {
	if f.broken {
		return nil, errors.New("disk on fire")
	}
	return f.Store.TimerList(ctx, p)
}

func TestWatchdogDegradedOncePerFailure(t *testing.T) {
	f := newFixture(t)
	broken := &failingTimers{Store: f.st, broken: true}
	eng := newEngineOn(t, f, broken)

	degraded := func() int { return len(f.events(t, event.WatchdogDegraded)) }
	for i := 0; i < 3; i++ {
		rep, err := eng.WatchdogPass(t.Context(), 30*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Degraded() || len(rep.Result.Failed) != 1 || rep.Result.Failed[0] != watchdog.CheckSLAScheduling {
			t.Fatalf("pass %d: failed checks %v", i, rep.Result.Failed)
		}
		f.clk.Advance(5 * time.Minute)
	}
	if n := degraded(); n != 1 {
		t.Fatalf("%d WATCHDOG_DEGRADED for one persistent failure, want 1", n)
	}
	broken.broken = false
	rep, err := eng.WatchdogPass(t.Context(), 30*time.Minute)
	if err != nil || rep.Degraded() {
		t.Fatalf("healthy pass: %v %v", rep.Result.Failed, err)
	}
	at, ok, err := eng.LastWatchdogPass(t.Context())
	if err != nil || !ok || !at.Equal(f.clk.Now()) {
		t.Fatalf("last pass = %v %v %v", at, ok, err)
	}
	broken.broken = true
	if _, err := eng.WatchdogPass(t.Context(), 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := degraded(); n != 2 {
		t.Fatalf("a failure after recovery raised %d events in all, want 2", n)
	}
}

// TestWatchdogDegradedOnceForTwoPassesAtOnce: two processes' passes find
// the same failure at once (a holder whose lease expired mid-pass, and the
// process that took it over). The second to commit must see the first's
// degraded marker — its raise is conditional on the marker's absence — and
// raise nothing: one WATCHDOG_DEGRADED, not two.
func TestWatchdogDegradedOnceForTwoPassesAtOnce(t *testing.T) {
	f := newFixture(t)
	other := newEngineOn(t, f, &failingTimers{Store: f.st, broken: true})
	raises := func(c store.Change) bool {
		return slices.ContainsFunc(c.Events, func(e event.Event) bool { return e.Type == event.WatchdogDegraded })
	}
	m := &meddlingStore{Store: &failingTimers{Store: f.st, broken: true}, match: raises, meddle: func() {
		if _, err := other.WatchdogPass(t.Context(), 30*time.Minute); err != nil {
			t.Errorf("the other process's pass: %v", err)
		}
	}}
	eng := newEngineOn(t, f, m)
	rep, err := eng.WatchdogPass(t.Context(), 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !m.done.Load() {
		t.Fatal("the pass raised nothing: the test did not race two raises")
	}
	if !rep.Degraded() {
		t.Fatalf("the pass is not degraded: %v", rep.Result.Failed)
	}
	if n := len(f.events(t, event.WatchdogDegraded)); n != 1 {
		t.Fatalf("%d WATCHDOG_DEGRADED for one failure found by two passes at once, want 1", n)
	}
}

// applyNightly loads a daily pipeline whose cron ticks at 09:00.
func applyNightly(t *testing.T, f *fixture) {
	t.Helper()
	const cron = `
pipeline: {id: nightly}
schedule: {cron: "0 9 * * *"}
validation: {rules: [{key: x, check: exists}]}
job: {type: glue, config: {jobName: j}}
`
	if _, err := f.eng.ApplyConfig(t.Context(), "nightly.yaml", []byte(cron)); err != nil {
		t.Fatal(err)
	}
}

// nightlyRunWritten writes the run of nightly's 2026-03-10, as another
// process would, now.
func nightlyRunWritten(t *testing.T, f *fixture) {
	t.Helper()
	r := run.Run{Key: run.Key{PipelineID: "nightly", ScheduleID: "cron", Period: "2026-03-10"}, State: run.Evaluating, CreatedAt: f.clk.Now(), UpdatedAt: f.clk.Now(), StateSince: f.clk.Now()}
	if err := f.st.Commit(t.Context(), store.Change{Runs: []store.RunWrite{{Run: r}}}); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotSeesOtherWriters: the watchdog keeps its snapshot
// between passes and reads only what changed; a run written by another
// process (a replica) between two passes must be seen by the next one.
func TestIncrementalSnapshotSeesOtherWriters(t *testing.T) {
	f := newFixture(t)
	applyNightly(t, f)
	// Another process owns the timers: drop the cron tick so this engine
	// never starts the 09:00 run itself.
	if err := f.st.Commit(t.Context(), store.Change{TimerDeletes: []store.TimerDelete{{Key: "cron/nightly"}}}); err != nil {
		t.Fatal(err)
	}
	f.clk.Set(t0.Add(75 * time.Minute)) // 09:15, the tick at 09:00 started nothing
	if _, err := f.eng.WatchdogPass(t.Context(), 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := len(f.events(t, event.ScheduleMissed)); n != 1 {
		t.Fatalf("SCHEDULE_MISSED = %d, want 1", n)
	}
	// A replica creates the run.
	f.clk.Advance(time.Minute)
	nightlyRunWritten(t, f)
	f.clk.Advance(5 * time.Minute)
	if _, err := f.eng.WatchdogPass(t.Context(), 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := len(f.events(t, event.ScheduleRecovered)); n != 1 {
		t.Fatalf("SCHEDULE_RECOVERED = %d after a replica created the run, want 1", n)
	}
}

// TestTicksInAnyPauseWindowAreNotMissed: ticks skipped on purpose during
// a pause are not missed schedules — in the pause that ended last and in
// earlier ones. A resume starts only the last tick's period (pause.PlanResume),
// so the other ticks of a long pause leave periods without runs that the
// watchdog must recognise by the pipeline's pause windows.
func TestTicksInAnyPauseWindowAreNotMissed(t *testing.T) {
	f := newFixture(t)
	const hourly = `
pipeline: {id: hourly}
schedule: {cron: "0 * * * *"}
validation: {rules: [{key: x, check: exists}]}
job: {type: glue, config: {jobName: j}}
`
	ctx := t.Context()
	if _, err := f.eng.ApplyConfig(ctx, "hourly.yaml", []byte(hourly)); err != nil {
		t.Fatal(err)
	}
	step := func(to time.Duration) {
		t.Helper()
		f.clk.Set(t0.Add(to))
		if _, err := f.eng.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	step(30 * time.Minute)
	// Two pauses, each over several ticks: 09:00-10:00 and 12:00-13:00
	// start nothing; the resumes start 11 and 14.
	for _, p := range [][2]time.Duration{{30 * time.Minute, 3*time.Hour + 30*time.Minute}, {4*time.Hour + 30*time.Minute, 6*time.Hour + 30*time.Minute}} {
		step(p[0])
		if err := f.eng.Pause(ctx, "hourly", time.Time{}, "ops"); err != nil {
			t.Fatal(err)
		}
		step(p[1])
		if err := f.eng.Resume(ctx, "hourly", "ops"); err != nil {
			t.Fatal(err)
		}
	}
	step(7*time.Hour + 5*time.Minute) // 15:05: the 15:00 tick started its run
	if _, err := f.eng.WatchdogPass(ctx, 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	var missed []string
	for _, e := range f.events(t, event.ScheduleMissed) {
		if e.PipelineID == "hourly" {
			missed = append(missed, e.Date)
		}
	}
	if len(missed) != 0 {
		t.Fatalf("SCHEDULE_MISSED for %v: ticks inside a pause window", missed)
	}
	p, row, err := f.eng.Pipeline(ctx, "hourly")
	if err != nil || p == nil || len(row.PauseWindows) != 2 {
		t.Fatalf("pause windows %v (%v)", row.PauseWindows, err)
	}
}

// countingSensorReads is the real store counting SensorListChanged (a
// pass makes its reads at once).
type countingSensorReads struct {
	store.Store
	n atomic.Int64
}

func (c *countingSensorReads) SensorListChanged(ctx context.Context, p store.SensorListChangedParams) ([]store.Sensor, error) {
	c.n.Add(1)
	return c.Store.SensorListChanged(ctx, p)
}

// TestSnapshotReadsSensorsOnlyForTriggers: a pass over pipelines none of
// which is watched with a trigger reads no sensor; when one becomes
// watched (a dry-run trigger pipeline switched live), the next pass —
// incremental — reads the whole window again, and that pipeline's sensors
// whole (they were written unwatched, under the dry-run config), so
// trigger data that came before the previous pass is still recovered;
// the pass after reads the watched sensors alone.
func TestSnapshotReadsSensorsOnlyForTriggers(t *testing.T) {
	f := newFixture(t)
	counting := &countingSensorReads{Store: f.st}
	wd := newEngineOn(t, f, counting)
	const dry = "pipeline: {id: orders}\ndryRun: true\nschedule:\n  trigger: {key: orders-landed, check: exists}\njob: {type: glue, config: {jobName: orders}}\n"
	if _, err := f.eng.ApplyConfig(t.Context(), "orders.yaml", []byte(dry)); err != nil {
		t.Fatal(err)
	}
	// Trigger data nobody decided (written straight into the store).
	landed := store.Sensor{PipelineID: "orders", Key: "orders-landed", Data: obj("n", 1), ChangedAt: f.clk.Now(), WrittenAt: f.clk.Now()}
	if err := f.st.Commit(t.Context(), store.Change{Sensors: []store.SensorWrite{{Sensor: landed}}}); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(10 * time.Minute)
	if _, err := wd.WatchdogPass(t.Context(), 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := counting.n.Load(); n != 0 {
		t.Fatalf("a pass without a watched trigger pipeline read sensors %d times", n)
	}
	f.clk.Advance(time.Minute)
	if _, err := f.eng.ApplyConfig(t.Context(), "orders.yaml", []byte(orders)); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(5 * time.Minute)
	if _, err := wd.WatchdogPass(t.Context(), 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := counting.n.Load(); n != 2 {
		t.Fatalf("sensors read %d times, want twice (the watched ones, and orders' whole: its watched set changed)", n)
	}
	if n := len(f.events(t, event.TriggerRecovered)); n != 1 {
		t.Fatalf("TRIGGER_RECOVERED = %d for trigger data from before the last pass, want 1", n)
	}
	f.clk.Advance(5 * time.Minute)
	if _, err := wd.WatchdogPass(t.Context(), 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := counting.n.Load(); n != 3 {
		t.Fatalf("sensors read %d times after the next pass, want 3 (the watched ones once more)", n)
	}
}

// TestSensorsWatchedByTheirTrigger: the engine stores each sensor with
// whether the watchdog reads it (its pipeline's trigger key), and a
// config load that changes the trigger key stamps the row; one that does
// not keeps the stamp.
func TestSensorsWatchedByTheirTrigger(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.eng.ApplyConfig(ctx, "orders.yaml", []byte(orders)); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{"orders-landed": true, "orders-landed#2026-03-10": true, "orders-count": false} {
		if _, err := f.eng.PutSensor(ctx, "orders", key, obj("n", 1)); err != nil {
			t.Fatal(err)
		}
		got, err := f.st.SensorGet(ctx, "orders", key)
		if err != nil || got.Watched != want {
			t.Errorf("sensor %s stored with Watched %v (%v), want %v", key, got.Watched, err, want)
		}
	}
	_, row, err := f.eng.Pipeline(ctx, "orders")
	if err != nil || !row.WatchChangedAt.IsZero() {
		t.Fatalf("first load: WatchChangedAt %v (%v), want zero", row.WatchChangedAt, err)
	}
	f.clk.Advance(time.Minute)
	moved := strings.Replace(orders, "orders-landed", "orders-ready", 1)
	if _, err := f.eng.ApplyConfig(ctx, "orders.yaml", []byte(moved)); err != nil {
		t.Fatal(err)
	}
	if _, row, err = f.eng.Pipeline(ctx, "orders"); err != nil || !row.WatchChangedAt.Equal(f.clk.Now()) {
		t.Fatalf("trigger key changed: WatchChangedAt %v (%v), want %v", row.WatchChangedAt, err, f.clk.Now())
	}
	stamp := row.WatchChangedAt
	f.clk.Advance(time.Minute)
	if _, err := f.eng.ApplyConfig(ctx, "orders.yaml", []byte(moved+"# a comment\n")); err != nil {
		t.Fatal(err)
	}
	if _, row, err = f.eng.Pipeline(ctx, "orders"); err != nil || row.ConfigVersion != 3 || !row.WatchChangedAt.Equal(stamp) {
		t.Fatalf("same trigger: config version %d, WatchChangedAt %v (%v), want 3 and %v", row.ConfigVersion, row.WatchChangedAt, err, stamp)
	}
}

// TestWatchdogFailedReadKeepsTheRunsRead: a pass whose SLA-timer read
// fails still judges on the runs it did read. The checks that do not need
// the timers run (missed-schedules): on no runs they would report the
// period that has one as missed. The kept snapshot is dropped all the
// same (watchdog.Kept.Refresh), so the next pass reads the window whole.
func TestWatchdogFailedReadKeepsTheRunsRead(t *testing.T) {
	f := newFixture(t)
	applyNightly(t, f)
	f.clk.Set(t0.Add(75 * time.Minute)) // 09:15: the 09:00 tick's run exists
	nightlyRunWritten(t, f)
	broken := &failingTimers{Store: f.st, broken: true}
	eng := newEngineOn(t, f, broken)
	for pass := range 2 { // the first pass reads whole, the second too (the first failed)
		rep, err := eng.WatchdogPass(t.Context(), 30*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Result.Failed, []string{watchdog.CheckSLAScheduling}) {
			t.Fatalf("pass %d: failed checks %v, want sla-scheduling alone", pass, rep.Result.Failed)
		}
		if n := len(f.events(t, event.ScheduleMissed)); n != 0 {
			t.Fatalf("pass %d: SCHEDULE_MISSED = %d for a period that has its run", pass, n)
		}
		f.clk.Advance(5 * time.Minute)
	}
}
