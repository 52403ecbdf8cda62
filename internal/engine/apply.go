package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sla"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
)

// applyRun adds a decided run and everything its effect asks for to the
// batch. prev is the stored run (nil when r is new); timerExpect is the due
// time of the step timer being processed, if any.
func (e *Engine) applyRun(ctx context.Context, b *batch, lp *loadedPipeline, prev *run.Run, r run.Run, eff run.Effect, timerExpect *time.Time) error {
	var expect int64
	if prev != nil {
		expect = prev.Version
	}
	b.putRun(r, expect)
	b.notes(r.Key, eff.Notes)
	if err := e.readStepTimer(ctx, b, r.Key); err != nil {
		return err
	}
	b.stepTimer(r.Key, eff, timerExpect)
	if err := wakeBackfill(ctx, b, prev, r); err != nil {
		return err
	}
	if eff.LedgerReason != "" {
		ledger, err := b.f.ledger(ctx, r.Key)
		if err != nil {
			return err
		}
		b.c.Ledger = append(b.c.Ledger, store.LedgerEntry{Key: r.Key, Seq: len(ledger) + 1, Reason: eff.LedgerReason, Source: eff.LedgerSource, At: b.now})
	}
	if eff.Succeeded {
		if err := e.onSuccess(ctx, b, lp.p, r); err != nil {
			return err
		}
		// Its downstreams are re-evaluated at once (upstream.go); the
		// index is read here so a pipeline nobody depends on arms nothing.
		if ids, err := e.downstreamIDs(ctx, b.f, r.PipelineID); err != nil {
			return err
		} else if len(ids) > 0 {
			b.armDownstreams(r)
		}
	}
	if eff.DropsSLATimers() {
		e.dropSLATimers(b, r.Key)
	}
	return nil
}

// onSuccess captures the post-run baseline and gives the SLA verdict
// (sla.VerdictAtSuccess).
func (e *Engine) onSuccess(ctx context.Context, b *batch, p *pipeline.Pipeline, r run.Run) error {
	per, err := parsePeriod(r.Period)
	if err != nil {
		return err
	}
	if err := e.captureBaseline(ctx, b, p, r.Key, per, nil); err != nil {
		return err
	}
	m, err := e.slaMarks(ctx, b.f, p, r.Key, per)
	if err != nil {
		return err
	}
	note, marks, ok, err := sla.VerdictAtSuccess(p, per, m, b.firstLoaded(), b.now)
	if err != nil || !ok {
		return err
	}
	b.notes(r.Key, []run.Note{note})
	// If-absent: an SLA timer (or another process) that reported the
	// breach first wins, and this commit retries and stays silent.
	for _, mk := range marks {
		b.marker(store.Marker{Key: r.Key, Kind: mk.Kind, At: b.now, Detail: mk.Detail}, true)
	}
	return nil
}

// captureBaseline stores the post-run baseline run.CaptureBaseline decides
// on, from the period's sensors (overlay: a write in the same commit).
func (e *Engine) captureBaseline(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period, overlay *store.Sensor) error {
	keys := run.PostRunKeys(p)
	if len(keys) == 0 {
		return nil // no post-run rules: no sensors to read
	}
	sensors, err := e.sensorsFor(ctx, b.f, key.PipelineID, per, p.PostRun.Rules, overlay)
	if err != nil {
		return err
	}
	base, ok := run.CaptureBaseline(keys, sensors)
	switch {
	case !ok:
	case base.Drop:
		b.c.BaselineDelete = append(b.c.BaselineDelete, key)
	default:
		b.c.Baselines = append(b.c.Baselines, store.Baseline{Key: key, Sensors: base.Sensors, CapturedAt: b.now})
		b.notes(key, []run.Note{base.Note})
	}
	return nil
}

func (e *Engine) hasMarker(ctx context.Context, key run.Key, kind string) (bool, error) {
	_, err := e.st.MarkerGet(ctx, key, kind)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// slaMarks reads the period's SLA facts from its markers; none are read
// for a period no SLA decision concerns (sla.MarksNeeded).
func (e *Engine) slaMarks(ctx context.Context, f *facts, p *pipeline.Pipeline, key run.Key, per schedule.Period) (sla.Marks, error) {
	var m sla.Marks
	if !sla.MarksNeeded(p, per) {
		return m, nil
	}
	// One read of the period's markers, not one per kind: Set keeps the
	// kinds sla.Marks holds and ignores the others.
	ms, err := f.markersOf(ctx, key)
	if err != nil {
		return m, err
	}
	for _, mk := range ms {
		m.Set(mk.Kind, mk.At)
	}
	return m, nil
}

// armSLA sets the period's SLA timers sla.TimersFor decides on.
func (e *Engine) armSLA(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period) error {
	m, err := e.slaMarks(ctx, b.f, p, key, per)
	if err != nil {
		return err
	}
	for _, w := range b.c.Markers { // this commit's own (a backfill's marker)
		if w.Marker.Key == key {
			m.Set(w.Marker.Kind, w.Marker.At)
		}
	}
	timers, unresolved := sla.TimersFor(p, per, m, b.firstLoaded(), b.now)
	e.setSLATimers(b, key, timers, unresolved)
	return nil
}

// setSLATimers puts the SLA timers of a period as decided; unresolved is
// the decision's complaint about a deadline that does not resolve.
func (e *Engine) setSLATimers(b *batch, key run.Key, timers []sla.Timer, unresolved error) {
	if unresolved != nil {
		e.log.Warn("SLA deadline does not resolve for this period; no SLA timers", "pipeline", key.PipelineID, "period", key.Period, "err", unresolved)
	}
	b.slaTimers(key, timers)
}

// armLoadSLA sets the absolute SLA timers sla.TimersToArm selects when
// a config takes effect — the current period's, and those of earlier
// periods whose warning or breach is still ahead — less those
// sla.LoadTimers drops on the period's facts.
func (e *Engine) armLoadSLA(ctx context.Context, b *batch, p *pipeline.Pipeline, now time.Time) error {
	for _, a := range sla.TimersToArm(p, b.firstLoaded(), now) {
		key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: a.Period.String()}
		r, err := b.f.run(ctx, key)
		if err != nil {
			return err
		}
		hasRun := r != nil
		ended := hasRun && r.State.Terminal()
		m, err := e.slaMarks(ctx, b.f, p, key, a.Period)
		if err != nil {
			return err
		}
		b.slaTimers(key, sla.LoadTimers(a, hasRun, ended, m))
	}
	return nil
}

