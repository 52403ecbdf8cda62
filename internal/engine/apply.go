package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/watchdog"
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
	if !run.SLAApplies(p, per) {
		return nil
	}
	times, ok, err := e.slaTimes(ctx, p, r.Key, per)
	if err != nil || !ok {
		return err
	}
	if _, before := run.SLABeforeLoad(times, b.firstLoaded()); before {
		return nil // forward-only: the deadline passed before the pipeline was loaded
	}
	if _, err := e.st.MarkerGet(ctx, r.Key, run.MarkerSLAVerdict); err == nil {
		return nil // the period already had its verdict (this is a rerun)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	breachMarker := run.MarkerSLABreach
	if times.Relative {
		breachMarker = run.MarkerRelBreach
	}
	breachReported, err := e.hasMarker(ctx, r.Key, breachMarker)
	if err != nil {
		return err
	}
	verdict, ok := run.SLAVerdict(times, breachReported, b.now)
	if !ok {
		return nil
	}
	msg := fmt.Sprintf("job completed %s the SLA deadline %s", map[bool]string{true: "before", false: "after"}[verdict == event.SLAMet], times.Breach.In(p.SLA.Location).Format(time.RFC3339))
	b.emit(r.Key, verdict, msg, run.Detail("breachAt", times.Breach, "deadline", times.Deadline, "completedAt", b.now, "marginSeconds", int64(times.Breach.Sub(b.now)/time.Second)))
	// If-absent: an SLA timer (or another process) that reported the
	// breach first wins, and this commit retries and stays silent.
	b.marker(store.Marker{Key: r.Key, Kind: run.MarkerSLAVerdict, At: b.now, Detail: run.Detail("verdict", string(verdict))}, true)
	if verdict == event.SLABreach {
		b.marker(store.Marker{Key: r.Key, Kind: breachMarker, At: b.now}, true)
	}
	return nil
}

// captureBaseline stores, for each post-run rule key, the sensor data it
// has now; the drift check compares later writes with it. The baseline of
// a success stays until the next success replaces it, so drift during a
// rerun is still reported (POST_RUN_DRIFT_INFLIGHT).
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
		// Nothing to compare later writes with: drop the baseline of an
		// earlier success rather than compare with stale data.
		b.c.BaselineDelete = append(b.c.BaselineDelete, key)
		return nil
	}
	b.c.Baselines = append(b.c.Baselines, store.Baseline{Key: key, Sensors: base, CapturedAt: b.now})
	keys := slices.Sorted(maps.Keys(base)) // a stable detail, not map order
	b.emit(key, event.PostRunBaselineCaptured, "post-run baseline captured", run.Detail("sensorKeys", strings.Join(keys, ", ")))
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
		m, err := e.st.MarkerGet(ctx, key, run.MarkerFirstArrival)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return run.SLATimes{}, false, err
		}
		arrival = m.At
	}
	return run.ResolveSLA(p, per, arrival)
}

// slaTrack is one SLA the engine keeps timers and dedup markers for: the
// absolute deadline and the relative one (sla.maxDuration) are tracked
// separately, so a pipeline may have both.
type slaTrack struct {
	times        run.SLATimes
	warn, breach event.Type
}

func (t slaTrack) warnKey(k run.Key) string { return slaTimerKey(t.kindPrefix()+kindSLAWarning, k) }

func (t slaTrack) breachKey(k run.Key) string {
	if !t.times.Relative {
		return watchdog.SLABreachTimerKey(k) // the watchdog checks this timer exists
	}
	return slaTimerKey(t.kindPrefix()+kindSLABreach, k)
}

func (t slaTrack) kindPrefix() string {
	if t.times.Relative {
		return "relative-"
	}
	return ""
}

// markerFor is the dedup marker of an SLA alert type.
func markerFor(t event.Type) string {
	switch t {
	case event.SLAWarning:
		return run.MarkerSLAWarning
	case event.RelativeSLAWarning:
		return run.MarkerRelWarning
	case event.RelativeSLABreach:
		return run.MarkerRelBreach
	}
	return run.MarkerSLABreach
}

// breachOf is the breach alert of the same SLA as t.
func breachOf(t event.Type) event.Type {
	if t == event.RelativeSLAWarning || t == event.RelativeSLABreach {
		return event.RelativeSLABreach
	}
	return event.SLABreach
}

