package alert

import (
	"path"
	"slices"

	"github.com/interlockhq/interlock/internal/event"
)

// Route is one configured alert entry: a sink and what it receives.
type Route struct {
	Sink  Sink
	Match Match
}

// Match selects the events a route delivers. The lists combine with AND;
// within a list any item matches.
//
//   - Types: exact event types.
//   - Pipelines: pipeline ids or path.Match globs ("gold-*"); an exact id
//     matches itself, since ids hold no glob characters.
//   - Levels: a set of levels, not a minimum (levels: [error] is errors
//     only; list [warning, error] for both).
//
// Pipelines narrows which pipelines; Types and Levels say which events.
// When both Types and Levels are empty the route takes the default
// selection (see Default): every warning and error, and the all-clear
// events (SLA_MET, the *_RECOVERED events, JOB_COMPLETED) only for a
// period this sink already alerted on. Info events — lifecycle chatter and
// all dry-run events — reach a route only when it asks for them by type or
// by level info. Dry-run events are routed like any other: they are info.
type Match struct {
	Types     []event.Type
	Pipelines []string
	Levels    []event.Level
}

// Verdict is what a route does with one event.
type Verdict int

// Verdicts.
const (
	// Skip: the route does not take the event.
	Skip Verdict = iota
	// Send: deliver the event.
	Send
	// SendIfAlerted: deliver the event only if the sink already delivered
	// a problem for the event's period (the default route's all-clear).
	SendIfAlerted
)

// Default reports whether m uses the default selection: it names neither
// types nor levels.
func (m Match) Default() bool { return len(m.Types) == 0 && len(m.Levels) == 0 }

// Decide says whether the route takes e.
func (m Match) Decide(e event.Event) Verdict {
	if len(m.Pipelines) > 0 && !slices.ContainsFunc(m.Pipelines, func(p string) bool { return pipelineMatches(p, e.PipelineID) }) {
		return Skip
	}
	if m.Default() {
		switch {
		case IsAllClear(e.Type):
			return SendIfAlerted
		case e.Level() == event.LevelWarning || e.Level() == event.LevelError:
			return Send
		}
		return Skip
	}
	if len(m.Types) > 0 && !slices.Contains(m.Types, e.Type) {
		return Skip
	}
	if len(m.Levels) > 0 && !slices.Contains(m.Levels, e.Level()) {
		return Skip
	}
	return Send
}

func pipelineMatches(pattern, id string) bool {
	if pattern == id {
		return true
	}
	ok, err := path.Match(pattern, id)
	return err == nil && ok
}

// allClear are the events that say a problem of the period went away.
var allClear = map[event.Type]bool{
	event.SLAMet:            true,
	event.ScheduleRecovered: true,
	event.TriggerRecovered:  true,
	event.JobCompleted:      true,
	event.RootCauseResolved: true,
}

// IsAllClear reports whether t says a problem of its period is over:
// SLA_MET, SCHEDULE_RECOVERED, TRIGGER_RECOVERED, JOB_COMPLETED,
// ROOT_CAUSE_RESOLVED. The
// default route sends these only after a problem of the same period, into
// the same Slack thread; on their own they would be daily noise.
func IsAllClear(t event.Type) bool { return allClear[t] }