// slaTimers puts the SLA timers of a period as decided. A period has one
// timer per SLA and instant, keyed by period, so setting one twice
// replaces it.
func (b *batch) slaTimers(key run.Key, timers []sla.Timer) {
	for _, t := range timers {
		kind, fam := kindSLAWarning, run.TimerSLAWarning
		switch {
		case t.Relative && t.Breach:
			kind, fam = kindSLABreach, run.TimerRelSLABreach
		case t.Relative:
			fam = run.TimerRelSLAWarning
		case t.Breach:
			kind, fam = kindSLABreach, run.TimerSLABreach // the watchdog checks this timer exists
		}
		b.putTimer(store.Timer{Key: run.PeriodTimer(fam, key).String(), Kind: kind, Run: key, DueAt: t.At, Detail: t.Detail}, nil)
	}
}

// dropSLATimers removes the period's SLA timers: the period is done, or
// its failure event carries the news.
func (e *Engine) dropSLATimers(b *batch, key run.Key) {
	for _, fam := range []run.TimerFamily{run.TimerSLAWarning, run.TimerSLABreach, run.TimerRelSLAWarning, run.TimerRelSLABreach} {
		b.deleteTimer(run.PeriodTimer(fam, key).String(), nil)
	}
}

// evaluate evaluates the validation rules of a period for a run of cause
// whose evaluation started at evalStart (run.PeriodSensors: what counts
// for a backfill or a rerun started after its period ended).
func (e *Engine) evaluate(ctx context.Context, f *facts, p *pipeline.Pipeline, key run.Key, overlay *store.Sensor, cause run.Cause, evalStart, now time.Time) (rule.Outcome, error) {
	per, err := parsePeriod(key.Period)
	if err != nil {
		return rule.Outcome{}, err
	}
	sensors, err := e.sensorsFor(ctx, f, key.PipelineID, per, p.Validation.Rules, overlay)
	if err != nil {
		return rule.Outcome{}, err
	}
	return e.validation(ctx, f, p, per, run.PeriodSensors(p, per, cause, sensors, evalStart), now)
}

// request describes a run's job to the job port.
func (e *Engine) request(p *pipeline.Pipeline, r run.Run) trigger.Request {
	per, _ := parsePeriod(r.Period)
	vars := pipeline.TemplateVars{Pipeline: r.PipelineID, Schedule: r.ScheduleID, Date: per.Date.String(), RunID: runID(r)}
	if per.Hourly {
		vars.Hour = fmt.Sprintf("%02d", per.Hour)
	}
	return trigger.Request{
		PipelineID: r.PipelineID,
		ScheduleID: r.ScheduleID,
		Period:     r.Period,
		RunID:      vars.RunID,
		Attempt:    r.Attempt + 1,
		DryRun:     p.DryRun,
		Type:       string(p.Job.Type),
		Config:     p.Job.Config,
		Vars:       vars,
		JobRunID:   r.JobRunID,
		Meta:       r.JobMeta,
	}
}

// runID is Interlock's id for one trigger attempt of a run.
func runID(r run.Run) string {
	return r.PipelineID + "-" + r.ScheduleID + "-" + r.Period + "-g" + strconv.Itoa(r.Generation) + "-a" + strconv.Itoa(r.Attempt+1)
}

func parsePeriod(s string) (schedule.Period, error) {
	p, err := schedule.ParsePeriod(s)
	if err != nil {
		return schedule.Period{}, fmt.Errorf("stored period %q: %w", s, err)
	}
	return p, nil
}

// readStepTimer reads the run's step timer into the batch, unless the
// decision read it already: its stamp is what the step timer's write is
// stamped from.
func (e *Engine) readStepTimer(ctx context.Context, b *batch, key run.Key) error {
	tk := stepTimerKey(key)
	if _, ok := b.stepRead(tk); ok {
		return nil
	}
	t, err := b.f.timer(ctx, tk)
	if err != nil {
		return err
	}
	b.readStep(tk, t)
	return nil
}
