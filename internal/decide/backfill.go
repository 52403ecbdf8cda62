package decide

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// A backfill (package backfill decides its parts, store.Backfill keeps
// it) is sequenced by one durable timer per pipeline,
// "backfill/<pipeline>": each firing reads the running backfill and its
// active periods' runs, and does what backfill.Fire decides: judge the
// active periods, start (or skip) at most one pending period while fewer
// than maxActive are active — re-armed at once while more can start,
// else after backfill.Poll — or complete it. A backfilled run that ends
// wakes the timer (ApplyRun), so the next period starts in the commit
// after. Every step commits the backfill record at the version it read,
// with the runs it starts: a restart, or two processes, start each
// period once.

var (
	// ErrBackfillRunning refuses a second backfill of a pipeline while
	// one runs: cancel it first.
	ErrBackfillRunning = errors.New("a backfill is running")
	// ErrUnknownBackfill: no backfill of the pipeline has the id.
	ErrUnknownBackfill = errors.New("unknown backfill")
)

// BackfillRequestIn is an operator's backfill request to decide.
type BackfillRequestIn struct {
	PipelineID string
	Request    backfill.Request
	// DryRun plans only: the outcome stores nothing.
	DryRun bool
	By     string
	Env
}

// BackfillPlanned is the answer to a backfill request: the verdict on
// each period, and the backfill stored (nil for a dry run).
type BackfillPlanned struct {
	Periods []backfill.PlannedPeriod
	// Backfill is the record the outcome stores, as its commit leaves it
	// (version 1).
	Backfill *store.Backfill
	// Paused and DryRun say how the pipeline stands: a paused pipeline's
	// backfill waits for the resume; a dry-run pipeline's records
	// would-trigger events, running nothing.
	Paused, DryRun bool
}

// BackfillRange is backfill.Range on the facts: the request's periods
// for p at now, the kinds of period a trigger pipeline runs read from
// its trigger sensors. A refused request is ErrInvalidRequest naming the
// field.
func BackfillRange(f *Facts, p *pipeline.Pipeline, req backfill.Request, now time.Time) ([]schedule.Period, error) {
	recs, err := f.TriggerRecords(p)
	if err != nil {
		return nil, err
	}
	periods, err := backfill.Range(p, req, run.KindsOfPeriod(p, recs), now)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	return periods, nil
}

// BackfillRequest decides an operator's backfill request: the plan of
// each period of the range (backfill.Plan on the runs stored) and,
// unless a dry run, the new backfill record with its timer due now and
// BACKFILL_REQUESTED — refused with ErrBackfillRunning while another
// backfill of the pipeline runs (backfill.Admit: one per pipeline, ids
// numbered 1, 2, 3 …).
func BackfillRequest(in BackfillRequestIn, f *Facts, now time.Time) (*Outcome, BackfillPlanned, error) {
	lp, err := f.KnownPipeline(in.PipelineID)
	if err != nil {
		return nil, BackfillPlanned{}, err
	}
	p, req := lp.P, in.Request
	periods, err := BackfillRange(f, p, req, now)
	if err != nil {
		return nil, BackfillPlanned{}, err
	}
	rs, err := f.RunsIn(RunRange{PipelineID: p.ID, From: backfill.RangeStart(periods)})
	if err != nil {
		return nil, BackfillPlanned{}, err
	}
	runs := backfill.RunsOf(periods, rs, p.ScheduleID())
	plan := BackfillPlanned{Paused: lp.Row.Paused, DryRun: p.DryRun,
		Periods: backfill.Plan(p, periods, req.Only, func(per schedule.Period) *run.Run { return runs[per.String()] })}
	o := New(lp, f, now, in.Env)
	if in.DryRun {
		return o, plan, nil
	}
	all, err := f.BackfillsOf(p.ID)
	if err != nil {
		return nil, BackfillPlanned{}, err
	}
	id, running := backfill.Admit(storedBackfills(all))
	if running >= 0 {
		bf := all[running]
		return nil, plan, fmt.Errorf("%w: backfill %s of %s (%s..%s) is running; cancel it first (interlock backfill cancel %s %s)", ErrBackfillRunning, bf.ID, p.ID, bf.From, bf.To, p.ID, bf.ID)
	}
	begun := backfill.Begin(plan.Periods, req.Reverse)
	bf := store.Backfill{PipelineID: p.ID, ID: id, From: begun.From, To: begun.To,
		Only: req.Only, MaxActive: req.MaxActive, Reverse: req.Reverse, RequestedAt: now, RequestedBy: in.By, State: backfill.Running,
		Periods: begun.Periods}
	o.C.Backfills = append(o.C.Backfills, store.BackfillWrite{Backfill: bf})
	o.PutTimer(BackfillTimer(p.ID, now), nil)
	o.Notes(run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID()}, []run.Note{backfill.RequestedNote(id, in.By, req, begun)})
	bf.Version = 1
	plan.Backfill = &bf
	return o, plan, nil
}

