package decide

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sla"
	"github.com/interlockhq/interlock/internal/store"
)

// ApplyRun adds a decided run and everything its effect asks for to the
// outcome. prev is the stored run (nil when r is new); timerExpect is the
// due time of the step timer being processed, if any.
func (o *Outcome) ApplyRun(lp *Pipeline, prev *run.Run, r run.Run, eff run.Effect, timerExpect *time.Time) error {
	var expect int64
	if prev != nil {
		expect = prev.Version
	}
	o.PutRun(r, expect)
	o.Notes(r.Key, eff.Notes)
	if err := o.readStepTimer(r.Key); err != nil {
		return err
	}
	o.StepTimer(r.Key, eff, timerExpect)
	if err := o.wakeBackfill(prev, r); err != nil {
		return err
	}
	if eff.LedgerReason != "" {
		ledger, err := o.F.Ledger(r.Key)
		if err != nil {
			return err
		}
		o.C.Ledger = append(o.C.Ledger, store.LedgerEntry{Key: r.Key, Seq: len(ledger) + 1, Reason: eff.LedgerReason, Source: eff.LedgerSource, At: o.Now})
	}
	if eff.Succeeded {
		if err := o.onSuccess(lp.P, r); err != nil {
			return err
		}
		// Its downstreams are re-evaluated at once (the downstreams
		// timer); the index is read here so a pipeline nobody depends on
		// arms nothing.
		if ids, err := o.DownstreamIDs(r.PipelineID); err != nil {
			return err
		} else if len(ids) > 0 {
			o.armDownstreams(r)
		}
	}
	if eff.DropsSLATimers() {
		o.DropSLATimers(r.Key)
	}
	return nil
}

// readStepTimer reads the run's step timer into the outcome, unless the
// decision read it already: its stamp is what the step timer's write is
// stamped from.
func (o *Outcome) readStepTimer(key run.Key) error {
	tk := StepTimerKey(key)
	if _, ok := o.stepRead(tk); ok {
		return nil
	}
	t, err := o.F.Timer(tk)
	if err != nil {
		return err
	}
	o.ReadStep(tk, t)
	return nil
}

// BackfillTimerKey is the key of a pipeline's backfill timer.
func BackfillTimerKey(pipelineID string) string {
	return run.PipelineTimer(run.TimerBackfill, pipelineID).String()
}

// BackfillTimer is a pipeline's backfill timer due at.
func BackfillTimer(pipelineID string, at time.Time) store.Timer {
	return store.Timer{Key: BackfillTimerKey(pipelineID), Kind: string(run.TimerBackfill), Run: run.Key{PipelineID: pipelineID}, DueAt: at}
}

// wakeBackfill moves the pipeline's backfill timer when r's end lets the
// backfill start its next run without waiting for its poll: at
// backfill.WakeAt of the timer read, conditioned on it, so that a firing
// that judged the run still active and this wake cannot both commit.
func (o *Outcome) wakeBackfill(prev *run.Run, r run.Run) error {
	key := BackfillTimerKey(r.PipelineID)
	if !backfill.WakesOnEnd(prev, r) || o.TouchesTimer(key) {
		return nil
	}
	t, err := o.F.Timer(key)
	if err != nil {
		return err
	}
	var read *time.Time
	if t != nil {
		read = &t.DueAt
	}
	o.PutTimer(BackfillTimer(r.PipelineID, backfill.WakeAt(read, o.Now)), read)
	return nil
}

