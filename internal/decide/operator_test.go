package decide

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/store"
)

// The operator's inputs — a backfill's request, cancel and timer step,
// pause, resume and its timer, a step's handoff — as the engine decides
// them: facts in (named as the engine names them, round after round),
// outcome out.

// rulesOpt are the rule options the tests decide with.
var rulesOpt = rule.Options{}

// cronDoc runs a daily period at 06:00 with a rule on "landed".
const cronDoc = `
pipeline: {id: c1}
schedule: {cron: '0 6 * * *'}
validation:
  rules: [{key: landed, check: exists}]
job: {type: command, config: {command: /bin/true}}
`

// rounds reads what name names, round after round as the engine does,
// until a round names nothing new.
func (w world) rounds(name func(f *Facts) needs.Set) *Facts {
	f := w.facts(needs.Set{})
	for range 4 {
		n := name(f)
		if n.Minus(f.Asked).Empty() {
			break
		}
		n.Add(f.Asked)
		f = w.facts(n)
	}
	return f
}

// backfillNeeds names a request's needs as the engine does: the range's
// start once the trigger sensors are read.
func (w world) backfillNeeds(id string, req backfill.Request, now time.Time) func(*Facts) needs.Set {
	return func(f *Facts) needs.Set {
		p, start := w.configs(id), ""
		if p != nil {
			if periods, err := BackfillRange(f, p, req, now); err == nil {
				start = backfill.RangeStart(periods)
			}
		}
		return needs.BackfillRequest(p, id, start)
	}
}

func hasTimer(o *Outcome, key string, at time.Time) bool {
	return slices.ContainsFunc(o.C.Timers, func(w store.TimerWrite) bool { return w.Timer.Key == key && w.Timer.DueAt.Equal(at) })
}

func deletesTimer(o *Outcome, key string) bool {
	return slices.ContainsFunc(o.C.TimerDeletes, func(d store.TimerDelete) bool { return d.Key == key })
}

func TestBackfillRequest(t *testing.T) {
	now := runtest.T0
	req := backfill.Request{From: "2026-03-07", To: "2026-03-09", Only: backfill.OnlyAll, MaxActive: 1}
	for _, c := range []struct {
		name      string
		req       func(*backfill.Request)
		dryRun    bool
		stored    []store.Backfill
		pipeline  string // "": c1
		wantErr   error
		wantID    string // "": nothing stored
		wantFirst string // the first period in run order
	}{
		{name: "stored with its timer due now", wantID: "1", wantFirst: "2026-03-07"},
		{name: "numbered past the greatest id", stored: []store.Backfill{{PipelineID: "c1", ID: "2", State: backfill.Completed}, {PipelineID: "c1", ID: "x", State: backfill.Cancelled}, {PipelineID: "c1", ID: "1", State: backfill.Cancelled}}, wantID: "3", wantFirst: "2026-03-07"},
		{name: "newest first, named earliest first", req: func(r *backfill.Request) { r.Reverse = true }, wantID: "1", wantFirst: "2026-03-09"},
		{name: "one running refuses another", stored: []store.Backfill{{PipelineID: "c1", ID: "1", State: backfill.Running}}, wantErr: ErrBackfillRunning},
		{name: "a dry run stores nothing", dryRun: true},
		{name: "a reversed range is refused", req: func(r *backfill.Request) { r.From, r.To = r.To, r.From }, wantErr: ErrInvalidRequest},
		{name: "an unknown pipeline", pipeline: "nope", wantErr: ErrUnknownPipeline},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, cronDoc)
			w.backfills = c.stored
			id := "c1"
			if c.pipeline != "" {
				id = c.pipeline
			}
			r := req
			if c.req != nil {
				c.req(&r)
			}
			in := BackfillRequestIn{PipelineID: id, Request: r, DryRun: c.dryRun, By: "op", Env: Env{NewID: ids()}}
			o, v, ok := decided(t, w, w.rounds(w.backfillNeeds(id, r, now)), BackfillRequest, in, now, c.wantErr)
			if !ok {
				return
			}
			if len(v.Periods) != 3 {
				t.Fatalf("planned %+v, want the 3 periods", v.Periods)
			}
			if c.wantID == "" {
				if !o.C.Empty() || v.Backfill != nil {
					t.Fatalf("outcome %+v answer %+v, want nothing stored", o.C, v.Backfill)
				}
				return
			}
			if len(o.C.Backfills) != 1 || v.Backfill == nil {
				t.Fatalf("backfills %+v answer %v, want one stored", o.C.Backfills, v.Backfill)
			}
			bf := o.C.Backfills[0].Backfill
			if bf.ID != c.wantID || bf.State != backfill.Running || bf.From != "2026-03-07" || bf.To != "2026-03-09" || bf.Periods[0].Period != c.wantFirst || v.Backfill.Version != 1 {
				t.Fatalf("stored %+v (answer version %d), want id %s running 2026-03-07..2026-03-09 starting at %s, version 1", bf, v.Backfill.Version, c.wantID, c.wantFirst)
			}
			if !hasTimer(o, BackfillTimerKey("c1"), now) || !slices.Equal(types(o.C.Events), []event.Type{event.BackfillRequested}) {
				t.Fatalf("timers %+v events %v, want the backfill timer due now and BACKFILL_REQUESTED", o.C.Timers, types(o.C.Events))
			}
		})
	}
}

