package decide

import (
	"log/slog"
	"time"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/sla"
	"github.com/interlockhq/interlock/internal/store"
)

// MaxFanOut is how many upstream timers one commit of a downstreams
// timer arms (store.MaxChangeRecords bounds a commit).
const MaxFanOut = 48

// TimerIn is a due timer to decide.
type TimerIn struct {
	// Timer is the timer as read, due (the commit's condition is its
	// DueAt).
	Timer store.Timer
	// Windows are the maintenance windows, for a window's end timer
	// (ReadsWindows says when the caller must give them).
	Windows []silence.Window
	Env
}

// timerFamilyOf is the family t's key names, or its kind's when the key
// does not parse (a key written by an older version).
func timerFamilyOf(t store.Timer) run.TimerFamily {
	if k, err := run.ParseTimerKey(t.Key); err == nil {
		return k.Family
	}
	return run.TimerFamily(t.Kind)
}

// ReadsWindows reports whether deciding t reads the maintenance windows
// (TimerIn.Windows): a window's end timer does.
func ReadsWindows(t store.Timer) bool { return t.Kind == string(run.TimerMaintenanceEnd) }

// Timer decides a due timer, whatever its kind — cron, SLA warning and
// breach, period, downstreams, upstream, release, a backfill's step, a
// timed pause's end, a silence's end and a maintenance window's — and
// returns its outcome and, for the end of a silence or a window, the
// conditions it judges (SilenceEnding: each is then decided on its own
// facts, AfterSilence). A timer of a kind no
// decision knows (a store edited by hand, a newer version's) is removed,
// logged: kept, it would fire for ever. The outcome moves or removes the
// timer, so a timer is processed once however many processes race for
// it.
func Timer(in TimerIn, f *Facts, now time.Time) (o *Outcome, end SilenceEnding, err error) {
	t := in.Timer
	d := timerDecision{in: in, f: f, now: now}
	switch t.Kind {
	case string(run.TimerCron):
		o, err = d.cronTick()
	case string(run.TimerSLAWarning), string(run.TimerSLABreach):
		o, err = d.slaTimer()
	case string(run.TimerPeriod):
		o, err = d.periodTimer()
	case string(run.TimerDownstreams):
		o, err = d.downstreamsTimer()
	case string(run.TimerUpstream):
		o, err = d.upstreamTimer()
	case string(run.TimerRelease):
		o, err = d.releaseTimer()
	case string(run.TimerBackfill):
		o, err = d.backfillTimer()
	case string(run.TimerResume):
		o, err = d.resumeTimer()
	case string(run.TimerSilenceEnd):
		o, end, err = d.silenceEnd()
	case string(run.TimerMaintenanceEnd):
		o, end, err = d.maintenanceEnd()
	default:
		o = d.outcome(nil)
		o.log(slog.LevelError, "unknown timer kind; removing it", "key", t.Key, "kind", t.Kind)
	}
	if err != nil {
		return nil, SilenceEnding{}, err
	}
	if !o.TouchesTimer(t.Key) {
		due := t.DueAt
		o.DeleteTimer(t.Key, &due)
	}
	return o, end, nil
}

type timerDecision struct {
	in  TimerIn
	f   *Facts
	now time.Time
}

func (d timerDecision) outcome(lp *Pipeline) *Outcome {
	return New(lp, d.f, d.now, d.in.Env)
}

// begin reads the timer's pipeline (nil: none runs) and begins the
// outcome on it.
func (d timerDecision) begin() (*Pipeline, *Outcome, error) {
	lp, err := d.f.Pipeline(d.in.Timer.Run.PipelineID)
	if err != nil {
		return nil, nil, err
	}
	return lp, d.outcome(lp), nil
}

// beginIf is begin for a timer its pipeline keeps while needed(p): ok
// false when none runs or needs it no more (the timer goes), or on err.
func (d timerDecision) beginIf(needed func(*pipeline.Pipeline) bool) (*Pipeline, *Outcome, bool, error) {
	lp, o, err := d.begin()
	return lp, o, err == nil && lp != nil && needed(lp.P), err
}

// beginPeriod is begin for a timer about a period of its pipeline
// (t.Run): ok false when none runs or the timer names no period (the
// timer goes), or on err.
func (d timerDecision) beginPeriod() (*Pipeline, *Outcome, schedule.Period, bool, error) {
	lp, o, err := d.begin()
	if err != nil || lp == nil {
		return lp, o, schedule.Period{}, false, err
	}
	per, err := ParsePeriod(d.in.Timer.Run.Period)
	return lp, o, per, err == nil, nil
}

