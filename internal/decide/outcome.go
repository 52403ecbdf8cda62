package decide

import (
	"log/slog"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/dryrun"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// Outcome is one decision's whole answer, built as it is decided: the
// writes of a single atomic commit (C) and the lines to log. The engine
// commits C on the condition that the pipeline facts the decision read
// still hold (Conditioned).
type Outcome struct {
	// LP is the pipeline facts the decision read (nil for writes not
	// tied to a pipeline): the commit is conditioned on them.
	LP  *Pipeline
	P   *pipeline.Pipeline // LP's config; nil when LP is
	Now time.Time
	C   store.Change
	// F are the facts the decision reads.
	F *Facts
	// Env: the rules' options and the events' numbering.
	Env
	// Logs are what the decision asks the engine to log.
	Logs []Log
	// steps are the runs' step timers the decision has read, by timer key
	// (nil: none stored): what their writes are stamped from
	// (run.StampStep).
	steps map[string]*store.Timer
}

// Log is a line the engine logs for a decision.
type Log struct {
	Level slog.Level
	Msg   string
	Args  []any
}

// Env is what every decision's input carries besides its own fields,
// the same for each input of a batch: the options rules are evaluated
// with, and the numbering of the outcome's events (the engine's id
// sequence, eventid.Block.Next).
type Env struct {
	Rules rule.Options
	NewID func(time.Time) string
}

// New returns an empty outcome of a decision about lp (nil: not tied to
// a pipeline) on facts f at now.
func New(lp *Pipeline, f *Facts, now time.Time, env Env) *Outcome {
	o := &Outcome{LP: lp, Now: now, F: f, Env: env}
	if lp != nil {
		o.P = lp.P
	}
	return o
}

// newKnown returns the empty outcome of an operator's decision about
// pipeline id, which must run (Facts.KnownPipeline): o.LP holds it.
func newKnown(f *Facts, id string, now time.Time, env Env) (*Outcome, error) {
	lp, err := f.KnownPipeline(id)
	if err != nil {
		return nil, err
	}
	return New(lp, f, now, env), nil
}

func (o *Outcome) log(level slog.Level, msg string, args ...any) {
	o.Logs = append(o.Logs, Log{Level: level, Msg: msg, Args: args})
}

// ReadStep records the step timer the decision read for key (nil: none).
func (o *Outcome) ReadStep(key string, t *store.Timer) {
	if o.steps == nil {
		o.steps = map[string]*store.Timer{}
	}
	if t != nil {
		cp := *t
		t = &cp
	}
	o.steps[key] = t
}

// stepRead returns the step timer the decision read for key, and whether
// it read it.
func (o *Outcome) stepRead(key string) (*store.Timer, bool) {
	t, ok := o.steps[key]
	return t, ok
}

// FirstLoaded is when the outcome's pipeline was first loaded (the
// forward-only horizon of its SLA alerts), as the decision read it.
func (o *Outcome) FirstLoaded() time.Time {
	if o.LP == nil {
		return time.Time{}
	}
	return o.LP.Row.FirstLoadedAt
}

// Paused reports whether the outcome's pipeline is paused, as the
// decision read it (and as the commit's condition requires it still to
// be).
func (o *Outcome) Paused() bool { return o.LP != nil && o.LP.Row.Paused }

// Conditioned returns the outcome's change with the pipeline facts the
// decision read as conditions: the pipeline row's version (unless the
// outcome writes the row, whose write carries its own), and the versions
// of the calendars its config was resolved with (unless written).
func (o *Outcome) Conditioned() store.Change {
	c := o.C
	if o.LP == nil {
		return c
	}
	writes := false
	for _, w := range c.Pipelines {
		writes = writes || w.Pipeline.ID == o.LP.Row.ID
	}
	if !writes {
		c.PipelineChecks = append(slices.Clip(c.PipelineChecks), store.PipelineCheck{ID: o.LP.Row.ID, Version: o.LP.Row.Version})
	}
	for _, k := range o.LP.Cals {
		if !slices.ContainsFunc(c.Calendars, func(w store.CalendarWrite) bool { return w.Calendar.Name == k.Name }) {
			c.CalendarChecks = append(slices.Clip(c.CalendarChecks), k)
		}
	}
	return c
}

// Emit adds an event for a run key (none of a type a dry-run pipeline
// does not emit: the notifier half of dry-run enforcement).
func (o *Outcome) Emit(key run.Key, t event.Type, msg string, detail sensor.Object) {
	if o.P != nil && o.P.DryRun && !dryrun.Emits(t) {
		return
	}
	o.C.Events = append(o.C.Events, event.Event{
		ID:         o.NewID(o.Now),
		Time:       o.Now,
		Type:       t,
		PipelineID: key.PipelineID,
		ScheduleID: key.ScheduleID,
		Date:       key.Period,
		Message:    msg,
		Detail:     detail,
	})
}

// Notes adds the events of notes.
func (o *Outcome) Notes(key run.Key, notes []run.Note) {
	for _, n := range notes {
		o.Emit(key, n.Type, n.Message, n.Detail)
	}
}

// NotesFirst renders notes as events without adding them, so a caller
// can put them ahead of events already in the outcome.
func (o *Outcome) NotesFirst(key run.Key, notes []run.Note) []event.Event {
	saved := o.C.Events
	o.C.Events = nil
	o.Notes(key, notes)
	out := o.C.Events
	o.C.Events = saved
	return out
}

// PutRun writes r, on the condition of the stored version expect.
func (o *Outcome) PutRun(r run.Run, expect int64) {
	o.C.Runs = append(o.C.Runs, store.RunWrite{Run: r, ExpectVersion: expect})
}

// PutTimer and DeleteTimer keep one write per timer in the outcome (a
// Change touches each record at most once, see store.Change.Check): a
// later write of the same timer replaces the earlier one, as it would
// have if both were applied in turn, and keeps the earlier one's
// condition, which is the one about the stored timer.
func (o *Outcome) PutTimer(t store.Timer, expect *time.Time) {
	if prev, ok := o.takeTimer(t.Key); ok {
		expect = prev
	}
	o.C.Timers = append(o.C.Timers, store.TimerWrite{Timer: t, ExpectDueAt: expect})
}

// DeleteTimer: see PutTimer.
func (o *Outcome) DeleteTimer(key string, expect *time.Time) {
	if prev, ok := o.takeTimer(key); ok {
		expect = prev
	}
	o.C.TimerDeletes = append(o.C.TimerDeletes, store.TimerDelete{Key: key, ExpectDueAt: expect})
}

// takeTimer removes the outcome's write or delete of the timer key and
// returns its condition.
func (o *Outcome) takeTimer(key string) (expect *time.Time, ok bool) {
	for i, w := range o.C.Timers {
		if w.Timer.Key == key {
			o.C.Timers = slices.Delete(o.C.Timers, i, i+1)
			return w.ExpectDueAt, true
		}
	}
	for i, d := range o.C.TimerDeletes {
		if d.Key == key {
			o.C.TimerDeletes = slices.Delete(o.C.TimerDeletes, i, i+1)
			return d.ExpectDueAt, true
		}
	}
	return nil, false
}

// Marker writes m (ifAbsent: only if the store has none of its kind).
func (o *Outcome) Marker(m store.Marker, ifAbsent bool) {
	o.C.Markers = append(o.C.Markers, store.MarkerWrite{Marker: m, IfAbsent: ifAbsent})
}

// PutMarker writes m, replacing the outcome's own write or delete of the
// same marker (a Change touches a record once).
func (o *Outcome) PutMarker(m store.Marker) {
	for i, w := range o.C.Markers {
		if w.Marker.Key == m.Key && w.Marker.Kind == m.Kind {
			o.C.Markers[i] = store.MarkerWrite{Marker: m}
			return
		}
	}
	for i, d := range o.C.MarkerDeletes {
		if d.Key == m.Key && d.Kind == m.Kind {
			o.C.MarkerDeletes = append(o.C.MarkerDeletes[:i:i], o.C.MarkerDeletes[i+1:]...)
			break
		}
	}
	o.Marker(m, false)
}

// HasRun reports whether the outcome already writes the run of key.
func (o *Outcome) HasRun(key run.Key) bool {
	for _, w := range o.C.Runs {
		if w.Run.Key == key {
			return true
		}
	}
	return false
}

// TouchesTimer reports whether the outcome writes or deletes the timer
// key.
func (o *Outcome) TouchesTimer(key string) bool {
	for _, t := range o.C.Timers {
		if t.Timer.Key == key {
			return true
		}
	}
	for _, t := range o.C.TimerDeletes {
		if t.Key == key {
			return true
		}
	}
	return false
}

// StepTimerKey is the key of a run's step timer.
func StepTimerKey(k run.Key) string { return run.PeriodTimer(run.TimerStep, k).String() }

// StepTimer turns an effect's next step into the run's step timer (or
// its removal when there is no next step). expect set: the write is the
// step's own (its due time read, the commit's condition).
func (o *Outcome) StepTimer(k run.Key, eff run.Effect, expect *time.Time) {
	if eff.Next == run.StepNone {
		o.DeleteTimer(StepTimerKey(k), expect)
		return
	}
	o.PutStepTimer(store.Timer{Key: StepTimerKey(k), Kind: string(eff.Next), Run: k, DueAt: eff.NextAt}, expect)
}

// PutStepTimer writes a run's step timer stamped (run.StampStep) from the
// stored one the decision read (ReadStep, which must come first).
func (o *Outcome) PutStepTimer(t store.Timer, expect *time.Time) {
	var prev *run.StoredStep
	if read, _ := o.stepRead(t.Key); read != nil {
		prev = &run.StoredStep{At: read.DueAt, Stamp: run.StampOf(read.Detail)}
	}
	t.Detail = run.StampStep(prev, expect != nil, t.DueAt, o.Now).Detail()
	o.PutTimer(t, expect)
}

// TakeLogs returns the lines the decision asks to log, and forgets them.
func (o *Outcome) TakeLogs() []Log {
	ls := o.Logs
	o.Logs = nil
	return ls
}
