package sla

import (
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
)

// Times are a period's resolved SLA instants.
type Times struct {
	Breach   time.Time
	Warning  time.Time // zero: no warning
	Relative bool      // from the first trigger-sensor arrival (sla.maxDuration)
	Deadline string    // the configured deadline, for messages
}

// Resolve resolves the SLA a period's verdict is judged on: the
// absolute deadline when one is configured, else the relative one. ok is
// false when the pipeline has no SLA that applies (yet: a relative SLA
// needs the first trigger-sensor arrival; zero firstArrival means none).
func Resolve(p *pipeline.Pipeline, period schedule.Period, firstArrival time.Time) (Times, bool, error) {
	if t, ok, err := ResolveAbsolute(p, period); ok || err != nil {
		return t, ok, err
	}
	t, ok := ResolveRelative(p, firstArrival)
	return t, ok, nil
}

// ResolveAbsolute resolves sla.deadline for a period (product spec §3
// item 12: resolved once per period, never rolled forward).
func ResolveAbsolute(p *pipeline.Pipeline, period schedule.Period) (Times, bool, error) {
	s := p.SLA
	if s == nil || s.Deadline.IsZero() {
		return Times{}, false, nil
	}
	breach, err := s.Deadline.Resolve(period, s.Location)
	if err != nil {
		return Times{}, false, err
	}
	t := Times{Breach: breach, Deadline: s.Deadline.String()}
	if s.ExpectedDuration > 0 {
		t.Warning = schedule.WarningAt(breach, s.ExpectedDuration)
	}
	return t, true, nil
}

// ResolveRelative resolves sla.maxDuration from the period's first
// trigger-sensor arrival. The warning comes expectedDuration before the
// breach, or at 75 % of maxDuration when expectedDuration is not set (or
// is not shorter than maxDuration).
func ResolveRelative(p *pipeline.Pipeline, firstArrival time.Time) (Times, bool) {
	s := p.SLA
	if s == nil || s.MaxDuration <= 0 || firstArrival.IsZero() {
		return Times{}, false
	}
	breach := schedule.RelativeBreach(firstArrival, s.MaxDuration)
	lead := s.ExpectedDuration
	if lead <= 0 || lead >= s.MaxDuration {
		lead = s.MaxDuration / 4
	}
	return Times{Breach: breach, Warning: breach.Add(-lead), Relative: true, Deadline: "+" + s.MaxDuration.String()}, true
}

// BeforeLoad reports which of a period's SLA instants came before the
// pipeline was first loaded (loadedAt). SLA alerts are forward-only: such
// a time is not the pipeline's to report — no late SLA_WARNING for a
// warning time that passed before Interlock knew the pipeline, and no
// SLA_BREACH nor verdict (SLA_MET or SLA_BREACH at completion) for a
// deadline that did.
func BeforeLoad(t Times, loadedAt time.Time) (warning, breach bool) {
	return !t.Warning.IsZero() && t.Warning.Before(loadedAt), t.Breach.Before(loadedAt)
}

// InstantsToArm decides which of a period's SLA timers to set at now:
// none for an instant before from (forward-only, see BeforeLoad), and
// no warning once the breach time has come (a warning is never sent at or
// after the breach).
func InstantsToArm(t Times, from, now time.Time) (warning, breach bool) {
	warnBefore, breachBefore := BeforeLoad(t, from)
	breach = !breachBefore
	warning = breach && !t.Warning.IsZero() && !warnBefore && now.Before(t.Breach)
	return warning, breach
}

// Arm is one period's absolute SLA timers to set.
type Arm struct {
	Period  schedule.Period
	Times   Times
	Warning bool // set the warning timer (at Times.Warning)
	Breach  bool // set the breach timer (at Times.Breach)
	// NeedsRun: the period is held to its SLA only if it has a run —
	// Interlock cannot start it itself (CouldStartAfter is false).
	NeedsRun bool
}

// CouldStartAfter reports whether Interlock could still start period per
// of p on its own once loaded at loadedAt: a trigger sensor can start any
// period (its data may still come); a pipeline whose runs come only from
// its cron starts a period at its tick, so not one whose ticks all came
// before loadedAt (a cron pipeline deployed at 23:00 never starts hour
// 22). A period whose runs only upstreams start (no cron, no trigger)
// could start whenever they succeed.
func CouldStartAfter(p *pipeline.Pipeline, per schedule.Period, loadedAt time.Time) bool {
	if p.Schedule.Trigger != nil || p.Schedule.Cron.IsZero() {
		return true
	}
	// A tick at or before the first load was never fired by the engine
	// (the watchdog's missed-schedule check agrees): only later ticks.
	loc := p.Schedule.Location
	from := per.Start(loc).Add(-time.Nanosecond) // Ticks lists those after from
	if !loadedAt.Before(from) {
		from = loadedAt
	}
	return len(p.Schedule.Cron.Ticks(from, per.End(loc).Add(-time.Nanosecond), loc, 1)) > 0
}

// maxArmWalk bounds the walk back over earlier periods: the hours of
// the days a "+366d HH:MM" deadline reaches back over.
const maxArmWalk = 24 * (366 + 2)