// cronTick starts the run of the tick's period (product spec §3 item 2:
// cron schedules start runs) and sets the next tick. Ticks missed while
// the engine was down are not replayed one by one: the next tick is the
// first after now, and the watchdog reports periods that got no run.
func (d timerDecision) cronTick() (*Outcome, error) {
	t := d.in.Timer
	lp, o, ok, err := d.beginIf(run.NeedsCronTimer)
	if !ok {
		return o, err // the timer goes, on what was read
	}
	p := lp.P
	due := t.DueAt
	per, next := run.CronTick(p, due, d.now)
	o.PutTimer(store.Timer{Key: run.PipelineTimer(run.TimerCron, p.ID).String(), Kind: string(run.TimerCron), Run: run.Key{PipelineID: p.ID}, DueAt: next}, &due)
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	return o, o.StartPeriod(lp, key, per, run.CauseCron, nil)
}

// slaTimer fires an SLA warning or breach for a period that is not done,
// as sla.Alert decides on the config in force (it may have changed since
// the timer was set: no SLA any more, an excluded date, dry-run).
func (d timerDecision) slaTimer() (*Outcome, error) {
	t := d.in.Timer
	lp, o, per, ok, err := d.beginPeriod()
	if !ok {
		return o, err
	}
	m, err := o.SLAMarks(lp.P, t.Run, per)
	if err != nil {
		return nil, err
	}
	existing, err := periodRun(d.f, t.Run, per)
	if err != nil {
		return nil, err
	}
	sf := sla.ParseTimer(t.Detail, t.Kind == string(run.TimerSLABreach), t.DueAt)
	note, marker, ok := sla.Alert(lp.P, per, sf, m, existing, d.now)
	if !ok {
		return o, nil
	}
	o.Notes(t.Run, []run.Note{note})
	o.Marker(store.Marker{Key: t.Run, Kind: marker, At: d.now}, true) // a racing writer that sent it first wins
	return o, nil
}

// PeriodTimer is the timer of a pipeline's next period start.
func PeriodTimer(pipelineID string, at time.Time) store.Timer {
	return store.Timer{Key: run.PipelineTimer(run.TimerPeriod, pipelineID).String(), Kind: string(run.TimerPeriod), Run: run.Key{PipelineID: pipelineID}, DueAt: at}
}

// periodTimer arms the SLA timers of the period that starts now and sets
// the timer for the next period, so SLA alerts fire even when no data
// and no run ever show up for a period.
func (d timerDecision) periodTimer() (*Outcome, error) {
	t := d.in.Timer
	lp, o, ok, err := d.beginIf(run.NeedsPeriodTimer)
	if !ok {
		return o, err
	}
	p := lp.P
	due := t.DueAt
	per, nextStart := run.PeriodTick(p, due)
	o.PutTimer(PeriodTimer(p.ID, nextStart), &due)
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	return o, o.armPeriodSLA(p, key, per)
}

// armPeriodSLA arms a period's SLA timers unless its run already ended.
func (o *Outcome) armPeriodSLA(p *pipeline.Pipeline, key run.Key, per schedule.Period) error {
	r, err := o.F.Run(key)
	if err != nil {
		return err
	}
	ended := r != nil && r.State.Terminal()
	m, err := o.SLAMarks(p, key, per)
	if err != nil {
		return err
	}
	timers, unresolved := sla.PeriodStartTimers(p, per, ended, m, o.FirstLoaded(), o.Now)
	o.SetSLATimers(key, timers, unresolved)
	return nil
}

// periodRun returns the run that stands for a period (sla.DayRun): its
// own, or for a daily period one of its hours'; nil when none.
func periodRun(f *Facts, key run.Key, per schedule.Period) (*run.Run, error) {
	own, err := f.Run(key)
	if err != nil {
		return nil, err
	}
	var sameDay []run.Run
	if own == nil && !per.Hourly { // only then can an hour stand for it
		if sameDay, err = f.RunsIn(RunRange{PipelineID: key.PipelineID, ScheduleID: key.ScheduleID, From: per.Date.String()}); err != nil {
			return nil, err
		}
	}
	return sla.DayRun(per, own, sameDay), nil
}