// onSuccess captures the post-run baseline and gives the SLA verdict
// (sla.VerdictAtSuccess).
func (o *Outcome) onSuccess(p *pipeline.Pipeline, r run.Run) error {
	per, err := ParsePeriod(r.Period)
	if err != nil {
		return err
	}
	if err := o.CaptureBaseline(p, r.Key, per, nil); err != nil {
		return err
	}
	m, err := o.SLAMarks(p, r.Key, per)
	if err != nil {
		return err
	}
	note, marks, ok, err := sla.VerdictAtSuccess(p, per, m, o.FirstLoaded(), o.Now)
	if err != nil || !ok {
		return err
	}
	o.Notes(r.Key, []run.Note{note})
	// If-absent: an SLA timer (or another process) that reported the
	// breach first wins, and this commit retries and stays silent.
	for _, mk := range marks {
		o.Marker(store.Marker{Key: r.Key, Kind: mk.Kind, At: o.Now, Detail: mk.Detail}, true)
	}
	return nil
}

// CaptureBaseline stores the post-run baseline run.CaptureBaseline
// decides on, from the period's sensors (overlay: a write in the same
// commit).
func (o *Outcome) CaptureBaseline(p *pipeline.Pipeline, key run.Key, per schedule.Period, overlay *store.Sensor) error {
	keys := run.PostRunKeys(p)
	if len(keys) == 0 {
		return nil // no post-run rules: no sensors to read
	}
	sensors, err := SensorsFor(o.F, key.PipelineID, per, p.PostRun.Rules, overlay)
	if err != nil {
		return err
	}
	base, ok := run.CaptureBaseline(keys, sensors)
	switch {
	case !ok:
	case base.Drop:
		o.C.BaselineDelete = append(o.C.BaselineDelete, key)
	default:
		o.C.Baselines = append(o.C.Baselines, store.Baseline{Key: key, Sensors: base.Sensors, CapturedAt: o.Now})
		o.Notes(key, []run.Note{base.Note})
	}
	return nil
}

// SLAMarks reads the period's SLA facts from its markers; none are read
// for a period no SLA decision concerns (sla.MarksNeeded).
func (o *Outcome) SLAMarks(p *pipeline.Pipeline, key run.Key, per schedule.Period) (sla.Marks, error) {
	return SLAMarks(o.F, p, key, per)
}

// SLAMarks is Outcome.SLAMarks on facts f.
func SLAMarks(f *Facts, p *pipeline.Pipeline, key run.Key, per schedule.Period) (sla.Marks, error) {
	var m sla.Marks
	if !sla.MarksNeeded(p, per) {
		return m, nil
	}
	// One read of the period's markers, not one per kind: Set keeps the
	// kinds sla.Marks holds and ignores the others.
	ms, err := f.MarkersOf(key)
	if err != nil {
		return m, err
	}
	for _, mk := range ms {
		m.Set(mk.Kind, mk.At)
	}
	return m, nil
}

// ArmSLA sets the period's SLA timers sla.TimersFor decides on.
func (o *Outcome) ArmSLA(p *pipeline.Pipeline, key run.Key, per schedule.Period) error {
	m, err := o.SLAMarks(p, key, per)
	if err != nil {
		return err
	}
	for _, w := range o.C.Markers { // this commit's own (a backfill's marker)
		if w.Marker.Key == key {
			m.Set(w.Marker.Kind, w.Marker.At)
		}
	}
	timers, unresolved := sla.TimersFor(p, per, m, o.FirstLoaded(), o.Now)
	o.SetSLATimers(key, timers, unresolved)
	return nil
}

// SetSLATimers puts the SLA timers of a period as decided; unresolved is
// the decision's complaint about a deadline that does not resolve.
func (o *Outcome) SetSLATimers(key run.Key, timers []sla.Timer, unresolved error) {
	if unresolved != nil {
		o.log(slog.LevelWarn, "SLA deadline does not resolve for this period; no SLA timers", "pipeline", key.PipelineID, "period", key.Period, "err", unresolved)
	}
	o.SLATimers(key, timers)
}

