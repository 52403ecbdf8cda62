package engine

import (
	"context"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sla"
	"github.com/interlockhq/interlock/internal/store"
)

// cronTick starts the run of the tick's period (product spec §3 item 2:
// cron schedules start runs) and sets the next tick. Ticks missed while the
// engine was down are not replayed one by one: the next tick is the first
// after now, and the watchdog reports periods that got no run.
func (e *Engine) cronTick(ctx context.Context, f *facts, t store.Timer, now time.Time) (*batch, error) {
	lp, err := f.pipelineOf(ctx, t.Run.PipelineID)
	if err != nil {
		return nil, err
	}
	if lp == nil || !run.NeedsCronTimer(lp.p) {
		return e.newBatch(lp, now).withFacts(f), nil // the timer goes, on what was read
	}
	p := lp.p
	b := e.newBatch(lp, now).withFacts(f)
	due := t.DueAt
	per, next := run.CronTick(p, due, now)
	b.putTimer(store.Timer{Key: cronTimerKey(p.ID), Kind: kindCron, Run: run.Key{PipelineID: p.ID}, DueAt: next}, &due)
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	return b, e.startPeriod(ctx, b, lp, key, per, run.CauseCron, nil)
}

// startPeriod opens the period's run as run.PeriodStart decides: an
// excluded period is reported once, a dry-run pipeline only observes, a
// paused one starts nothing, a period with a run keeps it. The run's first
// evaluation happens in the same commit, so a sensor write that completes
// the rules is decided at once.
func (e *Engine) startPeriod(ctx context.Context, b *batch, lp *loadedPipeline, key run.Key, per schedule.Period, cause run.Cause, overlay *store.Sensor) error {
	p := lp.p
	existing, err := e.runOf(ctx, b, key)
	if err != nil {
		return err
	}
	switch run.PeriodStart(p, per, lp.row.Paused, existing) {
	case run.StartExcluded:
		reported, err := b.f.hasMarker(ctx, key, run.MarkerExcluded)
		if err != nil {
			return err
		}
		if note, ok := run.ExcludedStart(p, per, cause, reported); ok {
			b.notes(key, []run.Note{note})
			b.marker(store.Marker{Key: key, Kind: run.MarkerExcluded, At: b.now}, true)
		}
		return nil
	case run.StartDryRun:
		return e.dryRunTrigger(ctx, b, p, key, per, overlay)
	case run.StartHeld:
		e.log.InfoContext(ctx, "pipeline paused: period not started", "pipeline", p.ID, "period", key.Period, "cause", cause)
		return nil
	case run.StartExists:
		return nil
	}
	r, eff := run.Start(key, cause, lp.row.ConfigVersion, p, b.now)
	if err := e.armSLA(ctx, b, p, key, per); err != nil {
		return err
	}
	return e.evaluateRun(ctx, b, lp, nil, &r, eff, overlay, nil)
}

// slaTimer fires an SLA warning or breach for a period that is not done,
// as sla.Alert decides on the config in force (it may have changed
// since the timer was set: no SLA any more, an excluded date, dry-run).
func (e *Engine) slaTimer(ctx context.Context, f *facts, t store.Timer, now time.Time) (*batch, error) {
	lp, err := f.pipelineOf(ctx, t.Run.PipelineID)
	if err != nil {
		return nil, err
	}
	if lp == nil {
		return e.newBatch(nil, now).withFacts(f), nil
	}
	b := e.newBatch(lp, now).withFacts(f)
	per, err := parsePeriod(t.Run.Period)
	if err != nil {
		return b, nil // not a period: the timer goes
	}
	m, err := e.slaMarks(ctx, b.f, lp.p, t.Run, per)
	if err != nil {
		return nil, err
	}
	existing, err := e.periodRun(ctx, b.f, t.Run, per)
	if err != nil {
		return nil, err
	}
	sf := sla.ParseTimer(t.Detail, t.Kind == kindSLABreach, t.DueAt)
	note, marker, ok := sla.Alert(lp.p, per, sf, m, existing, now)
	if !ok {
		return b, nil
	}
	b.notes(t.Run, []run.Note{note})
	b.marker(store.Marker{Key: t.Run, Kind: marker, At: now}, true) // a racing writer that sent it first wins
	return b, nil
}

// periodTimer arms the SLA timers of the period that starts now and sets
// the timer for the next period, so SLA alerts fire even when no data and
// no run ever show up for a period.
func (e *Engine) periodTimer(ctx context.Context, f *facts, t store.Timer, now time.Time) (*batch, error) {
	lp, err := f.pipelineOf(ctx, t.Run.PipelineID)
	if err != nil {
		return nil, err
	}
	if lp == nil || !run.NeedsPeriodTimer(lp.p) {
		return e.newBatch(lp, now).withFacts(f), nil
	}
	p := lp.p
	b := e.newBatch(lp, now).withFacts(f)
	due := t.DueAt
	per, nextStart := run.PeriodTick(p, due)
	b.putTimer(periodTimer(p.ID, nextStart), &due)
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	return b, e.armPeriodSLA(ctx, b, p, key, per)
}

// armPeriodSLA arms a period's SLA timers unless its run already ended.
func (e *Engine) armPeriodSLA(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period) error {
	r, err := b.f.run(ctx, key)
	if err != nil {
		return err
	}
	ended := r != nil && r.State.Terminal()
	m, err := e.slaMarks(ctx, b.f, p, key, per)
	if err != nil {
		return err
	}
	timers, unresolved := sla.PeriodStartTimers(p, per, ended, m, b.firstLoaded(), b.now)
	e.setSLATimers(b, key, timers, unresolved)
	return nil
}

// periodTimer is the timer of a pipeline's next period start.
func periodTimer(pipelineID string, at time.Time) store.Timer {
	return store.Timer{Key: periodTimerKey(pipelineID), Kind: kindPeriod, Run: run.Key{PipelineID: pipelineID}, DueAt: at}
}

// periodRun returns the run that stands for a period (sla.DayRun): its
// own, or for a daily period one of its hours'; nil when none.
func (e *Engine) periodRun(ctx context.Context, f *facts, key run.Key, per schedule.Period) (*run.Run, error) {
	own, err := f.run(ctx, key)
	if err != nil {
		return nil, err
	}
	var sameDay []run.Run
	if own == nil && !per.Hourly { // only then can an hour stand for it
		day := per.Date.String()
		if sameDay, err = e.st.RunList(ctx, store.RunListParams{PipelineID: key.PipelineID, ScheduleID: key.ScheduleID, PeriodFrom: day}); err != nil {
			return nil, err
		}
	}
	return sla.DayRun(per, own, sameDay), nil
}

// runOf returns the run of a period, also when it was created under the
// other schedule id (before a reload added or removed the cron), or nil.
func (e *Engine) runOf(ctx context.Context, b *batch, key run.Key) (*run.Run, error) {
	for _, k := range []run.Key{key, run.OtherSchedule(key)} {
		r, err := b.run(ctx, k)
		if r != nil || err != nil {
			return r, err
		}
	}
	return nil, nil
}