func TestBackfillCancel(t *testing.T) {
	now := runtest.T0
	running := store.Backfill{PipelineID: "c1", ID: "2", State: backfill.Running, Version: 3, Periods: []backfill.Period{{Period: "2026-03-07", State: backfill.PeriodActive}}}
	ended := store.Backfill{PipelineID: "c1", ID: "1", State: backfill.Completed, Version: 5}
	for _, c := range []struct {
		name      string
		id        string
		stored    []store.Backfill
		wantErr   error
		wantState backfill.State
		wantWrite bool
	}{
		{name: "the running one", stored: []store.Backfill{ended, running}, wantState: backfill.Cancelled, wantWrite: true},
		{name: "by id", id: "2", stored: []store.Backfill{ended, running}, wantState: backfill.Cancelled, wantWrite: true},
		{name: "one that ended is left as it is", id: "1", stored: []store.Backfill{ended, running}, wantState: backfill.Completed},
		{name: "none running", stored: []store.Backfill{ended}, wantErr: ErrUnknownBackfill},
		{name: "an unknown id", id: "9", stored: []store.Backfill{ended}, wantErr: ErrUnknownBackfill},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, cronDoc)
			w.backfills = c.stored
			f := w.rounds(func(*Facts) needs.Set { return needs.BackfillCancel("c1") })
			o, bf, err := BackfillCancel(BackfillCancelIn{PipelineID: "c1", ID: c.id, By: "op", Env: Env{NewID: ids()}}, f, now)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil || bf.State != c.wantState {
				t.Fatalf("answer %+v err %v, want state %s", bf, err, c.wantState)
			}
			if !c.wantWrite {
				if !o.C.Empty() {
					t.Fatalf("outcome %+v, want empty", o.C)
				}
				return
			}
			if len(o.C.Backfills) != 1 || o.C.Backfills[0].ExpectVersion != 3 || bf.Version != 4 || !bf.EndedAt.Equal(now) {
				t.Fatalf("writes %+v answer %+v, want the cancel at version 3 answered at 4", o.C.Backfills, bf)
			}
			if !deletesTimer(o, BackfillTimerKey("c1")) || !slices.Equal(types(o.C.Events), []event.Type{event.BackfillCancelled}) {
				t.Fatalf("timer deletes %+v events %v, want the timer gone and BACKFILL_CANCELLED", o.C.TimerDeletes, types(o.C.Events))
			}
		})
	}
}

