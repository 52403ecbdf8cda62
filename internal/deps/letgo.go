package deps

import (
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/sla"
)

// A condition is held back two ways: a silence (or maintenance window)
// covers its event, or an upstream root explains it (Detail.blockedBy).
// When the silence ends, or the root recovers, the condition is let go,
// and both ask the one question LetGo answers: what is it alerted as now?

// LetGoVerdict is what a held condition becomes when it is let go.
type LetGoVerdict int

const (
	// LetGoCleared: the condition no longer holds (ConditionHolds).
	LetGoCleared LetGoVerdict = iota
	// LetGoTold: it holds, but a later alert of the same condition was
	// sent meanwhile — a warning whose breach was reported. Nothing is
	// sent for it, and it did not clear.
	LetGoTold
	// LetGoSend: it holds; alert it, as the event LetGo returns.
	LetGoSend
)

// LetGo decides what the condition e, held back until now, is alerted as,
// on its period's facts f. An SLA warning is never sent at or after its
// breach time (product spec §3 item 8, docs/lifecycle.md): a held warning
// whose breach was reported is told (the breach speaks for the
// condition); one whose breach time has passed without a breach reported
// is let go as that breach. Every other condition is let go as itself.
// The event returned is e, or the breach e became; its Detail keeps e's.
func LetGo(p *pipeline.Pipeline, e event.Event, f ConditionFacts, now time.Time) (event.Event, LetGoVerdict) {
	if !ConditionHolds(p, e, f, now) {
		return e, LetGoCleared
	}
	if e.Type != event.SLAWarning && e.Type != event.RelativeSLAWarning {
		return e, LetGoSend
	}
	breach := sla.BreachOf(e.Type)
	if f.Marks.Sent(breach) {
		return e, LetGoTold
	}
	s, _ := e.Detail.Str("breachAt")
	breachAt, err := time.Parse(time.RFC3339, s)
	if err != nil || now.Before(breachAt) {
		return e, LetGoSend
	}
	deadline, _ := e.Detail.Str("deadline")
	loc := time.UTC
	if p.SLA != nil && p.SLA.Location != nil {
		loc = p.SLA.Location
	}
	status, hint := sla.Status(f.Run)
	b := e
	b.Type = breach
	b.Message = sla.Message(deadline, "passed", breachAt.In(loc), e.Date, status)
	b.Detail = WithDetail(WithDetail(e.Detail, "status", sensor.StringValue(status)), "actionHint", sensor.StringValue(hint))
	b.Detail = WithoutDetail(b.Detail, DetailHeldMessage) // its own message now
	return b, LetGoSend
}

// supersededBy is the later event of the same condition that an event
// leads to: a warning to its breach, a failed attempt to the exhausted
// retries. Of two held events of one condition, only the later is let go.
var supersededBy = map[event.Type]event.Type{
	event.SLAWarning: event.SLABreach, event.RelativeSLAWarning: event.RelativeSLABreach,
	event.JobFailed: event.RetryExhausted,
}

// HeldSuperseded reports whether a held event of type t is superseded by a
// held event of the same period: held says which types the period holds.
func HeldSuperseded(t event.Type, held func(event.Type) bool) bool {
	later, ok := supersededBy[t]
	return ok && held(later)
}
