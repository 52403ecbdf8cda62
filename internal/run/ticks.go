package run

import (
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/schedule"
)

// The timers a pipeline's config keeps: its cron tick and the start of
// its next period (for SLA timers). What each does when it comes due, and
// when the next one is, is decided here.

// CronTick decides a cron timer due at due and processed at now: the
// period its tick opens, and when the next tick is — the first after the
// later of due and now. Ticks missed while no engine ran are not replayed
// one by one: the watchdog reports the periods that got no run.
func CronTick(p *pipeline.Pipeline, due, now time.Time) (per schedule.Period, next time.Time) {
	after := now
	if due.After(after) {
		after = due
	}
	c, loc := p.Schedule.Cron, p.Schedule.Location
	return c.PeriodOf(due, loc), c.Next(after, loc)
}

// NeedsCronTimer reports whether a pipeline gets cron ticks: one with a
// cron schedule. A cron timer of a pipeline reloaded without one goes.
func NeedsCronTimer(p *pipeline.Pipeline) bool { return !p.Schedule.Cron.IsZero() }

// NeedsPeriodTimer reports whether a pipeline gets its SLA timers at the
// start of every period: one with an absolute SLA deadline that is not in
// dry-run.
func NeedsPeriodTimer(p *pipeline.Pipeline) bool {
	return p.SLA != nil && !p.SLA.Deadline.IsZero() && !p.DryRun
}

// PeriodTick decides a period timer due at due: the period that starts
// then, whose SLA timers are set, and when the next period starts.
func PeriodTick(p *pipeline.Pipeline, due time.Time) (per schedule.Period, nextStart time.Time) {
	loc := p.Schedule.Location
	per = schedule.PeriodAt(due, loc, Hourly(p))
	return per, per.Next().Start(loc)
}

// ConfigTimers decides the timers a config sets when it takes effect at
// now: the next cron tick and the start of the next period (zero: the
// timer is not set, and one set by an earlier config is removed).
func ConfigTimers(p *pipeline.Pipeline, now time.Time) (cronAt, periodAt time.Time) {
	if NeedsCronTimer(p) {
		cronAt = p.Schedule.Cron.Next(now, p.Schedule.Location)
	}
	if NeedsPeriodTimer(p) {
		periodAt = CurrentPeriod(p, now).Next().Start(p.Schedule.Location)
	}
	return cronAt, periodAt
}

// FirstLoadedAt decides a pipeline's forward-only horizon (its row's
// FirstLoadedAt) when config next takes effect at now: now for a pipeline
// seen for the first time (exists false), and for a reload that adds,
// changes or removes its cron — the watchdog and the SLA look forward only
// from now, so ticks the new cron "would have had" before it existed are
// not reported as missed; otherwise it stays prev. prevConfig is the
// version being replaced, nil when it no longer parses (its cron is not
// known, and the horizon is kept).
func FirstLoadedAt(exists bool, prev time.Time, prevConfig, next *pipeline.Pipeline, now time.Time) time.Time {
	if !exists {
		return now
	}
	if prevConfig != nil && prevConfig.Schedule.Cron.String() != next.Schedule.Cron.String() {
		return now
	}
	return prev
}

// StepOf is the step a non-terminal run in state s waits for; StepNone
// for a terminal one.
func StepOf(s State) Step {
	switch s {
	case Evaluating:
		return StepEvaluate
	case Triggering:
		return StepTrigger
	case Running:
		return StepPoll
	}
	return StepNone
}

// ConfigAction is what loading a validated config does to a pipeline.
type ConfigAction int

// Config actions.
const (
	ConfigNew     ConfigAction = iota // store it as a new version (first load or a change) and set its timers
	ConfigKeep                        // already the running version: nothing
	ConfigRestore                     // the stored version, whose file was removed, is back: run it again and re-arm its timers and runs
)

// LoadConfig decides what loading a config whose content hashes to hash
// does, given the stored row (exists; its hash; removed: no file defines
// it any more).
func LoadConfig(exists bool, storedHash string, removed bool, hash string) ConfigAction {
	switch {
	case !exists || storedHash != hash:
		return ConfigNew
	case removed:
		return ConfigRestore
	}
	return ConfigKeep
}