// Pipelines that depend on pipelines (docs/dependencies.md). An
// upstream's success re-evaluates its downstreams at once, durably, in
// three steps, each a timer (a process that dies between two leaves the
// next armed):
//
//  1. the commit that records the success arms one downstreams timer,
//     due now (ApplyRun; the success commit stays small whatever the
//     fan-out);
//  2. that timer reads the upstream's downstream index (the
//     run.DownstreamMarker markers each downstream's activation writes),
//     loads each downstream's config, maps the period
//     (deps.DownstreamPeriods) and arms one upstream timer per
//     downstream period, due now;
//  3. each upstream timer decides on its period alone
//     (deps.OnUpstreamSuccess): evaluate the run that waits, or open the
//     period of a downstream only upstreams start.

// downstreamsTimer is step 2: t.Run is the upstream period that
// succeeded.
func (d timerDecision) downstreamsTimer() (*Outcome, error) {
	t := d.in.Timer
	o := d.outcome(nil)
	up, err := d.f.Pipeline(t.Run.PipelineID)
	if err != nil || up == nil {
		return o, err
	}
	upPer, err := ParsePeriod(t.Run.Period)
	if err != nil {
		return o, nil // not a period: the timer goes
	}
	ids, err := o.DownstreamIDs(up.P.ID)
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 { // only an upstream can be a root cause (rootcause.go)
		if err := o.armRelease(t.Run); err != nil {
			return nil, err
		}
	}
	var downs []*pipeline.Pipeline
	for _, id := range ids {
		down, err := d.f.Pipeline(id)
		if err != nil {
			return nil, err
		}
		if down != nil {
			downs = append(downs, down.P)
		}
	}
	// A commit holds at most store.MaxChangeRecords records: the timer
	// arms MaxFanOut at a time and moves on (Detail "done": how many it
	// armed before) until all are (deps.FanOut).
	var done int64
	if v, ok := t.Detail.Get("done"); ok {
		done, _ = v.Int()
	}
	arm, next := deps.FanOut(deps.Reached(up.P, upPer, downs), done, MaxFanOut)
	if next > 0 {
		due := t.DueAt
		o.PutTimer(store.Timer{Key: t.Key, Kind: string(run.TimerDownstreams), Run: t.Run, DueAt: d.now, Detail: run.Detail("done", next)}, &due)
	}
	for _, r := range arm {
		var detail sensor.Object
		if r.Opens {
			detail = run.Detail("opens", true)
		}
		o.PutTimer(store.Timer{Key: run.PeriodTimer(run.TimerUpstream, r.Key).String(), Kind: string(run.TimerUpstream), Run: r.Key, DueAt: d.now, Detail: detail}, nil)
	}
	return o, nil
}

// upstreamTimer is step 3: t.Run is the downstream period to
// re-evaluate.
func (d timerDecision) upstreamTimer() (*Outcome, error) {
	t := d.in.Timer
	lp, o, per, ok, err := d.beginPeriod()
	if !ok {
		return o, err
	}
	key := run.Key{PipelineID: lp.P.ID, ScheduleID: lp.P.ScheduleID(), Period: per.String()}
	existing, err := o.RunOf(key)
	if err != nil {
		return nil, err
	}
	_, opens := t.Detail.Get("opens")
	pass := false
	if deps.NeedsUpstreamPass(lp.P, existing, opens) {
		ups, err := UpstreamResults(d.f, lp.P, per)
		if err != nil {
			return nil, err
		}
		pass = deps.WithUpstreams(rule.Outcome{Passed: true}, 0, ups).Passed
	}
	switch deps.OnUpstreamSuccess(lp.P, existing, lp.Row.Paused, opens, pass) {
	case deps.UpstreamEvaluate:
		r := *existing
		return o, o.EvaluateRun(lp, &r, &r, run.Effect{}, nil, nil)
	case deps.UpstreamStart:
		return o, o.StartPeriod(lp, key, per, run.CauseUpstream, nil)
	}
	return o, nil
}

// armRelease sets the release timer of a period that succeeded, if it
// blocked downstream conditions (its blocked markers). It is called by
// the downstreams timer its success arms, and only for a pipeline that
// has downstreams — only those can be a root — so a success costs no
// read more on the commit that records it.
func (o *Outcome) armRelease(key run.Key) error {
	ms, err := o.F.MarkersOf(key)
	if err != nil {
		return err
	}
	at, ok := deps.ReleaseAt(o.Now, blockedConditions(ms))
	tk := run.PeriodTimer(run.TimerRelease, key).String()
	if !ok || o.TouchesTimer(tk) {
		return nil
	}
	o.PutTimer(store.Timer{Key: tk, Kind: string(run.TimerRelease), Run: key, DueAt: at}, nil)
	return nil
}

