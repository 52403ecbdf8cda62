package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// A backfill (package backfill decides, store.Backfill keeps it) is
// sequenced by one durable timer per pipeline, "backfill/<pipeline>":
// each firing reads the running backfill and its active periods' runs,
// and does what backfill.Fire decides: judge the active periods, start
// (or skip) at most one pending period while fewer than maxActive are
// active — re-armed at once while more can start, else after
// backfill.Poll — or complete it. A backfilled run that
// ends wakes the timer (applyRun), so the next period starts in the
// commit after. Every step commits the backfill record at the version it
// read, with the runs it starts: a restart, or two processes, start each
// period once.

// ErrBackfillRunning refuses a second backfill of a pipeline while one
// runs: cancel it first.
var ErrBackfillRunning = errors.New("a backfill is running")

const kindBackfill = string(run.TimerBackfill)

func backfillTimerKey(pipelineID string) string {
	return run.PipelineTimer(run.TimerBackfill, pipelineID).String()
}

func backfillTimer(pipelineID string, at time.Time) store.Timer {
	return store.Timer{Key: backfillTimerKey(pipelineID), Kind: kindBackfill, Run: run.Key{PipelineID: pipelineID}, DueAt: at}
}

// BackfillPlan is the answer to a backfill request: the verdict on each
// period, and the stored backfill (nil for a dry run, which stores
// nothing).
type BackfillPlan struct {
	PipelineID string
	Periods    []backfill.PlannedPeriod
	Backfill   *store.Backfill
	// Paused and DryRun say how the pipeline stands: a paused pipeline's
	// backfill waits for the resume; a dry-run pipeline's records
	// would-trigger events, running nothing.
	Paused, DryRun bool
}

// RequestBackfill plans a backfill of pipelineID and, unless dryRun,
// stores it and arms its timer (BACKFILL_REQUESTED). A request is
// refused with ErrInvalidRequest naming the field (backfill.Range),
// and with ErrBackfillRunning while another backfill of the pipeline
// runs.
func (e *Engine) RequestBackfill(ctx context.Context, pipelineID string, req backfill.Request, dryRun bool, by string) (_ BackfillPlan, err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"backfill", attrPipeline.String(pipelineID))
	defer func() { endSpan(span, err) }()
	var plan BackfillPlan
	err = e.retry(ctx, "backfill "+pipelineID, func(ctx context.Context) error {
		now := e.clk.Now()
		f, lp, err := e.loadPipeline(ctx, pipelineID, func(f *facts, cfg needs.Configs) needs.Set {
			p := cfg(pipelineID)
			start := ""
			if recs, ok := f.readTriggerRecords(p); ok {
				if periods, err := backfill.Range(p, req, run.KindsOfPeriod(p, recs), now); err == nil {
					start = backfill.RangeStart(periods)
				}
			}
			return needs.BackfillRequest(p, pipelineID, start)
		})
		if err != nil {
			return err
		}
		p := lp.P
		recs, err := f.triggerRecords(ctx, p)
		if err != nil {
			return err
		}
		periods, err := backfill.Range(p, req, run.KindsOfPeriod(p, recs), now)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidRequest, err)
		}
		rs, err := get(ctx, f, func() ([]run.Run, error) {
			return f.RunsIn(decide.RunRange{PipelineID: p.ID, From: backfill.RangeStart(periods)})
		})
		if err != nil {
			return err
		}
		runs := backfill.RunsOf(periods, rs, p.ScheduleID())
		plan = BackfillPlan{PipelineID: p.ID, Paused: lp.Row.Paused, DryRun: p.DryRun,
			Periods: backfill.Plan(p, periods, req.Only, func(per schedule.Period) *run.Run { return runs[per.String()] })}
		if dryRun {
			return nil
		}
		all, err := f.backfillsOf(ctx, p.ID)
		if err != nil {
			return err
		}
		id, running := backfill.Admit(storedBackfills(all))
		if running >= 0 {
			bf := all[running]
			return fmt.Errorf("%w: backfill %s of %s (%s..%s) is running; cancel it first (interlock backfill cancel %s %s)", ErrBackfillRunning, bf.ID, p.ID, bf.From, bf.To, p.ID, bf.ID)
		}
		begun := backfill.Begin(plan.Periods, req.Reverse)
		bf := store.Backfill{PipelineID: p.ID, ID: id, From: begun.From, To: begun.To,
			Only: req.Only, MaxActive: req.MaxActive, Reverse: req.Reverse, RequestedAt: now, RequestedBy: by, State: backfill.Running,
			Periods: begun.Periods}
		b := e.newBatch(lp, now).withFacts(f)
		b.C.Backfills = append(b.C.Backfills, store.BackfillWrite{Backfill: bf})
		b.PutTimer(backfillTimer(p.ID, now), nil)
		b.Notes(run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID()}, []run.Note{backfill.RequestedNote(id, by, req, begun)})
		return b.commitThen(ctx, func() {
			bf.Version = 1
			plan.Backfill = &bf
		})
	})
	return plan, err
}