// slaTracks resolves the SLAs that apply to a period: the absolute
// deadline, and the relative one once the first trigger-sensor arrival is
// known (arrival, when not zero, stands for a marker not yet committed).
func (e *Engine) slaTracks(ctx context.Context, p *pipeline.Pipeline, key run.Key, per schedule.Period, arrival time.Time) ([]slaTrack, error) {
	var out []slaTrack
	if p.SLA == nil {
		return nil, nil
	}
	abs, ok, err := run.ResolveAbsoluteSLA(p, per)
	if err != nil {
		e.log.Warn("SLA deadline does not resolve for this period; no SLA timers", "pipeline", key.PipelineID, "period", key.Period, "err", err)
	} else if ok {
		out = append(out, slaTrack{times: abs, warn: event.SLAWarning, breach: event.SLABreach})
	}
	if p.SLA.MaxDuration > 0 {
		if arrival.IsZero() {
			m, err := e.st.MarkerGet(ctx, key, run.MarkerFirstArrival)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			arrival = m.At
		}
		if rel, ok := run.ResolveRelativeSLA(p, arrival); ok {
			out = append(out, slaTrack{times: rel, warn: event.RelativeSLAWarning, breach: event.RelativeSLABreach})
		}
	}
	return out, nil
}

// armSLA sets the period's SLA timers, unless the pipeline is in dry-run,
// the period is excluded (or not an inclusion date), or the period already
// had its verdict or breach alert. Timers are keyed by period, so arming
// twice is harmless.
func (e *Engine) armSLA(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period) error {
	return e.armSLAAt(ctx, b, p, key, per, time.Time{})
}

func (e *Engine) armSLAAt(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, per schedule.Period, arrival time.Time) error {
	if !run.SLAApplies(p, per) {
		return nil
	}
	if settled, err := e.slaSettled(ctx, key); err != nil || settled {
		return err
	}
	tracks, err := e.slaTracks(ctx, p, key, per, arrival)
	if err != nil {
		return err
	}
	firstLoaded := b.firstLoaded()
	for _, t := range tracks {
		warn, breach := run.SLAInstantsToArm(t.times, firstLoaded, b.now)
		if err := e.putSLATimers(ctx, b, p, key, t, warn, breach); err != nil {
			return err
		}
	}
	return nil
}

// armLoadSLA sets the absolute SLA timers run.SLATimersToArm decides on
// when a config takes effect: the current period's, and those of earlier
// periods whose warning or breach is still ahead ("+Nd" deadlines, the
// previous hour's ":MM"). A period whose run already ended, or that had
// its verdict, gets none.
func (e *Engine) armLoadSLA(ctx context.Context, b *batch, p *pipeline.Pipeline, now time.Time) error {
	for _, a := range run.SLATimersToArm(p, b.firstLoaded(), now) {
		key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: a.Period.String()}
		r, err := e.st.RunGet(ctx, key)
		if err == nil && r.State.Terminal() {
			continue
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if settled, err := e.slaSettled(ctx, key); err != nil {
			return err
		} else if settled {
			continue
		}
		t := slaTrack{times: a.Times, warn: event.SLAWarning, breach: event.SLABreach}
		if err := e.putSLATimers(ctx, b, p, key, t, a.Warning, a.Breach); err != nil {
			return err
		}
	}
	return nil
}

// slaSettled reports whether a period needs no SLA timers whatever its
// times: a dry-run pipeline observed it (it stays dry-run's after going
// live), or it had its verdict at completion (even when a rerun reopens it).
func (e *Engine) slaSettled(ctx context.Context, key run.Key) (bool, error) {
	if observed, err := e.dryRunObserved(ctx, key); err != nil || observed {
		return observed, err
	}
	return e.hasMarker(ctx, key, run.MarkerSLAVerdict)
}

// putSLATimers sets the warning and breach timers of one SLA of a period
// as decided, skipping an alert already sent (its dedup marker), and the
// warning too once the breach was reported.
func (e *Engine) putSLATimers(ctx context.Context, b *batch, p *pipeline.Pipeline, key run.Key, t slaTrack, warn, breach bool) error {
	if !warn && !breach {
		return nil
	}
	if sent, err := e.hasMarker(ctx, key, markerFor(t.breach)); err != nil || sent {
		return err
	}
	detail := run.Detail("breachAt", t.times.Breach, "deadline", t.times.Deadline)
	if t.times.Relative {
		detail = run.Detail("breachAt", t.times.Breach, "deadline", t.times.Deadline, "maxDuration", p.SLA.MaxDuration, "sensorArrivalAt", t.times.Breach.Add(-p.SLA.MaxDuration))
	}
	if warn {
		warnSent, err := e.hasMarker(ctx, key, markerFor(t.warn))
		if err != nil {
			return err
		}
		if !warnSent {
			b.putTimer(store.Timer{Key: t.warnKey(key), Kind: kindSLAWarning, Run: key, DueAt: t.times.Warning, Detail: withType(detail, t.warn)}, nil)
		}
	}
	if breach {
		b.putTimer(store.Timer{Key: t.breachKey(key), Kind: kindSLABreach, Run: key, DueAt: t.times.Breach, Detail: withType(detail, t.breach)}, nil)
	}
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
	for _, kind := range []string{kindSLAWarning, kindSLABreach, "relative-" + kindSLAWarning, "relative-" + kindSLABreach} {
		b.deleteTimer(slaTimerKey(kind, key), nil)
	}
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