// ArmLoadSLA sets the absolute SLA timers sla.TimersToArm selects when a
// config takes effect — the current period's, and those of earlier
// periods whose warning or breach is still ahead — less those
// sla.LoadTimers drops on the period's facts.
func (o *Outcome) ArmLoadSLA(p *pipeline.Pipeline, now time.Time) error {
	for _, a := range sla.TimersToArm(p, o.FirstLoaded(), now) {
		key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: a.Period.String()}
		r, err := o.F.Run(key)
		if err != nil {
			return err
		}
		hasRun := r != nil
		ended := hasRun && r.State.Terminal()
		m, err := o.SLAMarks(p, key, a.Period)
		if err != nil {
			return err
		}
		o.SLATimers(key, sla.LoadTimers(a, hasRun, ended, m))
	}
	return nil
}

// SLATimers puts the SLA timers of a period as decided. A period has one
// timer per SLA and instant, keyed by period, so setting one twice
// replaces it.
func (o *Outcome) SLATimers(key run.Key, timers []sla.Timer) {
	for _, t := range timers {
		kind, fam := string(run.TimerSLAWarning), run.TimerSLAWarning
		switch {
		case t.Relative && t.Breach:
			kind, fam = string(run.TimerSLABreach), run.TimerRelSLABreach
		case t.Relative:
			fam = run.TimerRelSLAWarning
		case t.Breach:
			kind, fam = string(run.TimerSLABreach), run.TimerSLABreach // the watchdog checks this timer exists
		}
		o.PutTimer(store.Timer{Key: run.PeriodTimer(fam, key).String(), Kind: kind, Run: key, DueAt: t.At, Detail: t.Detail}, nil)
	}
}

// DropSLATimers removes the period's SLA timers: the period is done, or
// its failure event carries the news.
func (o *Outcome) DropSLATimers(key run.Key) {
	for _, fam := range []run.TimerFamily{run.TimerSLAWarning, run.TimerSLABreach, run.TimerRelSLAWarning, run.TimerRelSLABreach} {
		o.DeleteTimer(run.PeriodTimer(fam, key).String(), nil)
	}
}

// Evaluate evaluates the validation rules of a period for a run of cause
// whose evaluation started at evalStart (run.PeriodSensors: what counts
// for a backfill or a rerun started after its period ended).
func Evaluate(f *Facts, rules rule.Options, p *pipeline.Pipeline, key run.Key, overlay *store.Sensor, cause run.Cause, evalStart, now time.Time) (rule.Outcome, error) {
	per, err := ParsePeriod(key.Period)
	if err != nil {
		return rule.Outcome{}, err
	}
	sensors, err := SensorsFor(f, key.PipelineID, per, p.Validation.Rules, overlay)
	if err != nil {
		return rule.Outcome{}, err
	}
	return Validation(f, rules, p, per, run.PeriodSensors(p, per, cause, sensors, evalStart), now)
}

// EvaluateRun evaluates the validation rules for r (which prev is the
// stored version of, nil for a new run) and records the decision, after
// the notes of an earlier effect in the same commit (a run just started).
func (o *Outcome) EvaluateRun(lp *Pipeline, prev *run.Run, r *run.Run, before run.Effect, overlay *store.Sensor, timerExpect *time.Time) error {
	start := r.EvalStartedAt
	if start.IsZero() {
		start = o.Now
	}
	out, err := Evaluate(o.F, o.Rules, lp.P, r.Key, overlay, r.Cause, start, o.Now)
	if err != nil {
		return err
	}
	next, eff := run.AfterEvaluation(*r, out, lp.P, o.Now)
	eff.Notes = append(before.Notes, eff.Notes...)
	return o.ApplyRun(lp, prev, next, eff, timerExpect)
}

// ParsePeriod parses a stored period.
func ParsePeriod(s string) (schedule.Period, error) {
	p, err := schedule.ParsePeriod(s)
	if err != nil {
		return schedule.Period{}, fmt.Errorf("stored period %q: %w", s, err)
	}
	return p, nil
}

// LedgerReasons lists the reasons of a period's ledger entries, which
// the budgets count.
func LedgerReasons(ledger []store.LedgerEntry) []string {
	reasons := make([]string, len(ledger))
	for i, l := range ledger {
		reasons[i] = l.Reason
	}
	return reasons
}