// Backfills returns a pipeline's backfills, oldest first.
func (e *Engine) Backfills(ctx context.Context, pipelineID string) ([]store.Backfill, error) {
	if _, err := e.knownPipeline(ctx, pipelineID); err != nil {
		return nil, err
	}
	return e.st.BackfillList(ctx, pipelineID)
}

// ErrUnknownBackfill: no backfill of the pipeline has the id.
var ErrUnknownBackfill = errors.New("unknown backfill")

// Backfill returns one backfill of a pipeline.
func (e *Engine) Backfill(ctx context.Context, pipelineID, id string) (store.Backfill, error) {
	bf, err := e.st.BackfillGet(ctx, pipelineID, id)
	if errors.Is(err, store.ErrNotFound) {
		return bf, fmt.Errorf("%w: pipeline %s has no backfill %q", ErrUnknownBackfill, pipelineID, id)
	}
	return bf, err
}

// CancelBackfill stops a running backfill (id "": the pipeline's running
// one): no new period starts, the active ones finish
// (BACKFILL_CANCELLED). Cancelling one that already ended changes
// nothing and returns it as it is.
func (e *Engine) CancelBackfill(ctx context.Context, pipelineID, id, by string) (_ store.Backfill, err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"backfill.cancel", attrPipeline.String(pipelineID))
	defer func() { endSpan(span, err) }()
	var out store.Backfill
	err = e.retry(ctx, "cancel backfill "+pipelineID+"/"+id, func(ctx context.Context) error {
		f, lp, err := e.loadPipeline(ctx, pipelineID, func(*facts, needs.Configs) needs.Set { return needs.BackfillCancel(pipelineID) })
		if err != nil {
			return err
		}
		all, err := f.backfillsOf(ctx, pipelineID)
		if err != nil {
			return err
		}
		bf, err := findBackfill(all, pipelineID, id)
		if err != nil {
			return err
		}
		out = bf
		state, ok := backfill.Cancel(bf.State)
		if !ok {
			return nil
		}
		now := e.clk.Now()
		next := bf
		next.State, next.EndedAt = state, now
		b := e.newBatch(lp, now).withFacts(f)
		b.C.Backfills = append(b.C.Backfills, store.BackfillWrite{Backfill: next, ExpectVersion: bf.Version})
		b.DeleteTimer(backfillTimerKey(pipelineID), nil)
		b.Notes(run.Key{PipelineID: pipelineID, ScheduleID: lp.P.ScheduleID()}, []run.Note{backfill.CancelledNote(bf.ID, by, backfill.CountPeriods(next.Periods))})
		return b.commitThen(ctx, func() {
			next.Version++
			out = next
		})
	})
	return out, err
}

