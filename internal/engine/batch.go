package engine

import (
	"context"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/dryrun"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// batch collects one decision's writes for a single atomic commit.
type batch struct {
	e *Engine
	// lp is the pipeline facts the decision read (nil for writes not
	// tied to a pipeline): the commit is conditioned on them.
	lp  *loadedPipeline
	p   *pipeline.Pipeline // lp's config; nil when lp is
	now time.Time
	c   store.Change
	// f are the stored facts the decision reads (facts.go): an input's
	// loaded facts, or read as asked.
	f *facts
	// steps are the runs' step timers the decision has read, by timer key
	// (nil: none stored): what their writes are stamped from
	// (run.StampStep).
	steps map[string]*store.Timer
	// ids, when set, numbers the batch's events from a block reserved
	// ahead (idBlock), so decisions made at the same time log their
	// events of one instant in the order the block was reserved.
	ids *idBlock
}

// withFacts makes the batch's reads those of an input's loaded facts.
func (b *batch) withFacts(f *facts) *batch {
	b.f = f
	return b
}

// readStep records the step timer the decision read for key (nil: none).
func (b *batch) readStep(key string, t *store.Timer) {
	if b.steps == nil {
		b.steps = map[string]*store.Timer{}
	}
	if t != nil {
		cp := *t
		t = &cp
	}
	b.steps[key] = t
}

// stepRead returns the step timer the decision read for key, and whether
// it read it.
func (b *batch) stepRead(key string) (*store.Timer, bool) {
	t, ok := b.steps[key]
	return t, ok
}

// run returns the stored run of key, nil when there is none, as the
// store had it when the decision read it (what the batch will write is
// not in it).
func (b *batch) run(ctx context.Context, key run.Key) (*run.Run, error) {
	return b.f.run(ctx, key)
}

func (e *Engine) newBatch(lp *loadedPipeline, now time.Time) *batch {
	b := &batch{e: e, lp: lp, now: now, f: e.directFacts()}
	if lp != nil {
		b.p = lp.p
	}
	return b
}

// firstLoaded is when the batch's pipeline was first loaded (the
// forward-only horizon of its SLA alerts), as the decision read it.
func (b *batch) firstLoaded() time.Time {
	if b.lp == nil {
		return time.Time{}
	}
	return b.lp.row.FirstLoadedAt
}

// paused reports whether the batch's pipeline is paused, as the decision
// read it (and as the commit's condition requires it still to be).
func (b *batch) paused() bool { return b.lp != nil && b.lp.row.Paused }

// conditioned returns the batch's change with the pipeline facts the
// decision read as conditions: the pipeline row's version (unless the
// batch writes the row, whose write carries its own), and the versions of
// the calendars its config was resolved with (unless written).
func (b *batch) conditioned() store.Change {
	c := b.c
	if b.lp == nil {
		return c
	}
	writes := false
	for _, w := range c.Pipelines {
		writes = writes || w.Pipeline.ID == b.lp.row.ID
	}
	if !writes {
		c.PipelineChecks = append(slices.Clip(c.PipelineChecks), store.PipelineCheck{ID: b.lp.row.ID, Version: b.lp.row.Version})
	}
	for _, k := range b.lp.cals {
		if !slices.ContainsFunc(c.Calendars, func(w store.CalendarWrite) bool { return w.Calendar.Name == k.Name }) {
			c.CalendarChecks = append(slices.Clip(c.CalendarChecks), k)
		}
	}
	return c
}

// emit adds an event for a run key.
func (b *batch) emit(key run.Key, t event.Type, msg string, detail sensor.Object) {
	if b.p != nil && b.p.DryRun && !dryrun.Emits(t) { // the notifier half of dry-run enforcement
		b.e.log.Debug("dry-run: event suppressed", "pipeline", key.PipelineID, "type", t)
		return
	}
	id := ""
	if b.ids != nil {
		id = b.ids.next(b.now)
	}
	if id == "" {
		id = newID(b.now)
	}
	b.c.Events = append(b.c.Events, event.Event{
		ID:         id,
		Time:       b.now,
		Type:       t,
		PipelineID: key.PipelineID,
		ScheduleID: key.ScheduleID,
		Date:       key.Period,
		Message:    msg,
		Detail:     detail,
	})
}

func (b *batch) notes(key run.Key, notes []run.Note) {
	for _, n := range notes {
		b.emit(key, n.Type, n.Message, n.Detail)
	}
}

// notesFirst renders notes as events without adding them, so a caller can
// put them ahead of events already in the batch.
func (b *batch) notesFirst(key run.Key, notes []run.Note) []event.Event {
	saved := b.c.Events
	b.c.Events = nil
	b.notes(key, notes)
	out := b.c.Events
	b.c.Events = saved
	return out
}

func (b *batch) putRun(r run.Run, expect int64) {
	b.c.Runs = append(b.c.Runs, store.RunWrite{Run: r, ExpectVersion: expect})
}

// putTimer and deleteTimer keep one write per timer in the batch (a
// Change touches each record at most once, see store.Change.Check): a
// later write of the same timer replaces the earlier one, as it would
// have if both were applied in turn, and keeps the earlier one's
// condition, which is the one about the stored timer.
func (b *batch) putTimer(t store.Timer, expect *time.Time) {
	if prev, ok := b.takeTimer(t.Key); ok {
		expect = prev
	}
	b.c.Timers = append(b.c.Timers, store.TimerWrite{Timer: t, ExpectDueAt: expect})
}

func (b *batch) deleteTimer(key string, expect *time.Time) {
	if prev, ok := b.takeTimer(key); ok {
		expect = prev
	}
	b.c.TimerDeletes = append(b.c.TimerDeletes, store.TimerDelete{Key: key, ExpectDueAt: expect})
}

// takeTimer removes the batch's write or delete of the timer key and
// returns its condition.
func (b *batch) takeTimer(key string) (expect *time.Time, ok bool) {
	for i, w := range b.c.Timers {
		if w.Timer.Key == key {
			b.c.Timers = slices.Delete(b.c.Timers, i, i+1)
			return w.ExpectDueAt, true
		}
	}
	for i, d := range b.c.TimerDeletes {
		if d.Key == key {
			b.c.TimerDeletes = slices.Delete(b.c.TimerDeletes, i, i+1)
			return d.ExpectDueAt, true
		}
	}
	return nil, false
}

func (b *batch) marker(m store.Marker, ifAbsent bool) {
	b.c.Markers = append(b.c.Markers, store.MarkerWrite{Marker: m, IfAbsent: ifAbsent})
}

// hasRun reports whether the batch already writes the run of key.
func (b *batch) hasRun(key run.Key) bool {
	for _, w := range b.c.Runs {
		if w.Run.Key == key {
			return true
		}
	}
	return false
}

// touchesTimer reports whether the batch writes or deletes the timer key.
func (b *batch) touchesTimer(key string) bool {
	for _, t := range b.c.Timers {
		if t.Timer.Key == key {
			return true
		}
	}
	for _, t := range b.c.TimerDeletes {
		if t.Key == key {
			return true
		}
	}
	return false
}

// commit writes the batch, on the condition that the pipeline facts it
// was decided on still hold (store.ErrConflict otherwise: the caller
// decides again on fresh facts). An empty batch commits nothing.
func (b *batch) commit(ctx context.Context) error {
	if b.c.Empty() {
		return nil
	}
	if err := b.rootCauses(ctx); err != nil {
		return err
	}
	if err := b.e.st.Commit(ctx, b.conditioned()); err != nil {
		return err
	}
	if len(b.c.Timers)+len(b.c.TimerDeletes) > 0 {
		b.e.notify()
	}
	if len(b.c.Events) > 0 && b.e.events != nil {
		b.e.events(b.c.Events)
	}
	return nil
}

// Timer kinds (store.Timer.Kind: which handler a timer goes to). Keys
// are run.TimerKey records (run/timerkey.go builds and reads them); a run
// has at most one step timer, whose kind says which step is due. The
// other kinds are their family's name; the relative SLA timers share the
// absolute ones' kinds.
const (
	kindCron       = string(run.TimerCron)
	kindSLAWarning = string(run.TimerSLAWarning)
	kindSLABreach  = string(run.TimerSLABreach)
	kindPeriod     = string(run.TimerPeriod) // a new period starts: arm its SLA timers
	kindResume     = string(run.TimerResume) // a timed pause ends
	// A silence or a maintenance window's occurrence ends (silenceend.go).
	kindSilenceEnd     = string(run.TimerSilenceEnd)
	kindMaintenanceEnd = string(run.TimerMaintenanceEnd)
)

func stepTimerKey(k run.Key) string { return run.PeriodTimer(run.TimerStep, k).String() }

// IsStepTimerKey reports whether a timer key is a run's step timer — for a
// runtime that learns of a removed timer by its key alone.
func IsStepTimerKey(key string) bool {
	k, err := run.ParseTimerKey(key)
	return err == nil && k.Family == run.TimerStep
}
func cronTimerKey(pipelineID string) string {
	return run.PipelineTimer(run.TimerCron, pipelineID).String()
}
func periodTimerKey(pipelineID string) string {
	return run.PipelineTimer(run.TimerPeriod, pipelineID).String()
}
func resumeTimerKey(pipelineID string) string {
	return run.PipelineTimer(run.TimerResume, pipelineID).String()
}

// stepTimer turns an effect's next step into the run's step timer (or its
// removal when there is no next step). expect set: the write is the
// step's own (its due time read, the commit's condition).
func (b *batch) stepTimer(k run.Key, eff run.Effect, expect *time.Time) {
	if eff.Next == run.StepNone {
		b.deleteTimer(stepTimerKey(k), expect)
		return
	}
	b.putStepTimer(store.Timer{Key: stepTimerKey(k), Kind: string(eff.Next), Run: k, DueAt: eff.NextAt}, expect)
}

// putStepTimer writes a run's step timer stamped (run.StampStep) from the
// stored one the decision read (readStep, which must come first).
func (b *batch) putStepTimer(t store.Timer, expect *time.Time) {
	var prev *run.StoredStep
	if read, _ := b.stepRead(t.Key); read != nil {
		prev = &run.StoredStep{At: read.DueAt, Stamp: run.StampOf(read.Detail)}
	}
	t.Detail = run.StampStep(prev, expect != nil, t.DueAt, b.now).Detail()
	b.putTimer(t, expect)
}