func blockedConditions(ms []store.Marker) []deps.BlockedCondition {
	var out []deps.BlockedCondition
	for _, m := range ms {
		if c, ok := deps.BlockedFromMarker(m.Kind, m.Detail); ok {
			out = append(out, c)
		}
	}
	return out
}

// releaseTimer releases the conditions a root's period blocked
// (deps.Release): each is alerted again or resolved, and its marker
// removed in the same commit, so each is released once. A root that is
// no longer succeeded (a rerun reopened it) keeps them blocked: its next
// success releases them.
func (d timerDecision) releaseTimer() (*Outcome, error) {
	t := d.in.Timer
	o := d.outcome(nil)
	cf, err := ConditionFacts(d.f, t.Run)
	if err != nil {
		return nil, err
	}
	if !cf.Succeeded() {
		return o, nil
	}
	ms, err := d.f.MarkersOf(t.Run)
	if err != nil {
		return nil, err
	}
	ups := upstreams{f: d.f}
	var held []deps.HeldCondition
	var kept []store.Marker
	for _, m := range ms {
		c, ok := deps.BlockedFromMarker(m.Kind, m.Detail)
		if !ok {
			continue
		}
		p, err := ups.Pipeline(c.Down.PipelineID)
		if err != nil {
			return nil, err
		}
		df, err := ups.Facts(c.Down)
		if err != nil {
			return nil, err
		}
		held = append(held, deps.HeldCondition{Condition: c, Pipeline: p, Facts: df})
		kept = append(kept, m)
	}
	rd := deps.ReleaseHeld(t.Run, held, d.now)
	for _, r := range rd.Released {
		if n := r.Note; n != nil {
			o.Emit(held[r.Index].Condition.Down, n.Type, n.Message, n.Detail)
		}
		m := kept[r.Index]
		o.C.MarkerDeletes = append(o.C.MarkerDeletes, store.MarkerDelete{Key: m.Key, Kind: m.Kind})
	}
	if !rd.Again.IsZero() {
		due := t.DueAt
		o.PutTimer(store.Timer{Key: t.Key, Kind: string(run.TimerRelease), Run: t.Run, DueAt: rd.Again}, &due)
	}
	return o, nil
}

// DueTimer is the timer announced as t, as it is to be processed at now:
// with the due time stored (the commit's condition; run.TimerDue may
// take one announced at the caller's), or nil when it is not due any more
// — gone, or moved: someone else processed it.
func DueTimer(f *Facts, t store.Timer, now time.Time) (*store.Timer, error) {
	cur, err := f.Timer(t.Key)
	if cur == nil || err != nil {
		return nil, err
	}
	if !run.TimerDue(run.TimerAt{Kind: cur.Kind, At: cur.DueAt}, t.Kind, t.DueAt, now) {
		return nil, nil
	}
	t.DueAt = cur.DueAt
	return &t, nil
}

// TimerNeeds names what deciding the due timer in.Timer reads (Timer,
// on the same input), from the facts read so far: needs.Timer, and for
// a backfill's step or a timed pause's end what their decisions name as
// they go (BackfillStepNeeds, ResumeNeeds), for a silence's end the
// silence and the first page of the events it judges (needs.SilenceEnd),
// for a window's end that page of the occurrence that ended among
// in.Windows (needs.MaintenanceEnd).
func TimerNeeds(f *Facts, cfg needs.Configs, in TimerIn, now time.Time) needs.Set {
	t := in.Timer
	fam := timerFamilyOf(t)
	n := needs.Timer(cfg(t.Run.PipelineID), cfg, f.ReadMarkers, t.Key, fam, t.Run, t.DueAt, now)
	switch fam {
	case run.TimerBackfill:
		n.Add(BackfillStepNeeds(f, cfg, t.Run.PipelineID, now))
	case run.TimerResume:
		n.Add(ResumeNeeds(f, cfg, t.Run.PipelineID, now, in.Rules))
	case run.TimerSilenceEnd:
		n.Add(needs.SilenceEnd(t.Key, f.readSilence, now))
	case run.TimerMaintenanceEnd:
		n.Add(needs.MaintenanceEnd(t.Key, in.Windows, t.DueAt, now))
	}
	return n
}