// BackfillCancelIn is an operator's cancel of a backfill to decide.
type BackfillCancelIn struct {
	PipelineID string
	// ID names the backfill ("": the pipeline's running one).
	ID string
	By string
	Env
}

// BackfillCancel decides the cancel of a running backfill: no new period
// starts, the active ones finish (BACKFILL_CANCELLED), its timer goes.
// One that already ended is answered as it is, the outcome empty. The
// answer is the backfill as the commit leaves it.
func BackfillCancel(in BackfillCancelIn, f *Facts, now time.Time) (*Outcome, store.Backfill, error) {
	lp, err := f.KnownPipeline(in.PipelineID)
	if err != nil {
		return nil, store.Backfill{}, err
	}
	all, err := f.BackfillsOf(in.PipelineID)
	if err != nil {
		return nil, store.Backfill{}, err
	}
	bf, err := findBackfill(all, in.PipelineID, in.ID)
	if err != nil {
		return nil, store.Backfill{}, err
	}
	o := New(lp, f, now, in.Env)
	state, ok := backfill.Cancel(bf.State)
	if !ok {
		return o, bf, nil
	}
	next := bf
	next.State, next.EndedAt = state, now
	o.C.Backfills = append(o.C.Backfills, store.BackfillWrite{Backfill: next, ExpectVersion: bf.Version})
	o.DeleteTimer(BackfillTimerKey(in.PipelineID), nil)
	o.Notes(run.Key{PipelineID: in.PipelineID, ScheduleID: lp.P.ScheduleID()}, []run.Note{backfill.CancelledNote(bf.ID, in.By, backfill.CountPeriods(next.Periods))})
	next.Version++
	return o, next, nil
}

// findBackfill finds a backfill of the pipeline's, all, by id, or its
// running one (id ""): ErrUnknownBackfill when there is none.
func findBackfill(all []store.Backfill, pipelineID, id string) (store.Backfill, error) {
	if id != "" {
		for _, bf := range all {
			if bf.ID == id {
				return bf, nil
			}
		}
		return store.Backfill{}, fmt.Errorf("%w: pipeline %s has no backfill %q", ErrUnknownBackfill, pipelineID, id)
	}
	if i := backfill.RunningOf(storedBackfills(all)); i >= 0 {
		return all[i], nil
	}
	return store.Backfill{}, fmt.Errorf("%w: pipeline %s has no running backfill", ErrUnknownBackfill, pipelineID)
}

// storedBackfills is what the backfill decisions read of the stored ones.
func storedBackfills(all []store.Backfill) []backfill.Stored {
	out := make([]backfill.Stored, len(all))
	for i, bf := range all {
		out[i] = backfill.Stored{ID: bf.ID, State: bf.State}
	}
	return out
}

// runningBackfill returns the running one of a pipeline's backfills; ok
// false when none runs.
func runningBackfill(all []store.Backfill) (store.Backfill, bool) {
	if i := backfill.RunningOf(storedBackfills(all)); i >= 0 {
		return all[i], true
	}
	return store.Backfill{}, false
}

// activeBackfillRuns are the runs of bf's active periods as read so far
// (either schedule id), by period; read false while one is not read.
func activeBackfillRuns(bf store.Backfill, p *pipeline.Pipeline, runOf func(run.Key) (*run.Run, bool, error)) (map[string]*run.Run, bool, error) {
	runs := map[string]*run.Run{}
	all := true
	for _, bp := range bf.Periods {
		if bp.State != backfill.PeriodActive {
			continue
		}
		r, read, err := runOf(run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: bp.Period})
		if err != nil {
			return nil, false, err
		}
		all = all && read
		runs[bp.Period] = r
	}
	return runs, all, nil
}

// backfillTimer takes the pipeline's running backfill one step (see the
// top of this file): none running, or its pipeline gone, the timer goes.
func (d timerDecision) backfillTimer() (*Outcome, error) {
	t := d.in.Timer
	lp, o, err := d.begin()
	if err != nil || lp == nil {
		return o, err // its file was removed: the timer goes
	}
	p := lp.P
	all, err := d.f.BackfillsOf(p.ID)
	if err != nil {
		return nil, err
	}
	bf, ok := runningBackfill(all)
	if !ok {
		return o, nil
	}
	runs, _, err := activeBackfillRuns(bf, p, func(k run.Key) (*run.Run, bool, error) {
		r, err := o.RunOf(k)
		return r, true, err
	})
	if err != nil {
		return nil, err
	}
	fire := backfill.Fire(bf.Periods, runs, bf.MaxActive, lp.Row.Paused, d.now)
	next := bf
	next.Periods = fire.Periods
	due := t.DueAt
	switch fire.Step {
	case backfill.StepStart:
		if err := o.backfillPeriod(lp, &next, fire.Index); err != nil {
			return nil, err
		}
		o.PutTimer(BackfillTimer(p.ID, fire.WakeAt), &due)
	case backfill.StepWait:
		o.PutTimer(BackfillTimer(p.ID, fire.WakeAt), &due)
	case backfill.StepComplete:
		next.State, next.EndedAt = backfill.Completed, d.now
		o.Notes(run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID()}, []run.Note{backfill.CompletedNote(bf.ID, backfill.CountPeriods(next.Periods))})
		o.DeleteTimer(t.Key, &due)
	}
	if fire.Changed {
		o.C.Backfills = append(o.C.Backfills, store.BackfillWrite{Backfill: next, ExpectVersion: bf.Version})
	}
	return o, nil
}

