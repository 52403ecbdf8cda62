package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// daily runs at 06:00 UTC with a 07:00 SLA, on the period's own sensor
// ("ready#2026-03-05" for 2026-03-05).
const daily = `
pipeline: {id: daily}
schedule: {cron: "0 6 * * *"}
validation:
  rules: [{key: ready, check: exists}]
sla: {deadline: "07:00"}
job: {type: glue, config: {jobName: daily}, pollInterval: 1m, maxManualReruns: 1}
`

func newBackfillFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	if _, err := f.eng.ApplyConfig(t.Context(), "daily.yaml", []byte(daily)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06", "2026-03-07"} {
		if _, err := f.eng.PutSensor(t.Context(), "daily", "ready#"+d, obj("ok", true)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// backfillRuns returns the pipeline's runs started by a backfill.
func backfillRuns(t *testing.T, f *fixture) (all, active int) {
	t.Helper()
	rs, err := f.st.RunList(t.Context(), store.RunListParams{PipelineID: "daily"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Cause == run.CauseBackfill {
			all++
			if !r.State.Terminal() {
				active++
			}
		}
	}
	return all, active
}

// driveBackfill advances the clock a minute at a time, processing due
// timers, until the backfill ends (bounded), and fails when more than
// maxActive backfilled runs are ever active at once. restartAt > 0
// restarts the engine on its store after that many steps.
func driveBackfill(t *testing.T, f *fixture, id string, maxActive, restartAt int) store.Backfill {
	t.Helper()
	for i := 0; i < 120; i++ {
		if i == restartAt && restartAt > 0 {
			_ = f.st.Close()
			f.open(t)
		}
		if _, err := f.eng.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, active := backfillRuns(t, f); active > maxActive {
			t.Fatalf("step %d: %d backfilled runs active, maxActive %d", i, active, maxActive)
		}
		bf, err := f.eng.Backfill(t.Context(), "daily", id)
		if err != nil {
			t.Fatal(err)
		}
		if bf.State != backfill.Running {
			return bf
		}
		f.clk.Advance(time.Minute)
	}
	t.Fatal("the backfill did not end in 120 minutes")
	return store.Backfill{}
}

// TestBackfillRunsMissingDays: five missing days run at most two at once,
// each on its own period's sensor, with no SLA alert for deadlines past
// at request time, and complete with their counts; a restart midway
// starts no period twice.
func TestBackfillRunsMissingDays(t *testing.T) {
	for _, restart := range []int{0, 2} {
		f := newBackfillFixture(t)
		req := backfill.Request{From: "2026-03-03", To: "2026-03-07", Only: backfill.OnlyMissing, MaxActive: 2}
		dry, err := f.eng.RequestBackfill(t.Context(), "daily", req, true, "test")
		if err != nil || dry.Backfill != nil || len(dry.Periods) != 5 || !dry.Periods[0].Run {
			t.Fatalf("dry run: %+v, %v", dry, err)
		}
		if bfs, _ := f.eng.Backfills(t.Context(), "daily"); len(bfs) != 0 {
			t.Fatal("a dry run stored a backfill")
		}
		plan, err := f.eng.RequestBackfill(t.Context(), "daily", req, false, "operator:test")
		if err != nil || plan.Backfill == nil {
			t.Fatalf("RequestBackfill: %+v, %v", plan, err)
		}
		if _, err := f.eng.RequestBackfill(t.Context(), "daily", req, false, "operator:test"); !errors.Is(err, engine.ErrBackfillRunning) {
			t.Fatalf("a second backfill while one runs: %v", err)
		}
		bf := driveBackfill(t, f, plan.Backfill.ID, 2, restart)
		if c := backfill.CountPeriods(bf.Periods); bf.State != backfill.Completed || c.Succeeded != 5 {
			t.Fatalf("restart %d: backfill %s, %+v", restart, bf.State, c)
		}
		if n := f.jobs.starts.Load(); n != 5 {
			t.Fatalf("restart %d: %d job starts, want 5", restart, n)
		}
		if all, _ := backfillRuns(t, f); all != 5 {
			t.Fatalf("%d backfilled runs, want 5", all)
		}
		for _, typ := range []event.Type{event.SLAWarning, event.SLABreach, event.SLAMet} {
			if evs := f.events(t, typ); len(evs) != 0 {
				t.Fatalf("restart %d: %s for a backfilled period: %s", restart, typ, evs[0].Message)
			}
		}
		if n := len(f.events(t, event.BackfillPeriodStarted)); n != 5 {
			t.Fatalf("%d BACKFILL_PERIOD_STARTED, want 5", n)
		}
		done := f.events(t, event.BackfillCompleted)
		if len(done) != 1 {
			t.Fatalf("%d BACKFILL_COMPLETED", len(done))
		}
		if v, _ := done[0].Detail.Get("succeeded"); v.String() != "5" {
			t.Fatalf("BACKFILL_COMPLETED detail %v", done[0].Detail)
		}
	}
}

// TestBackfillRerunsWithoutManualBudget: --only all reruns ended periods
// as ledger source "backfill", past maxManualReruns, and a cancel stops
// new periods while the running ones finish.
func TestBackfillRerunsWithoutManualBudget(t *testing.T) {
	f := newBackfillFixture(t)
	first, err := f.eng.RequestBackfill(t.Context(), "daily", backfill.Request{From: "2026-03-03", To: "2026-03-04", Only: backfill.OnlyMissing, MaxActive: 2}, false, "t")
	if err != nil {
		t.Fatal(err)
	}
	driveBackfill(t, f, first.Backfill.ID, 2, 0)
	for range 2 { // twice: the budget of one manual rerun is not drawn on
		plan, err := f.eng.RequestBackfill(t.Context(), "daily", backfill.Request{From: "2026-03-03", To: "2026-03-04", Only: backfill.OnlyAll, MaxActive: 1, Reverse: true}, false, "t")
		if err != nil {
			t.Fatal(err)
		}
		if bf := driveBackfill(t, f, plan.Backfill.ID, 1, 0); backfill.CountPeriods(bf.Periods).Succeeded != 2 || bf.Periods[0].Period != "2026-03-04" {
			t.Fatalf("rerun backfill: %+v", bf)
		}
	}
	ledger, err := f.st.LedgerList(t.Context(), run.Key{PipelineID: "daily", ScheduleID: "cron", Period: "2026-03-03"})
	if err != nil || len(ledger) != 2 || ledger[0].Source != run.ReasonBackfill || ledger[1].Reason != run.ReasonBackfill {
		t.Fatalf("ledger %+v, %v", ledger, err)
	}
	if n := f.jobs.starts.Load(); n != 6 {
		t.Fatalf("%d job starts, want 6", n)
	}

	// Cancel midway: the one running period finishes, nothing else starts.
	plan, err := f.eng.RequestBackfill(t.Context(), "daily", backfill.Request{From: "2026-03-05", To: "2026-03-07", Only: backfill.OnlyMissing, MaxActive: 1}, false, "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	bf, err := f.eng.CancelBackfill(t.Context(), "daily", "", "operator:t")
	if err != nil || bf.State != backfill.Cancelled || bf.ID != plan.Backfill.ID {
		t.Fatalf("CancelBackfill: %+v, %v", bf, err)
	}
	for range 10 {
		f.clk.Advance(time.Minute)
		if _, err := f.eng.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	all, active := backfillRuns(t, f)
	if all != 3 || active != 0 {
		t.Fatalf("after cancel: %d backfilled runs (%d active), want 3 (0)", all, active)
	}
	if n := len(f.events(t, event.BackfillCancelled)); n != 1 {
		t.Fatalf("%d BACKFILL_CANCELLED", n)
	}
}

// TestBackfillRefusesBadRanges names the field at fault.
func TestBackfillRefusesBadRanges(t *testing.T) {
	f := newBackfillFixture(t)
	for _, req := range []backfill.Request{
		{From: "2026-03-05", To: "2026-03-04", Only: backfill.OnlyMissing, MaxActive: 1},
		{From: "2026-03-05", To: "2026-03-12", Only: backfill.OnlyMissing, MaxActive: 1},
		{From: "2026-03-05T01", To: "2026-03-05T02", Only: backfill.OnlyMissing, MaxActive: 1},
	} {
		if _, err := f.eng.RequestBackfill(t.Context(), "daily", req, false, "t"); !errors.Is(err, engine.ErrInvalidRequest) {
			t.Fatalf("%+v: %v", req, err)
		}
	}
}

// TestBackfillSparesPastSLA: a period whose run failed before its SLA
// deadline (so no SLA alert was due: its failure said it) and that a
// backfill reruns after the deadline raises no SLA_BREACH, neither by a
// timer nor as a verdict; without the backfill's exemption the rerun
// would arm a breach timer already due.
func TestBackfillSparesPastSLA(t *testing.T) {
	f := newFixture(t)
	f.clk.Set(time.Date(2026, 3, 9, 5, 0, 0, 0, time.UTC))
	doc := strings.Replace(daily, `schedule: {cron: "0 6 * * *"}`, `schedule: {cron: "0 6 * * *", evaluation: {window: 30m, interval: 10m}}`, 1)
	if _, err := f.eng.ApplyConfig(t.Context(), "daily.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	for f.clk.Now().Before(time.Date(2026, 3, 9, 9, 0, 0, 0, time.UTC)) {
		if _, err := f.eng.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		f.clk.Advance(5 * time.Minute)
	}
	r, err := f.st.RunGet(t.Context(), run.Key{PipelineID: "daily", ScheduleID: "cron", Period: "2026-03-09"})
	if err != nil || r.State != run.FailedFinal {
		t.Fatalf("2026-03-09 before the backfill: %+v, %v", r, err)
	}
	if evs := f.events(t, event.SLABreach); len(evs) != 0 {
		t.Fatalf("an SLA_BREACH before the backfill: %s", evs[0].Message)
	}
	if _, err := f.eng.PutSensor(t.Context(), "daily", "ready#2026-03-09", obj("ok", true)); err != nil {
		t.Fatal(err)
	}
	plan, err := f.eng.RequestBackfill(t.Context(), "daily", backfill.Request{From: "2026-03-09", To: "2026-03-09", Only: backfill.OnlyFailed, MaxActive: 1}, false, "t")
	if err != nil {
		t.Fatal(err)
	}
	if bf := driveBackfill(t, f, plan.Backfill.ID, 1, 0); backfill.CountPeriods(bf.Periods).Succeeded != 1 {
		t.Fatalf("backfill %+v", bf)
	}
	for _, typ := range []event.Type{event.SLAWarning, event.SLABreach, event.SLAMet} {
		if evs := f.events(t, typ); len(evs) != 0 {
			t.Fatalf("%s for the backfilled period: %s", typ, evs[0].Message)
		}
	}
}

// TestBackfillWakesOnResume: a backfill of a paused pipeline starts
// nothing while the pause lasts, and its next period starts in the
// resume's instant, not at the backfill's next poll.
func TestBackfillWakesOnResume(t *testing.T) {
	f := newBackfillFixture(t)
	if err := f.eng.Pause(t.Context(), "daily", time.Time{}, "test"); err != nil {
		t.Fatal(err)
	}
	req := backfill.Request{From: "2026-03-03", To: "2026-03-04", Only: backfill.OnlyMissing, MaxActive: 1}
	if _, err := f.eng.RequestBackfill(t.Context(), "daily", req, false, "operator:test"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := f.eng.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		if all, _ := backfillRuns(t, f); all != 0 {
			t.Fatalf("%d backfilled runs while paused", all)
		}
		f.clk.Advance(time.Minute)
	}
	if err := f.eng.Resume(t.Context(), "daily", "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if all, _ := backfillRuns(t, f); all != 1 {
		t.Fatalf("%d backfilled runs in the resume's instant, want 1", all)
	}
}

// interleaving is a store that, just before the first commit that only
// re-arms the backfill timer (a firing that judged its periods), runs
// between: another decision committing after the firing read its facts.
type interleaving struct {
	store.Store
	between func()
}

func (s *interleaving) Commit(ctx context.Context, c store.Change) error {
	if s.between != nil && len(c.Runs) == 0 && len(c.Timers) == 1 && c.Timers[0].Timer.Kind == string(run.TimerBackfill) {
		between := s.between
		s.between = nil
		between()
	}
	return s.Store.Commit(ctx, c)
}

// TestBackfillWakeIsNotLostToAFiringRacingIt: the backfill timer fires
// and reads its period's run still active; before it commits its next
// look (a Poll later), the run ends and wakes it. The firing must not
// commit over the wake: it decides again, sees the run ended and
// completes the backfill in that instant (serve and the AWS functions
// process timers concurrently; the AWS end-to-end test saw the backfill
// complete a Poll late).
func TestBackfillWakeIsNotLostToAFiringRacingIt(t *testing.T) {
	f := newBackfillFixture(t)
	req := backfill.Request{From: "2026-03-03", To: "2026-03-03", Only: backfill.OnlyMissing, MaxActive: 1}
	bf, err := f.eng.RequestBackfill(t.Context(), "daily", req, false, "operator:test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.RunDue(t.Context()); err != nil { // the period starts; its poll is a minute away
		t.Fatal(err)
	}
	timers := func(kind run.TimerFamily) store.Timer {
		t.Helper()
		ts, err := f.st.TimerList(t.Context(), store.TimerListParams{Kind: string(kind)})
		if err != nil || len(ts) != 1 {
			t.Fatalf("%s timers: %v, %v", kind, ts, err)
		}
		return ts[0]
	}
	fire := timers(run.TimerBackfill)
	var poll store.Timer
	if ts, err := f.st.TimerList(t.Context(), store.TimerListParams{Kind: string(run.StepPoll)}); err != nil || len(ts) != 1 {
		t.Fatalf("poll timers: %v, %v", ts, err)
	} else {
		poll = ts[0]
	}
	if !poll.DueAt.Before(fire.DueAt) {
		t.Fatalf("the poll (%s) is not due before the backfill's next look (%s)", poll.DueAt, fire.DueAt)
	}
	f.clk.Set(fire.DueAt)
	st := &interleaving{Store: f.st}
	eng := engine.New(engine.Options{Store: st, Clock: f.clk, Jobs: f.jobs})
	if err := eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	st.between = func() {
		if err := eng.ProcessTimer(t.Context(), poll); err != nil {
			t.Error(err)
		}
	}
	if err := eng.ProcessTimer(t.Context(), fire); err != nil {
		t.Fatal(err)
	}
	if st.between != nil {
		t.Fatal("the firing committed nothing: the race was not played")
	}
	if _, active := backfillRuns(t, f); active != 0 {
		t.Fatalf("%d backfilled runs still active after the poll", active)
	}
	got, err := eng.Backfill(t.Context(), "daily", bf.Backfill.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != backfill.Completed || !got.EndedAt.Equal(fire.DueAt) {
		t.Fatalf("backfill %s ended at %s; want completed at %s, when its run ended", got.State, got.EndedAt, fire.DueAt)
	}
}