func TestBackfillTimer(t *testing.T) {
	now := runtest.T0
	due := now.Add(-time.Minute)
	tm := BackfillTimer("c1", due)
	pending := func(ps ...string) []backfill.Period {
		var out []backfill.Period
		for _, p := range ps {
			out = append(out, backfill.Period{Period: p, State: backfill.PeriodPending})
		}
		return out
	}
	sid := runtest.Pipeline(t, cronDoc).ScheduleID()
	key := func(p string) run.Key { return run.Key{PipelineID: "c1", ScheduleID: sid, Period: p} }
	for _, c := range []struct {
		name      string
		bf        *store.Backfill
		runs      []run.Run
		paused    bool
		removed   bool
		wantRuns  int
		wantTimer time.Time // zero: the timer goes
		wantState backfill.State
		wantWrite bool
		wantEvent []event.Type
	}{
		{name: "starts the next period", bf: &store.Backfill{ID: "1", State: backfill.Running, MaxActive: 1, Periods: pending("2026-03-07", "2026-03-08")},
			wantRuns: 1, wantTimer: now, wantState: backfill.Running, wantWrite: true, wantEvent: []event.Type{event.BackfillPeriodStarted}},
		{name: "completes when the last ends", bf: &store.Backfill{ID: "1", State: backfill.Running, MaxActive: 1, Periods: []backfill.Period{{Period: "2026-03-07", State: backfill.PeriodActive}}},
			runs:      []run.Run{{Key: key("2026-03-07"), State: run.Completed, Outcome: run.OutcomeSucceeded, Version: 2}},
			wantState: backfill.Completed, wantWrite: true, wantEvent: []event.Type{event.BackfillCompleted}},
		{name: "waits while paused", bf: &store.Backfill{ID: "1", State: backfill.Running, MaxActive: 1, Periods: pending("2026-03-07")}, paused: true,
			wantTimer: now.Add(backfill.Poll), wantState: backfill.Running},
		{name: "waits on an active period", bf: &store.Backfill{ID: "1", State: backfill.Running, MaxActive: 1, Periods: append([]backfill.Period{{Period: "2026-03-07", State: backfill.PeriodActive}}, pending("2026-03-08")...)},
			runs:      []run.Run{{Key: key("2026-03-07"), State: run.Running, Version: 2}},
			wantTimer: now.Add(backfill.Poll), wantState: backfill.Running},
		{name: "none running: the timer goes"},
		{name: "the pipeline removed: the timer goes", bf: &store.Backfill{ID: "1", State: backfill.Running, MaxActive: 1, Periods: pending("2026-03-07")}, removed: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, cronDoc)
			w.timers = []store.Timer{tm}
			w.runs = c.runs
			row := w.rows["c1"]
			row.Paused = c.paused
			if c.removed {
				row.RemovedAt = now.Add(-time.Hour)
			}
			w.rows["c1"] = row
			if c.bf != nil {
				bf := *c.bf
				bf.PipelineID, bf.Version = "c1", 7
				w.backfills = []store.Backfill{bf}
			}
			in := TimerIn{Timer: tm, Env: Env{NewID: ids()}}
			var o *Outcome
			err := w.decide(t, w.rounds(func(f *Facts) needs.Set { return TimerNeeds(f, w.configs, in, now) }), func(f *Facts) (err error) {
				o, _, err = Timer(in, f, now)
				return err
			})
			if err != nil {
				t.Fatalf("err %v", err)
			}
			if len(o.C.Runs) != c.wantRuns {
				t.Fatalf("runs %+v, want %d", o.C.Runs, c.wantRuns)
			}
			if c.wantTimer.IsZero() != deletesTimer(o, tm.Key) || !c.wantTimer.IsZero() && !hasTimer(o, tm.Key, c.wantTimer) {
				t.Fatalf("timers %+v deletes %+v, want the timer at %v (zero: gone)", o.C.Timers, o.C.TimerDeletes, c.wantTimer)
			}
			if len(o.C.Backfills) > 0 != c.wantWrite {
				t.Fatalf("backfill writes %+v, want a write %v", o.C.Backfills, c.wantWrite)
			}
			if c.wantWrite && (o.C.Backfills[0].Backfill.State != c.wantState || o.C.Backfills[0].ExpectVersion != 7) {
				t.Fatalf("written %+v, want state %s at version 7", o.C.Backfills[0], c.wantState)
			}
			if got := types(o.C.Events); !slices.Equal(got, c.wantEvent) && !(c.wantRuns > 0 && slices.Contains(got, event.BackfillPeriodStarted)) {
				t.Fatalf("events %v, want %v", got, c.wantEvent)
			}
			if c.removed && o.LP != nil {
				t.Fatal("a removed pipeline's timer is dropped on no condition of its row")
			}
		})
	}
}