// TimersToArm decides which absolute SLA timers (sla.deadline) to set
// when a pipeline's config takes effect at now — its first load, a reload,
// a file restored; loadedAt is when it was first loaded. After that, each
// period gets its timers when it starts.
//
// The current period gets every instant from loadedAt on (forward-only).
// A period that started earlier gets the instants still ahead of now:
// with "+Nd HH:MM" the N previous days (yesterday's data processed today),
// with ":MM" the previous hour, with "HH:MM" on hourly periods the earlier
// hours of the day. An earlier period's instant between loadedAt and now
// is not armed again: the pipeline was loaded then, so that timer was set
// at the period's start or at an earlier load and has fired or still waits
// (one dropped while the pipeline's file was removed stays dropped; the
// watchdog's sla-scheduling check re-arms a missing breach timer).
// Periods the SLA does not apply to (Applies: excluded, dry-run, off
// the inclusion calendar or the cron) get nothing. Whether a period already
// had its verdict or its run ended is for the caller to check in the store.
func TimersToArm(p *pipeline.Pipeline, loadedAt, now time.Time) []Arm {
	if p.SLA == nil || p.SLA.Deadline.IsZero() || p.DryRun {
		return nil
	}
	var out []Arm
	cur := run.CurrentPeriod(p, now)
	for per, i := cur, 0; i < maxArmWalk; per, i = per.Prev(), i+1 {
		t, ok, err := ResolveAbsolute(p, per)
		if err != nil || !ok {
			break
		}
		from := loadedAt
		if per != cur {
			if t.Breach.Before(now) {
				break // earlier periods' breaches are earlier still
			}
			if now.After(from) {
				from = now
			}
		}
		if !Applies(p, per) {
			continue
		}
		if warn, breach := InstantsToArm(t, from, now); warn || breach {
			out = append(out, Arm{Period: per, Times: t, Warning: warn, Breach: breach, NeedsRun: !CouldStartAfter(p, per, loadedAt)})
		}
	}
	return out
}

// Verdict is the verdict when the job succeeds: SLA_MET before the
// breach time, SLA_BREACH at or after it — unless the breach was already
// reported, in which case nothing more is said.
func Verdict(t Times, breachReported bool, now time.Time) (event.Type, bool) {
	if breachReported {
		return "", false
	}
	if now.Before(t.Breach) {
		return event.SLAMet, true
	}
	return event.SLABreach, true
}

// AlertDue decides whether an SLA timer should alert: only while the
// period has no run or its run is still going (a completed period says
// nothing more; a failed one was reported by its failure event), never a
// warning at or after the breach time or after the breach was reported,
// and never the same alert twice.
func AlertDue(kind event.Type, existing *run.Run, breachAt time.Time, alreadySent, breachReported bool, now time.Time) bool {
	if alreadySent {
		return false
	}
	if existing != nil && existing.State.Terminal() {
		return false
	}
	if kind == event.SLAWarning || kind == event.RelativeSLAWarning {
		if breachReported || !now.Before(breachAt) {
			return false
		}
	}
	return true
}

// Status describes the period for an SLA alert.
func Status(existing *run.Run) (status, hint string) {
	if existing == nil {
		return "not started", "pipeline not started — check that upstream data has arrived"
	}
	switch existing.State {
	case run.Evaluating:
		return string(existing.State), "waiting for validation rules to pass — check upstream data"
	case run.Triggering, run.Running:
		return string(existing.State), "job running — may still complete before the breach"
	}
	return string(existing.State), ""
}

// Applies reports whether a period is held to the pipeline's SLA: not
// for dry-run pipelines, excluded dates, dates outside an inclusion
// calendar, periods a cron-only pipeline's cron never ticks in, or an
// hour that does not exist (the hour skipped when clocks
// spring forward: no upstream can deliver data for it).
func Applies(p *pipeline.Pipeline, per schedule.Period) bool {
	if p.SLA == nil || p.DryRun || run.Excluded(p, per) {
		return false
	}
	if !run.PeriodExists(p, per) {
		return false
	}
	// A pipeline whose runs come only from its cron has no run, and so no
	// SLA, in a period the cron never ticks in (weekends for "0 6 * * 1-5").
	if p.Schedule.Trigger == nil && !p.Schedule.Cron.IsZero() {
		loc := p.Schedule.Location
		if len(p.Schedule.Cron.Ticks(per.Start(loc).Add(-time.Nanosecond), per.End(loc).Add(-time.Nanosecond), loc, 1)) == 0 {
			return false
		}
	}
	if inc := p.Schedule.Include; inc != nil && !inc.Days.Contains(per.Date) {
		return false
	}
	return true
}

// Projection is a dry-run's SLA projection: when the job would finish if
// it had started at triggeredAt, against the period's SLA.
type Projection struct {
	EstimatedCompletion time.Time
	Status              string // "met", "breach", or "n/a" without a deadline to judge
	Times               Times
	Margin              time.Duration // breach − estimated completion (negative: late)
}

// Project projects a would-be run started at triggeredAt, taking
// sla.expectedDuration; ok is false without an expected duration.
func Project(p *pipeline.Pipeline, per schedule.Period, triggeredAt time.Time) (Projection, bool, error) {
	if p.SLA == nil || p.SLA.ExpectedDuration <= 0 {
		return Projection{Status: "n/a"}, false, nil
	}
	pr := Projection{EstimatedCompletion: triggeredAt.Add(p.SLA.ExpectedDuration), Status: "n/a"}
	t, ok, err := Resolve(p, per, triggeredAt)
	if err != nil || !ok {
		return pr, true, err
	}
	pr.Times, pr.Margin = t, t.Breach.Sub(pr.EstimatedCompletion)
	pr.Status = "met"
	if pr.EstimatedCompletion.After(t.Breach) {
		pr.Status = "breach"
	}
	return pr, true, nil
}