// AfterReport decides what follows a job's report, reading the ledger
// and the exclusion only for a failure.
func AfterReport(f *Facts, p *pipeline.Pipeline, r run.Run, report run.JobReport, now time.Time) (run.Run, run.Effect, error) {
	var used int
	var exclusion string
	if report.Failed() { // only a failure's decision reads the ledger
		ledger, err := f.Ledger(r.Key)
		if err != nil {
			return r, run.Effect{}, err
		}
		per, err := ParsePeriod(r.Period)
		if err != nil {
			return r, run.Effect{}, err
		}
		used, exclusion = run.RetriesUsed(LedgerReasons(ledger)), run.ExclusionReason(p, per)
	}
	next, eff := run.AfterJobReport(r, report, used, exclusion, p, now)
	return next, eff, nil
}

// DownstreamsTimerKey is the key of the timer an upstream period's
// success arms.
func DownstreamsTimerKey(k run.Key) string { return run.PeriodTimer(run.TimerDownstreams, k).String() }

// armDownstreams is the first step of re-evaluating r's downstreams, in
// the commit of r's success: one downstreams timer, due now.
func (o *Outcome) armDownstreams(r run.Run) {
	o.PutTimer(store.Timer{Key: DownstreamsTimerKey(r.Key), Kind: string(run.TimerDownstreams), Run: r.Key, DueAt: o.Now}, nil)
}

// DownstreamIDs reads the downstream index of an upstream.
func (o *Outcome) DownstreamIDs(upstream string) ([]string, error) {
	ms, err := o.F.MarkersOf(run.Key{PipelineID: upstream})
	if err != nil {
		return nil, err
	}
	kinds := make([]string, len(ms))
	for i, m := range ms {
		kinds[i] = m.Kind
	}
	return needs.DownstreamIDs(kinds), nil
}

// UpstreamResults judges the upstream rules of p for period per.
func UpstreamResults(f *Facts, p *pipeline.Pipeline, per schedule.Period) ([]rule.Result, error) {
	var out []rule.Result
	for _, u := range p.Upstreams {
		up, err := f.Pipeline(u.Pipeline)
		if err != nil {
			return nil, err
		}
		if up == nil {
			out = append(out, deps.JudgeUpstream(u, nil, nil, nil))
			continue
		}
		pers := deps.UpstreamPeriods(p, up.P, u, per)
		runs, err := upstreamRuns(f, up.P, pers)
		if err != nil {
			return nil, err
		}
		out = append(out, deps.JudgeUpstream(u, up.P, pers, runs))
	}
	return out, nil
}

// upstreamRuns reads the upstream's runs of the mapped periods: one key,
// or one range (the hours of a day).
func upstreamRuns(f *Facts, up *pipeline.Pipeline, pers []schedule.Period) ([]run.Run, error) {
	switch len(pers) {
	case 0:
		return nil, nil
	case 1:
		r, err := f.Run(run.Key{PipelineID: up.ID, ScheduleID: up.ScheduleID(), Period: pers[0].String()})
		if r == nil || err != nil {
			return nil, err
		}
		return []run.Run{*r}, nil
	}
	return f.RunsIn(RunRange{PipelineID: up.ID, ScheduleID: up.ScheduleID(), From: pers[0].String(), To: pers[len(pers)-1].String()})
}

// Validation judges a period's validation rules, sensor rules and
// upstream rules together (deps.WithUpstreams).
func Validation(f *Facts, rules rule.Options, p *pipeline.Pipeline, per schedule.Period, sensors rule.SensorMap, now time.Time) (rule.Outcome, error) {
	out := rule.EvaluateAll(p.Validation.Mode, p.Validation.Rules, sensors, now, rules)
	ups, err := UpstreamResults(f, p, per)
	if err != nil {
		return out, err
	}
	return deps.WithUpstreams(out, len(p.Validation.Rules), ups), nil
}