func TestPause(t *testing.T) {
	now := runtest.T0
	resumeKey := run.PipelineTimer(run.TimerResume, "c1").String()
	for _, c := range []struct {
		name      string
		until     time.Time
		paused    bool // already, until zero
		wantErr   error
		wantWrite bool
		wantTimer bool // the resume timer set (else dropped)
	}{
		{name: "until resumed", wantWrite: true},
		{name: "for an hour", until: now.Add(time.Hour), wantWrite: true, wantTimer: true},
		{name: "paused already", paused: true},
		{name: "until a past time", until: now.Add(-time.Hour), wantErr: ErrInvalidRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, cronDoc)
			row := w.rows["c1"]
			row.Paused = c.paused
			w.rows["c1"] = row
			f := w.rounds(func(*Facts) needs.Set { return needs.Pause("c1") })
			o, _, err := Pause(PauseIn{PipelineID: "c1", Until: c.until, By: "op", Env: Env{NewID: ids()}}, f, now)
			if c.wantErr != nil || err != nil {
				if !errors.Is(err, c.wantErr) || c.wantErr == nil {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				return
			}
			if !c.wantWrite {
				if !o.C.Empty() {
					t.Fatalf("outcome %+v, want empty", o.C)
				}
				return
			}
			if len(o.C.Pipelines) != 1 || !o.C.Pipelines[0].Pipeline.Paused || !o.C.Pipelines[0].Pipeline.PausedAt.Equal(now) || o.C.Pipelines[0].ExpectVersion != 1 {
				t.Fatalf("rows %+v, want the row paused at now, at version 1", o.C.Pipelines)
			}
			if hasTimer(o, resumeKey, c.until) != c.wantTimer || deletesTimer(o, resumeKey) == c.wantTimer {
				t.Fatalf("timers %+v deletes %+v, want the resume timer set %v", o.C.Timers, o.C.TimerDeletes, c.wantTimer)
			}
			if !slices.Equal(types(o.C.Events), []event.Type{event.PipelinePaused}) {
				t.Fatalf("events %v", types(o.C.Events))
			}
		})
	}
}