// findBackfill finds a backfill of the pipeline's, all, by id, or its
// running one (id "").
func findBackfill(all []store.Backfill, pipelineID, id string) (store.Backfill, error) {
	if id != "" {
		for _, bf := range all {
			if bf.ID == id {
				return bf, nil
			}
		}
		return store.Backfill{}, fmt.Errorf("%w: pipeline %s has no backfill %q", ErrUnknownBackfill, pipelineID, id)
	}
	bf, ok := runningBackfill(all)
	if !ok {
		return bf, fmt.Errorf("%w: pipeline %s has no running backfill", ErrUnknownBackfill, pipelineID)
	}
	return bf, nil
}

// runningBackfill returns the running one of a pipeline's backfills;
// ok is false when none runs.
func runningBackfill(all []store.Backfill) (store.Backfill, bool) {
	if i := backfill.RunningOf(storedBackfills(all)); i >= 0 {
		return all[i], true
	}
	return store.Backfill{}, false
}

// storedBackfills is what the backfill decisions read of the stored ones.
func storedBackfills(all []store.Backfill) []backfill.Stored {
	out := make([]backfill.Stored, len(all))
	for i, bf := range all {
		out[i] = backfill.Stored{ID: bf.ID, State: bf.State}
	}
	return out
}

// backfillTimerFired takes the pipeline's running backfill one step (see
// the top of this file).
func (e *Engine) backfillTimerFired(ctx context.Context, fs *facts, t store.Timer, now time.Time) (*batch, error) {
	if err := fs.rounds(ctx, e.backfillStepNeeds(t.Run.PipelineID, now)); err != nil {
		return nil, err
	}
	lp, err := fs.pipelineOf(ctx, t.Run.PipelineID)
	if err != nil {
		return nil, err
	}
	if lp == nil {
		return e.newBatch(nil, now), nil // its file was removed: the timer goes
	}
	all, err := fs.backfillsOf(ctx, lp.P.ID)
	if err != nil {
		return nil, err
	}
	bf, ok := runningBackfill(all)
	if !ok {
		return e.newBatch(lp, now).withFacts(fs), nil
	}
	p := lp.P
	b := e.newBatch(lp, now).withFacts(fs)
	runs := map[string]*run.Run{}
	for _, bp := range bf.Periods {
		if bp.State != backfill.PeriodActive {
			continue
		}
		r, err := e.runOf(ctx, b, run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: bp.Period})
		if err != nil {
			return nil, err
		}
		runs[bp.Period] = r
	}
	f := backfill.Fire(bf.Periods, runs, bf.MaxActive, lp.Row.Paused, now)
	next := bf
	next.Periods = f.Periods
	due := t.DueAt
	switch f.Step {
	case backfill.StepStart:
		if err := e.backfillPeriod(ctx, b, lp, &next, f.Index); err != nil {
			return nil, err
		}
		b.PutTimer(backfillTimer(p.ID, f.WakeAt), &due)
	case backfill.StepWait:
		b.PutTimer(backfillTimer(p.ID, f.WakeAt), &due)
	case backfill.StepComplete:
		next.State, next.EndedAt = backfill.Completed, now
		b.Notes(run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID()}, []run.Note{backfill.CompletedNote(bf.ID, backfill.CountPeriods(next.Periods))})
		b.DeleteTimer(t.Key, &due)
	}
	if f.Changed {
		b.C.Backfills = append(b.C.Backfills, store.BackfillWrite{Backfill: next, ExpectVersion: bf.Version})
	}
	return b, nil
}