// BackfillStepNeeds names what a backfill timer's step on pipelineID at
// now reads (needs.BackfillStep) from the facts read so far: the running
// backfill's active periods once the backfills are read, and the period
// backfill.Fire starts once their runs are, as the step decides them.
func BackfillStepNeeds(f *Facts, cfg needs.Configs, pipelineID string, now time.Time) needs.Set {
	p := cfg(pipelineID)
	row, rowRead := f.Pipelines[pipelineID]
	if p == nil || !rowRead || !slices.Contains(f.Asked.Backfills, pipelineID) {
		return needs.BackfillStep(p, cfg, pipelineID, nil, nil)
	}
	bf, ok := runningBackfill(f.Backfills[pipelineID])
	if !ok {
		return needs.BackfillStep(p, cfg, pipelineID, nil, nil)
	}
	var active []string
	for _, bp := range bf.Periods {
		if bp.State == backfill.PeriodActive {
			active = append(active, bp.Period)
		}
	}
	runs, runsRead, _ := activeBackfillRuns(bf, p, func(k run.Key) (*run.Run, bool, error) {
		r, read := f.ReadRuns(k)
		if r == nil {
			r, _ = f.ReadRuns(run.OtherSchedule(k))
		}
		return r, read, nil
	})
	var start *schedule.Period
	if runsRead {
		if fire := backfill.Fire(bf.Periods, runs, bf.MaxActive, row.Paused, now); fire.Step == backfill.StepStart {
			if per, err := ParsePeriod(bf.Periods[fire.Index].Period); err == nil {
				start = &per
			}
		}
	}
	return needs.BackfillStep(p, cfg, pipelineID, active, start)
}

// backfillPeriod starts, reruns or skips period i of bf, as
// backfill.StartOf decides on the period's run now: a new run (Cause
// backfill), a rerun of an ended one (ledger reason and source
// "backfill"), or on a dry-run pipeline the would-trigger it records. A
// period it starts carries the backfill marker, whose time (the
// request's) spares it the SLA alerts of deadlines already past then
// (sla.BackfillExempt).
func (o *Outcome) backfillPeriod(lp *Pipeline, bf *store.Backfill, i int) error {
	p := lp.P
	bp := &bf.Periods[i]
	per, err := ParsePeriod(bp.Period)
	if err != nil {
		return err
	}
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: bp.Period}
	existing, err := o.RunOf(key)
	if err != nil {
		return err
	}
	if existing != nil {
		key = existing.Key
	}
	how, marked, why := backfill.StartOf(p, per, bf.Only, existing)
	if how == backfill.StartSkip {
		o.skipBackfillPeriod(key, bf.ID, bp, why)
		return nil
	}
	if marked {
		o.Marker(store.Marker{Key: key, Kind: run.MarkerBackfill, At: bf.RequestedAt, Detail: run.Detail("backfill", bf.ID)}, false)
	}
	if how == backfill.StartNew {
		err = o.StartPeriod(lp, key, per, run.CauseBackfill, nil)
	} else {
		err = o.Rerun(lp, key, existing, run.ReasonBackfill, run.ReasonBackfill, nil)
	}
	if err != nil {
		return err
	}
	st, reason := backfill.Started(p.DryRun, o.HasRun(key), why)
	if st == backfill.PeriodSkipped {
		o.skipBackfillPeriod(key, bf.ID, bp, reason)
		return nil
	}
	bp.State, bp.Reason = st, reason
	o.Notes(key, []run.Note{backfill.StartedNote(bf.ID, bp.Period, why, how == backfill.StartRerun)})
	return nil
}

func (o *Outcome) skipBackfillPeriod(key run.Key, id string, bp *backfill.Period, why string) {
	bp.State, bp.Reason = backfill.PeriodSkipped, why
	o.Notes(key, []run.Note{backfill.SkippedNote(id, bp.Period, why)})
}

// wakeBackfillOnResume moves the pipeline's backfill timer to now in a
// resume's outcome: a backfill that waited while the pipeline was paused
// goes on at once, not at its next poll. A pipeline with no backfill
// timer (none running) has nothing to wake.
func (o *Outcome) wakeBackfillOnResume(pipelineID string) error {
	t, err := o.F.Timer(BackfillTimerKey(pipelineID))
	if err != nil || t == nil || !backfill.WakesOnResume(t.DueAt, o.Now) {
		return err // none, or due already: it fires on its own
	}
	due := t.DueAt
	o.PutTimer(BackfillTimer(pipelineID, o.Now), &due)
	return nil
}
