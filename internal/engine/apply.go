package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
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
	b.stepTimer(r.Key, eff, timerExpect)
	if eff.LedgerReason != "" {
		ledger, err := e.st.LedgerList(ctx, r.Key)
		if err != nil {
			return err
		}
		b.c.Ledger = append(b.c.Ledger, store.LedgerEntry{Key: r.Key, Seq: len(ledger) + 1, Reason: eff.LedgerReason, Source: eff.LedgerSource, At: b.now})
	}
	if eff.Succeeded {
		if err := e.onSuccess(ctx, b, lp.p, r); err != nil {
			return err
		}
	}
	if eff.Ended || eff.Succeeded {
		e.dropSLATimers(b, r.Key)
	}
	return nil
}

// onSuccess captures the post-run baseline and gives the SLA verdict.
func (e *Engine) onSuccess(ctx context.Context, b *batch, p *pipeline.Pipeline, r run.Run) error {
	per, err := parsePeriod(r.Period)
	if err != nil {
		return err
	}
	if err := e.captureBaseline(ctx, b, p, r.Key, per, nil); err != nil {
		return err
	}
	times, ok, err := e.slaTimes(ctx, p, r.Key, per)
	if err != nil || !ok {
		return err
	}
	if _, err := e.st.MarkerGet(ctx, r.Key, markerSLAVerdict); err == nil {
		return nil // the period already had its verdict (this is a rerun)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	breachReported, err := e.hasMarker(ctx, r.Key, markerSLABreach)
	if err != nil {
		return err
	}
	verdict, ok := run.SLAVerdict(times, breachReported, b.now)
	if !ok {
		return nil
	}
	msg := fmt.Sprintf("job completed %s the SLA deadline %s", map[bool]string{true: "before", false: "after"}[verdict == event.SLAMet], times.Breach.In(p.SLA.Location).Format(time.RFC3339))
	b.emit(r.Key, verdict, msg, run.Detail("breachAt", times.Breach, "deadline", times.Deadline, "completedAt", b.now, "marginSeconds", int64(times.Breach.Sub(b.now)/time.Second)))
	b.marker(store.Marker{Key: r.Key, Kind: markerSLAVerdict, At: b.now, Detail: run.Detail("verdict", string(verdict))}, false)
	if verdict == event.SLABreach {
		b.marker(store.Marker{Key: r.Key, Kind: markerSLABreach, At: b.now}, false)
	}
	return nil
}

// captureBaseline stores, for each post-run rule key, the sensor data it
// has now; the drift check compares later writes with it.
func (e *Engine) captureBaseline(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period, overlay *store.Sensor) error {
	if p.PostRun == nil || len(p.PostRun.Rules) == 0 {
		return nil
	}
	sensors, err := e.sensorsFor(ctx, key.PipelineID, per, overlay)
	if err != nil {
		return err
	}
	base := map[string]sensor.Object{}
	for _, r := range p.PostRun.Rules {
		if rec, ok := sensors[r.Key]; ok {
			base[r.Key] = rec.Data
		}
	}
	if len(base) == 0 {
		return nil
	}
	b.c.Baselines = append(b.c.Baselines, store.Baseline{Key: key, Sensors: base, CapturedAt: b.now})
	keys := ""
	for k := range base {
		if keys != "" {
			keys += ", "
		}
		keys += k
	}
	b.emit(key, event.PostRunBaselineCaptured, "post-run baseline captured", run.Detail("sensorKeys", keys))
	return nil
}

func (e *Engine) hasMarker(ctx context.Context, key run.Key, kind string) (bool, error) {
	_, err := e.st.MarkerGet(ctx, key, kind)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// slaTimes resolves the period's SLA instants; the relative SLA needs the
// first trigger-sensor arrival, read from its marker.
func (e *Engine) slaTimes(ctx context.Context, p *pipeline.Pipeline, key run.Key, per schedule.Period) (run.SLATimes, bool, error) {
	if p.SLA == nil {
		return run.SLATimes{}, false, nil
	}
	var arrival time.Time
	if p.SLA.Deadline.IsZero() {
		m, err := e.st.MarkerGet(ctx, key, markerFirstArrival)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return run.SLATimes{}, false, err
		}
		arrival = m.At
	}
	return run.ResolveSLA(p, per, arrival)
}

// armSLA sets the period's SLA timers, unless the pipeline has no SLA that
// applies, is in dry-run, the period is excluded (or not an inclusion
// date), or the alerts were already sent. Timers are keyed by period, so
// arming twice is harmless.
func (e *Engine) armSLA(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period) error {
	if p.SLA == nil || p.DryRun || run.Excluded(p, per) {
		return nil
	}
	if inc := p.Schedule.Include; inc != nil && !inc.Days.Contains(per.Date) {
		return nil
	}
	times, ok, err := e.slaTimes(ctx, p, key, per)
	if err != nil {
		e.log.Warn("SLA deadline does not resolve for this period; no SLA timers", "pipeline", key.PipelineID, "period", key.Period, "err", err)
		return nil
	}
	if !ok {
		return nil
	}
	warnType, breachType := event.SLAWarning, event.SLABreach
	if times.Relative {
		warnType, breachType = event.RelativeSLAWarning, event.RelativeSLABreach
	}
	// A period that already had its verdict (SLA_MET or SLA_BREACH at
	// completion) or its breach alert says nothing more, even when a rerun
	// reopens it.
	for _, kind := range []string{markerSLAVerdict, markerSLABreach} {
		done, err := e.hasMarker(ctx, key, kind)
		if err != nil || done {
			return err
		}
	}
	detail := run.Detail("breachAt", times.Breach, "deadline", times.Deadline)
	if !times.Warning.IsZero() && b.now.Before(times.Breach) {
		warnSent, err := e.hasMarker(ctx, key, markerSLAWarning)
		if err != nil {
			return err
		}
		if !warnSent {
			b.putTimer(store.Timer{Key: slaTimerKey(kindSLAWarning, key), Kind: kindSLAWarning, Run: key, DueAt: times.Warning, Detail: withType(detail, warnType)}, nil)
		}
	}
	b.putTimer(store.Timer{Key: slaTimerKey(kindSLABreach, key), Kind: kindSLABreach, Run: key, DueAt: times.Breach, Detail: withType(detail, breachType)}, nil)
	return nil
}

func withType(d sensor.Object, t event.Type) sensor.Object {
	fields := map[string]sensor.Value{"event": sensor.StringValue(string(t))}
	for _, k := range d.Keys() {
		v, _ := d.Get(k)
		fields[k] = v
	}
	return sensor.NewObject(fields)
}

// dropSLATimers removes the period's SLA timers: the period is done, or
// its failure event carries the news.
func (e *Engine) dropSLATimers(b *batch, key run.Key) {
	b.deleteTimer(slaTimerKey(kindSLAWarning, key), nil)
	b.deleteTimer(slaTimerKey(kindSLABreach, key), nil)
}

// sensorsFor loads the pipeline's sensors as rules see them for a period:
// per-period keys mapped to their base key, with overlay (a write being
// decided in the same commit) in place of its stored version.
func (e *Engine) sensorsFor(ctx context.Context, pipelineID string, per schedule.Period, overlay *store.Sensor) (rule.SensorMap, error) {
	stored, err := e.st.SensorList(ctx, pipelineID)
	if err != nil {
		return nil, err
	}
	recs := make([]sensor.Record, 0, len(stored)+1)
	for _, s := range stored {
		if overlay != nil && s.Key == overlay.Key {
			continue
		}
		recs = append(recs, s.Record())
	}
	if overlay != nil {
		recs = append(recs, overlay.Record())
	}
	return rule.SensorMap(schedule.RemapForPeriod(recs, per)), nil
}

// evaluate evaluates the validation rules of a period.
func (e *Engine) evaluate(ctx context.Context, p *pipeline.Pipeline, key run.Key, overlay *store.Sensor, now time.Time) (rule.Outcome, error) {
	per, err := parsePeriod(key.Period)
	if err != nil {
		return rule.Outcome{}, err
	}
	sensors, err := e.sensorsFor(ctx, key.PipelineID, per, overlay)
	if err != nil {
		return rule.Outcome{}, err
	}
	return rule.EvaluateAll(p.Validation.Mode, p.Validation.Rules, sensors, now, e.rules), nil
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