// backfillStepNeeds names what a backfill timer's step on pipelineID at
// now reads (needs.BackfillStep): the running backfill's active periods
// once the backfills are read, and the period backfill.Fire starts once
// their runs are, as the step decides them.
func (e *Engine) backfillStepNeeds(pipelineID string, now time.Time) needsFunc {
	return func(f *facts, cfg needs.Configs) needs.Set {
		p := cfg(pipelineID)
		row, rowRead := f.Pipelines[pipelineID]
		if p == nil || !rowRead || !slices.Contains(f.Asked.Backfills, pipelineID) {
			return needs.BackfillStep(p, cfg, pipelineID, nil, nil)
		}
		bf, ok := runningBackfill(f.backfills[pipelineID])
		if !ok {
			return needs.BackfillStep(p, cfg, pipelineID, nil, nil)
		}
		var active []string
		runs := map[string]*run.Run{}
		runsRead := true
		for _, bp := range bf.Periods {
			if bp.State != backfill.PeriodActive {
				continue
			}
			active = append(active, bp.Period)
			k := run.Key{PipelineID: pipelineID, ScheduleID: p.ScheduleID(), Period: bp.Period}
			r, read := f.ReadRuns(k)
			if r == nil {
				r, _ = f.ReadRuns(run.OtherSchedule(k))
			}
			runsRead = runsRead && read
			runs[bp.Period] = r
		}
		var start *schedule.Period
		if runsRead {
			if fire := backfill.Fire(bf.Periods, runs, bf.MaxActive, row.Paused, now); fire.Step == backfill.StepStart {
				if per, err := decide.ParsePeriod(bf.Periods[fire.Index].Period); err == nil {
					start = &per
				}
			}
		}
		return needs.BackfillStep(p, cfg, pipelineID, active, start)
	}
}

// backfillPeriod starts, reruns or skips period i of bf, as backfill.StartOf
// decides on the period's run now: a new run (Cause backfill), a rerun of
// an ended one (ledger reason and source "backfill"), or on a dry-run
// pipeline the would-trigger it records. A period it starts carries the
// backfill marker, whose time (the request's) spares it the SLA alerts
// of deadlines already past then (sla.BackfillExempt).
func (e *Engine) backfillPeriod(ctx context.Context, b *batch, lp *loadedPipeline, bf *store.Backfill, i int) error {
	p := lp.P
	bp := &bf.Periods[i]
	per, err := decide.ParsePeriod(bp.Period)
	if err != nil {
		return err
	}
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: bp.Period}
	existing, err := e.runOf(ctx, b, key)
	if err != nil {
		return err
	}
	if existing != nil {
		key = existing.Key
	}
	how, marked, why := backfill.StartOf(p, per, bf.Only, existing)
	if how == backfill.StartSkip {
		e.skipBackfillPeriod(b, key, bf.ID, bp, why)
		return nil
	}
	if marked {
		b.Marker(store.Marker{Key: key, Kind: run.MarkerBackfill, At: bf.RequestedAt, Detail: run.Detail("backfill", bf.ID)}, false)
	}
	if how == backfill.StartNew {
		err = e.startPeriod(ctx, b, lp, key, per, run.CauseBackfill, nil)
	} else {
		err = e.rerun(ctx, b, lp, key, existing, run.ReasonBackfill, run.ReasonBackfill, nil)
	}
	if err != nil {
		return err
	}
	st, reason := backfill.Started(p.DryRun, b.HasRun(key), why)
	if st == backfill.PeriodSkipped {
		e.skipBackfillPeriod(b, key, bf.ID, bp, reason)
		return nil
	}
	bp.State, bp.Reason = st, reason
	b.Notes(key, []run.Note{backfill.StartedNote(bf.ID, bp.Period, why, how == backfill.StartRerun)})
	return nil
}

func (e *Engine) skipBackfillPeriod(b *batch, key run.Key, id string, bp *backfill.Period, why string) {
	bp.State, bp.Reason = backfill.PeriodSkipped, why
	b.Notes(key, []run.Note{backfill.SkippedNote(id, bp.Period, why)})
}

// wakeBackfillOnResume moves the pipeline's backfill timer to now in the
// resume's batch: a backfill that waited while the pipeline was paused
// goes on at once, not at its next poll. A pipeline with no backfill
// timer (none running) has nothing to wake.
func (e *Engine) wakeBackfillOnResume(ctx context.Context, b *batch, pipelineID string) error {
	t, err := b.f.timer(ctx, backfillTimerKey(pipelineID))
	switch {
	case err != nil:
		return err
	case t == nil:
		return nil
	case !backfill.WakesOnResume(t.DueAt, b.Now):
		return nil // due already: it fires on its own
	}
	due := t.DueAt
	b.PutTimer(backfillTimer(pipelineID, b.Now), &due)
	return nil
}