func TestResume(t *testing.T) {
	now := runtest.T0
	p := runtest.Pipeline(t, triggerDoc)
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	resumeKey := run.PipelineTimer(run.TimerResume, "p1").String()
	paused := func(w world) world {
		row := w.rows["p1"]
		row.Paused, row.PausedAt = true, now.Add(-time.Hour)
		w.rows["p1"] = row
		// Trigger data during the pause, and the rule's sensor.
		w.sensors = []store.Sensor{{PipelineID: "p1", Key: "ready", ChangedAt: now.Add(-time.Minute), Version: 1},
			{PipelineID: "p1", Key: "landed", ChangedAt: now.Add(-time.Minute), Version: 1}}
		// A backfill that waited for the resume.
		w.timers = []store.Timer{BackfillTimer("p1", now.Add(backfill.Poll))}
		return w
	}
	resumeNeeds := func(w world) *Facts {
		return w.rounds(func(f *Facts) needs.Set { return ResumeNeeds(f, w.configs, "p1", now, rulesOpt) })
	}
	check := func(t *testing.T, o *Outcome) {
		t.Helper()
		if len(o.C.Pipelines) != 1 || o.C.Pipelines[0].Pipeline.Paused || o.C.Pipelines[0].ExpectVersion != 1 {
			t.Fatalf("rows %+v, want the row resumed at version 1", o.C.Pipelines)
		}
		if !slices.ContainsFunc(o.C.Runs, func(r store.RunWrite) bool { return r.Run.Key == key }) {
			t.Fatalf("runs %+v, want the period the trigger data came for started", o.C.Runs)
		}
		if !hasTimer(o, BackfillTimerKey("p1"), now) {
			t.Fatalf("timers %+v, want the backfill woken", o.C.Timers)
		}
		if !slices.Contains(types(o.C.Events), event.PipelineResumed) || !deletesTimer(o, resumeKey) {
			t.Fatalf("events %v deletes %+v, want PIPELINE_RESUMED and the resume timer gone", types(o.C.Events), o.C.TimerDeletes)
		}
	}
	t.Run("by hand", func(t *testing.T) {
		w := paused(newWorld(t, triggerDoc))
		var o *Outcome
		err := w.decide(t, resumeNeeds(w), func(f *Facts) (err error) {
			o, _, err = Resume(ResumeIn{PipelineID: "p1", By: "op", Env: Env{Rules: rulesOpt, NewID: ids()}}, f, now)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		check(t, o)
	})
	t.Run("not paused", func(t *testing.T) {
		w := newWorld(t, triggerDoc)
		o, _, err := Resume(ResumeIn{PipelineID: "p1", By: "op", Env: Env{NewID: ids()}}, resumeNeeds(w), now)
		if err != nil || !o.C.Empty() {
			t.Fatalf("outcome %+v err %v, want empty", o.C, err)
		}
	})
	for _, c := range []struct {
		name    string
		world   func(world) world
		resumes bool
	}{
		{"its timer", paused, true},
		{"its timer, resumed by hand before", func(w world) world { return w }, false},
		{"its timer, the file removed", func(w world) world { delete(w.rows, "p1"); return w }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := c.world(newWorld(t, triggerDoc))
			tm := store.Timer{Key: resumeKey, Kind: string(run.TimerResume), Run: run.Key{PipelineID: "p1"}, DueAt: now}
			w.timers = append(w.timers, tm)
			in := TimerIn{Timer: tm, Env: Env{Rules: rulesOpt, NewID: ids()}}
			var o *Outcome
			err := w.decide(t, w.rounds(func(f *Facts) needs.Set {
				return TimerNeeds(f, w.configs, TimerIn{Timer: tm, Env: Env{Rules: rulesOpt}}, now)
			}), func(f *Facts) (err error) {
				o, _, err = Timer(in, f, now)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if c.resumes {
				check(t, o)
				return
			}
			if o.LP != nil || len(o.C.Pipelines)+len(o.C.Runs) > 0 || !deletesTimer(o, resumeKey) {
				t.Fatalf("outcome %+v on row %v, want the timer dropped alone", o.C, o.LP)
			}
		})
	}
}

func TestHandOff(t *testing.T) {
	now := runtest.T0
	learned := store.Timer{Key: StepTimerKey(run.Key{PipelineID: "p1", ScheduleID: "trigger", Period: "2026-03-10"}), Kind: string(run.StepPoll), DueAt: now.Add(-2 * time.Hour)}
	for _, c := range []struct {
		name   string
		stored *store.Timer
		handed bool
	}{
		{"orphaned", &learned, true},
		{"moved meanwhile", &store.Timer{Key: learned.Key, Kind: learned.Kind, DueAt: now.Add(-time.Minute)}, false},
		{"gone", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			if c.stored != nil {
				w.timers = []store.Timer{*c.stored}
			}
			f := w.rounds(func(*Facts) needs.Set { return needs.HandOff(learned.Key) })
			o, h, err := HandOff(HandOffIn{Timer: learned, Grace: time.Hour}, f, now)
			if err != nil || (h.Stored != nil) != (c.stored != nil) || (h.Handed != nil) != c.handed {
				t.Fatalf("answer %+v err %v, want stored %v handed %v", h, err, c.stored != nil, c.handed)
			}
			if !c.handed {
				if !o.C.Empty() {
					t.Fatalf("outcome %+v, want empty", o.C)
				}
				return
			}
			if len(o.C.Timers) != 1 || !o.C.Timers[0].Timer.DueAt.Equal(now) || o.C.Timers[0].ExpectDueAt == nil || !o.C.Timers[0].ExpectDueAt.Equal(learned.DueAt) || !run.StampOf(o.C.Timers[0].Timer.Detail).Handoff {
				t.Fatalf("timers %+v, want the step due now, stamped a handoff, on the timer read", o.C.Timers)
			}
		})
	}
}

// TestOperatorMissing: each operator entry answers *Missing for a fact
// its needs name and the facts do not hold, one need dropped at a time.
func TestOperatorMissing(t *testing.T) {
	now := runtest.T0
	w := newWorld(t, cronDoc, triggerDoc)
	row := w.rows["p1"]
	row.Paused, row.PausedAt = true, now.Add(-time.Hour)
	w.rows["p1"] = row
	w.backfills = []store.Backfill{{PipelineID: "c1", ID: "1", State: backfill.Running, MaxActive: 1, Periods: []backfill.Period{{Period: "2026-03-07", State: backfill.PeriodPending}}}}
	req := backfill.Request{From: "2026-03-07", To: "2026-03-09", Only: backfill.OnlyAll, MaxActive: 1}
	btm := BackfillTimer("c1", now)
	w.timers = []store.Timer{btm}
	pipelines := func(id string) func(*needs.Set) {
		return func(n *needs.Set) {
			n.Pipelines = slices.DeleteFunc(slices.Clone(n.Pipelines), func(x string) bool { return x == id })
		}
	}
	noBackfills := func(n *needs.Set) { n.Backfills = nil }
	noPrefixes := func(n *needs.Set) { n.Prefixes = nil }
	noRanges := func(n *needs.Set) { n.RunRanges = nil }
	noActive := func(n *needs.Set) { n.ActiveRuns = nil }
	noTimers := func(n *needs.Set) { n.Timers = nil }
	for _, c := range []struct {
		name   string
		need   func(*Facts) needs.Set
		decide func(*Facts) error
		drops  map[string]func(*needs.Set)
	}{
		{"backfill request", w.backfillNeeds("p1", req, now), func(f *Facts) error {
			_, _, err := BackfillRequest(BackfillRequestIn{PipelineID: "p1", Request: req, Env: Env{NewID: ids()}}, f, now)
			return err
		}, map[string]func(*needs.Set){"the pipeline": pipelines("p1"), "the backfills": noBackfills, "the runs of the range": noRanges, "the trigger sensors": noPrefixes}},
		{"backfill cancel", func(*Facts) needs.Set { return needs.BackfillCancel("c1") }, func(f *Facts) error {
			_, _, err := BackfillCancel(BackfillCancelIn{PipelineID: "c1", Env: Env{NewID: ids()}}, f, now)
			return err
		}, map[string]func(*needs.Set){"the pipeline": pipelines("c1"), "the backfills": noBackfills}},
		{"backfill timer", func(f *Facts) needs.Set {
			return TimerNeeds(f, w.configs, TimerIn{Timer: btm, Env: Env{Rules: rulesOpt}}, now)
		}, func(f *Facts) error {
			_, _, err := Timer(TimerIn{Timer: btm, Env: Env{NewID: ids()}}, f, now)
			return err
		}, map[string]func(*needs.Set){"the pipeline": pipelines("c1"), "the backfills": noBackfills, "the period's run": func(n *needs.Set) { n.Runs = nil }}},
		{"pause", func(*Facts) needs.Set { return needs.Pause("c1") }, func(f *Facts) error {
			_, _, err := Pause(PauseIn{PipelineID: "c1", Env: Env{NewID: ids()}}, f, now)
			return err
		}, map[string]func(*needs.Set){"the pipeline": pipelines("c1")}},
		{"resume", func(f *Facts) needs.Set { return ResumeNeeds(f, w.configs, "p1", now, rulesOpt) }, func(f *Facts) error {
			_, _, err := Resume(ResumeIn{PipelineID: "p1", Env: Env{Rules: rulesOpt, NewID: ids()}}, f, now)
			return err
		}, map[string]func(*needs.Set){"the pipeline": pipelines("p1"), "the active runs": noActive, "the trigger sensors": noPrefixes, "the backfill timer": noTimers}},
		{"handoff", func(*Facts) needs.Set { return needs.HandOff(btm.Key) }, func(f *Facts) error {
			_, _, err := HandOff(HandOffIn{Timer: btm, Grace: time.Hour}, f, now)
			return err
		}, map[string]func(*needs.Set){"the timer": noTimers}},
	} {
		full := w.rounds(c.need)
		if err := w.decide(t, full, c.decide); err != nil {
			t.Fatalf("%s with every need: %v", c.name, err)
		}
		for what, drop := range c.drops {
			t.Run(c.name+"/"+what, func(t *testing.T) {
				asked := w.rounds(c.need).Asked
				drop(&asked)
				f := w.facts(asked)
				f.Configs = w.rounds(c.need).Configs
				if _, ok := AsMissing(c.decide(f)); !ok {
					t.Fatalf("decided without %s", what)
				}
			})
		}
	}
}
