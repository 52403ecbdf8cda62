package pause

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// A pause stops new runs of a pipeline (product spec §3b): cron ticks and
// trigger sensors are still recorded but start nothing, runs whose job
// started finish, SLA and watchdog alerts continue. Resume starts what the
// pause held back.

// State is a pipeline's pause state, as its row stores it.
type State struct {
	Paused bool
	Until  time.Time // zero: until resumed
	// PausedAt and ResumedAt bound the current or last pause.
	PausedAt, ResumedAt time.Time
	// Windows are the pauses that ended lately, oldest first: each resume
	// keeps its pause's window (KeepWindow).
	Windows []Window
}

// Decision is the answer to a pause request.
type Decision struct {
	State State
	Note  run.Note // PIPELINE_PAUSED
	// ResumeAt is when the timed pause ends (the resume timer); zero: the
	// pause lasts until resumed by hand, and no resume timer is set.
	ResumeAt time.Time
}

// Pause decides a request at now to pause until until (zero: until
// resumed): nothing to do (ok false) when the pipeline is already paused
// until that very time; an error for an end that CheckPauseUntil refuses.
// A pause that changes the end of a running one keeps its start.
func Pause(st State, until time.Time, by string, now time.Time) (d Decision, ok bool, err error) {
	if st.Paused && st.Until.Equal(until) {
		return Decision{}, false, nil
	}
	if !until.IsZero() {
		if err := run.CheckPauseUntil(until, now); err != nil {
			return Decision{}, false, err
		}
	}
	next := st
	next.Paused, next.Until = true, until.UTC()
	if !st.Paused {
		next.PausedAt, next.ResumedAt = now, time.Time{}
	}
	d = Decision{State: next, Note: run.Note{Type: event.PipelinePaused, Message: "pipeline paused until resumed", Detail: run.Detail("by", by)}}
	if !until.IsZero() {
		d.Note = run.Note{Type: event.PipelinePaused, Message: "pipeline paused until " + until.UTC().Format(time.RFC3339), Detail: run.Detail("by", by, "until", until)}
		d.ResumeAt = until
	}
	return d, true, nil
}

// Window is a pause that ended: [From, To). A cron tick inside one
// started nothing on purpose, so the watchdog does not report it missed.
type Window struct {
	From, To time.Time
}

// Contains reports whether t is inside the window; a zero To means the
// pause has not ended.
func (w Window) Contains(t time.Time) bool {
	return !t.Before(w.From) && (w.To.IsZero() || t.Before(w.To))
}

// How long and how many ended pause windows a pipeline keeps. The
// watchdog looks back watchdog.Lookback (48 hours) for missed cron ticks,
// so a window that ended longer ago than WindowRetention no longer
// matters; MaxWindows bounds the list (the row that holds it stays
// small) far above any real count of pauses in that time.
const (
	WindowRetention = 7 * 24 * time.Hour
	MaxWindows      = 128
)

// KeepWindow is the pause windows to keep when w ends at now:
// windows, oldest first, with w added, less those that ended more than
// WindowRetention before now, and at most MaxWindows — the
// latest. windows is not modified.
func KeepWindow(windows []Window, w Window, now time.Time) []Window {
	out := make([]Window, 0, len(windows)+1)
	for _, x := range append(windows[:len(windows):len(windows)], w) {
		if !x.To.Before(now.Add(-WindowRetention)) {
			out = append(out, x)
		}
	}
	if len(out) > MaxWindows {
		out = out[len(out)-MaxWindows:]
	}
	return out
}

// ResumeDecision is the answer to a resume (by hand or at a timed
// pause's end).
type ResumeDecision struct {
	State State
	Note  run.Note // PIPELINE_RESUMED
}

// Resume decides a resume at now: nothing (ok false) when the
// pipeline is not paused. The pause that ends is kept among the state's
// windows (KeepWindow) — unless its start is not known (a row paused
// before pauses were dated).
func Resume(st State, by string, now time.Time) (d ResumeDecision, ok bool) {
	if !st.Paused {
		return ResumeDecision{}, false
	}
	next := st
	next.Paused, next.Until, next.ResumedAt = false, time.Time{}, now
	if !st.PausedAt.IsZero() {
		next.Windows = KeepWindow(st.Windows, Window{From: st.PausedAt, To: now}, now)
	}
	return ResumeDecision{State: next, Note: run.Note{Type: event.PipelineResumed, Message: "pipeline resumed", Detail: run.Detail("by", by)}}, true
}

// ResumePlan is what a resume at now starts: the runs the pause held go
// on, and cron ticks and trigger data that came during the pause are
// handled as if they had just come.
type ResumePlan struct {
	// Rearm are the indices, in the active runs given, of the runs the
	// pause held (HeldByPause): they go on (Resume), with a fresh
	// evaluation window.
	Rearm []int
	// CronPeriod is the period of the last cron tick at or after the
	// pause's start, which started nothing: it starts now (unless this
	// resume already re-arms its run). nil: no such tick.
	CronPeriod *schedule.Period
	// Data is the trigger data that came during the pause and satisfies
	// the trigger condition now, one sensor per period, in the order of
	// the sensors given: each is handled as if it had just arrived (it
	// starts its period, completes a waiting run's rules, or is late data
	// for a period that already succeeded).
	Data []ResumeData
}

// ResumeData is one period's trigger data in a ResumePlan.
type ResumeData struct {
	Sensor int // index in the trigger sensors given
	Period schedule.Period
}

// PlanResume decides what a resume at now starts, for a pause that
// started at pausedAt: from the pipeline's active runs and its stored
// trigger sensors (any order; keys the trigger does not match are
// ignored).
func PlanResume(p *pipeline.Pipeline, pausedAt, now time.Time, active []run.Run, trigger []sensor.Record, opt rule.Options) ResumePlan {
	var plan ResumePlan
	for i, r := range active {
		if run.HeldByPause(r) {
			plan.Rearm = append(plan.Rearm, i)
		}
	}
	if c := p.Schedule.Cron; !c.IsZero() {
		if tick, ok := c.Prev(now, p.Schedule.Location); ok && !tick.Before(pausedAt) {
			per := c.PeriodOf(tick, p.Schedule.Location)
			plan.CronPeriod = &per
		}
	}
	if p.Schedule.Trigger == nil {
		return plan
	}
	seen := map[schedule.Period]bool{}
	for i, rec := range trigger {
		if !run.MatchesTrigger(p, rec.Key) || rec.ReceivedAt.Before(pausedAt) {
			continue
		}
		if !run.TriggerCheck(p, rec, now, opt).Passed {
			continue // another key of the period may satisfy the condition
		}
		per, err := run.SensorPeriod(p, rec.Key, rec.Data, rec.ReceivedAt)
		if err != nil || seen[per] {
			continue
		}
		seen[per] = true
		plan.Data = append(plan.Data, ResumeData{Sensor: i, Period: per})
	}
	return plan
}

// String describes a plan for tests and logs.
func (p ResumePlan) String() string {
	s := fmt.Sprintf("rearm %v", p.Rearm)
	if p.CronPeriod != nil {
		s += " cron " + p.CronPeriod.String()
	}
	for _, d := range p.Data {
		s += fmt.Sprintf(" data %d:%s", d.Sensor, d.Period)
	}
	return s
}
