package deps

import (
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/board"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Root causes (docs/root-cause.md). A downstream problem (OpensCondition)
// whose upstream is failed or late for the mapped period is explained by
// that upstream: the event is stored with Detail.blockedBy naming the
// ROOT — the first failed or late pipeline up the chain — and is listed
// under the root's alert instead of paging on its own. When the root's
// period succeeds, each blocked condition is released: alerted if it
// still holds, resolved (ROOT_CAUSE_RESOLVED) if it cleared.

// BlockReason says why an upstream period explains its downstreams'
// problems.
type BlockReason string

// The reasons.
const (
	BlockFailed BlockReason = "failed" // its run ended without success
	BlockLate   BlockReason = "late"   // its SLA is breached or at risk, or its schedule was missed
)

// BlockedBy names the root an event is blocked by: Detail.blockedBy.
type BlockedBy struct {
	PipelineID string
	ScheduleID string
	Date       string // the root's period
	Reason     BlockReason
}

// DetailBlockedBy and DetailReleased are the event detail fields of a
// blocked event and of the alert its release raises.
const (
	DetailBlockedBy = "blockedBy"
	DetailReleased  = "released"
)

// Key is the root's period.
func (b BlockedBy) Key() run.Key {
	return run.Key{PipelineID: b.PipelineID, ScheduleID: b.ScheduleID, Period: b.Date}
}

// Value is b as the event detail stores it.
func (b BlockedBy) Value() sensor.Value {
	return sensor.ObjectValue(run.Detail("pipelineId", b.PipelineID, "scheduleId", b.ScheduleID, "date", b.Date, "reason", string(b.Reason)))
}

// BlockedByOf reads e's Detail.blockedBy; ok is false when e is not
// blocked (or the field is not an object naming a pipeline).
func BlockedByOf(e event.Event) (BlockedBy, bool) {
	v, ok := e.Detail.Get(DetailBlockedBy)
	if !ok {
		return BlockedBy{}, false
	}
	o, ok := v.Object()
	if !ok {
		return BlockedBy{}, false
	}
	str := func(k string) string {
		v, _ := o.Get(k)
		s, _ := v.Str()
		return s
	}
	b := BlockedBy{PipelineID: str("pipelineId"), ScheduleID: str("scheduleId"), Date: str("date"), Reason: BlockReason(str("reason"))}
	return b, b.PipelineID != ""
}

// BlockedDetail is the detail of an event stored blocked by root: its
// own detail with blockedBy set, and without released (an alert released
// by one root that another root explains is blocked again, not released).
func BlockedDetail(d sensor.Object, root BlockedBy) sensor.Object {
	return WithDetail(WithoutDetail(d, DetailReleased), DetailBlockedBy, root.Value())
}

// WithDetail returns o with field k set to v (o itself is not changed).
func WithDetail(o sensor.Object, k string, v sensor.Value) sensor.Object {
	fields := make(map[string]sensor.Value, o.Len()+1)
	for _, name := range o.Keys() {
		fields[name], _ = o.Get(name)
	}
	fields[k] = v
	return sensor.NewObject(fields)
}

// WithoutDetail returns o without field k.
func WithoutDetail(o sensor.Object, k string) sensor.Object {
	if _, ok := o.Get(k); !ok {
		return o
	}
	fields := make(map[string]sensor.Value, o.Len())
	for _, name := range o.Keys() {
		if name != k {
			fields[name], _ = o.Get(name)
		}
	}
	return sensor.NewObject(fields)
}

// UpstreamStanding says whether an upstream period explains its
// downstreams' problems: failed (its run ended without success) or late
// (board.StateOf says breached or at risk, or its schedule was reported
// missed and has not recovered); "" when neither, or when it succeeded.
func UpstreamStanding(p *pipeline.Pipeline, per schedule.Period, f ConditionFacts, now time.Time) BlockReason {
	if p == nil || f.Succeeded() {
		return ""
	}
	if f.Run != nil && f.Run.State == run.FailedFinal {
		return BlockFailed
	}
	switch board.StateOf(p, per, f.Board(), now) {
	case board.Breached, board.AtRisk, board.Failed:
		return BlockLate
	}
	if f.Missed && !f.Recovered {
		return BlockLate
	}
	return ""
}

// Upstreams reads what RootCause asks about: a pipeline's config by id
// (nil, nil when none is loaded) and one period's stored facts
// (store.ConditionFactsOf). The engine reads them from the store; tests
// answer from maps.
type Upstreams interface {
	Pipeline(id string) (*pipeline.Pipeline, error)
	Facts(key run.Key) (ConditionFacts, error)
}

// MaxRootDepth bounds how far up RootCause follows a chain. Dependency
// cycles are refused at config load (pipeline.Cycle); the bound keeps a
// config that slipped through from looping.
const MaxRootDepth = 16

// UpstreamKey is the key of the upstream's run for period per.
func UpstreamKey(up *pipeline.Pipeline, per schedule.Period) run.Key {
	return run.Key{PipelineID: up.ID, ScheduleID: up.ScheduleID(), Period: per.String()}
}

// RootCause finds the root of the problems of p's period per: for each
// upstream rule in order, each mapped period (UpstreamPeriods) that has
// not succeeded is followed up its own upstreams first — a root further
// up explains it too — and is the root itself when it is failed or late
// (UpstreamStanding). ok is false when no upstream explains the period.
func RootCause(ups Upstreams, p *pipeline.Pipeline, per schedule.Period, now time.Time) (BlockedBy, bool, error) {
	return rootCause(ups, p, per, now, 0)
}

func rootCause(ups Upstreams, p *pipeline.Pipeline, per schedule.Period, now time.Time, depth int) (BlockedBy, bool, error) {
	if p == nil || depth >= MaxRootDepth {
		return BlockedBy{}, false, nil
	}
	for _, u := range p.Upstreams {
		up, err := ups.Pipeline(u.Pipeline)
		if err != nil || up == nil {
			if err != nil {
				return BlockedBy{}, false, err
			}
			continue
		}
		for _, upPer := range UpstreamPeriods(p, up, u, per) {
			key := UpstreamKey(up, upPer)
			f, err := ups.Facts(key)
			if err != nil {
				return BlockedBy{}, false, err
			}
			if f.Succeeded() {
				continue
			}
			if b, ok, err := rootCause(ups, up, upPer, now, depth+1); err != nil || ok {
				return b, ok, err
			}
			if why := UpstreamStanding(up, upPer, f, now); why != "" {
				if f.Run != nil {
					key = f.Run.Key // created under the other schedule id: its success is keyed so
				}
				return BlockedBy{PipelineID: key.PipelineID, ScheduleID: key.ScheduleID, Date: key.Period, Reason: why}, true, nil
			}
		}
	}
	return BlockedBy{}, false, nil
}

// BlockedCondition is a downstream condition blocked by a root, as the
// marker on the root's period records it (BlockedMarker): what its
// release needs to alert it again or resolve it.
type BlockedCondition struct {
	Down    run.Key    // the downstream period
	Type    event.Type // the blocked event's type
	EventID string
	Message string
	Detail  sensor.Object // the blocked event's detail, blockedBy included
	// Grace is how long after the root's success the release waits, so
	// the downstream can run on the recovered upstream first: the
	// downstream's sla.expectedDuration (0 without one).
	Grace time.Duration
}

// MaxReleaseGrace bounds the wait between a root's success and the
// release of the conditions it blocked.
const MaxReleaseGrace = 6 * time.Hour

// DefaultReleaseGrace is the grace of a blocked downstream without
// sla.expectedDuration: it is re-evaluated the instant its root recovers
// and may finish a minute later, so it is not judged (paged) at once.
const DefaultReleaseGrace = 15 * time.Minute

// ReleaseWaits reports whether a blocked condition of a downstream period
// whose facts are f is judged later than its release: the period has a
// run still going (evaluating, triggering, running) and not held by a
// pause — it has not had its chance yet on the recovered data. Its
// release is tried again after its grace, until the run ends (its own
// outcome, or its evaluation window closing, decides then).
func ReleaseWaits(f ConditionFacts) bool {
	return f.Run != nil && !f.Run.State.Terminal() && !f.Paused
}

// ReleaseAgainAt is when a blocked condition whose release waits
// (ReleaseWaits) is judged again: after its grace, at least the default.
func ReleaseAgainAt(c BlockedCondition, now time.Time) time.Time {
	return now.Add(max(c.Grace, DefaultReleaseGrace))
}

// BlockedOf is the blocked condition of event e of pipeline p (nil: no
// longer configured).
func BlockedOf(p *pipeline.Pipeline, e event.Event) BlockedCondition {
	c := BlockedCondition{Down: run.Key{PipelineID: e.PipelineID, ScheduleID: e.ScheduleID, Period: e.Date},
		Type: e.Type, EventID: e.ID, Message: e.Message, Detail: e.Detail}
	switch {
	case p == nil: // no longer configured: nothing to wait for
	case p.SLA != nil && p.SLA.ExpectedDuration > 0:
		c.Grace = min(p.SLA.ExpectedDuration, MaxReleaseGrace)
	default:
		c.Grace = DefaultReleaseGrace
	}
	return c
}

// MarkerDetail is c as its marker's detail stores it.
func (c BlockedCondition) MarkerDetail() sensor.Object {
	return run.Detail("pipelineId", c.Down.PipelineID, "scheduleId", c.Down.ScheduleID, "date", c.Down.Period,
		"type", string(c.Type), "eventId", c.EventID, "message", c.Message,
		"detail", sensor.ObjectValue(c.Detail), "graceSeconds", int64(c.Grace/time.Second))
}

// BlockedFromMarker reads a blocked condition back from its marker (kind
// and detail); ok is false for a marker of another kind or a detail that
// names no downstream.
func BlockedFromMarker(kind string, d sensor.Object) (BlockedCondition, bool) {
	if k, err := run.ParseMarkerKind(kind); err != nil || k.Name != run.MarkerBlocked {
		return BlockedCondition{}, false
	}
	str := func(k string) string {
		v, _ := d.Get(k)
		s, _ := v.Str()
		return s
	}
	c := BlockedCondition{Down: run.Key{PipelineID: str("pipelineId"), ScheduleID: str("scheduleId"), Period: str("date")},
		Type: event.Type(str("type")), EventID: str("eventId"), Message: str("message")}
	if v, ok := d.Get("detail"); ok {
		c.Detail, _ = v.Object()
	}
	if v, ok := d.Get("graceSeconds"); ok {
		n, _ := v.Int()
		c.Grace = min(max(time.Duration(n)*time.Second, 0), MaxReleaseGrace)
	}
	return c, c.Down.PipelineID != "" && c.Down.Period != "" && c.Type != ""
}

// ReleaseAt is when the conditions a root blocked are judged after its
// period succeeded at succeeded: once the longest grace among them passed.
// ok is false when it blocked none: nothing is held, so no release timer
// is armed.
func ReleaseAt(succeeded time.Time, cs []BlockedCondition) (at time.Time, ok bool) {
	if len(cs) == 0 {
		return time.Time{}, false
	}
	var grace time.Duration
	for _, c := range cs {
		grace = max(grace, c.Grace)
	}
	return succeeded.Add(grace), true
}

// Release decides what a blocked condition becomes once its root
// recovered, on the downstream period's facts now (p nil: the downstream
// is no longer configured), by the rule a silence's end follows too
// (LetGo): if it still holds, an alert without blockedBy and with
// released true — of its own type, or the breach a warning past its
// breach time became; the engine blocks it again if another root explains
// it now; if it cleared, ROOT_CAUSE_RESOLVED, which names the condition
// and its root (blockedBy) so it reaches the sinks that got the blocked
// event, in the same thread. ok is false when nothing is sent: a warning
// whose breach was reported (the breach is released on its own).
func Release(p *pipeline.Pipeline, c BlockedCondition, root run.Key, f ConditionFacts, now time.Time) (note run.Note, ok bool) {
	e := event.Event{ID: c.EventID, Type: c.Type, PipelineID: c.Down.PipelineID, ScheduleID: c.Down.ScheduleID, Date: c.Down.Period,
		Message: c.Message, Detail: c.Detail}
	held, verdict := LetGo(p, e, f, now)
	switch verdict {
	case LetGoTold:
		return run.Note{}, false
	case LetGoSend:
		// One suffix naming every root it was released from in turn (an
		// intermediate pipeline may have blocked it again), on the
		// message the condition was first raised with.
		from := root.PipelineID + " " + root.Period
		base, roots := heldBefore(held, DetailReleasedFrom)
		roots = appendName(roots, from)
		d := WithDetail(WithoutDetail(held.Detail, DetailBlockedBy), DetailReleased, sensor.BoolValue(true))
		d = WithDetail(d, "releasedFrom", sensor.StringValue(from))
		d = WithDetail(d, DetailReleasedFrom, names(roots))
		d = WithDetail(d, DetailHeldMessage, sensor.StringValue(base))
		return run.Note{Type: held.Type, Message: base + " (still so after upstream " + strings.Join(roots, ", ") + " recovered)", Detail: d}, true
	}
	b, _ := BlockedByOf(event.Event{Detail: c.Detail})
	if b.PipelineID == "" {
		b = BlockedBy{PipelineID: root.PipelineID, ScheduleID: root.ScheduleID, Date: root.Period}
	}
	d := run.Detail("type", string(c.Type), "eventId", c.EventID)
	d = WithDetail(d, DetailBlockedBy, b.Value())
	return run.Note{Type: event.RootCauseResolved,
		Message: string(c.Type) + " of " + c.Down.Period + " cleared once upstream " + root.PipelineID + " " + root.Period + " recovered",
		Detail:  d}, true
}

// HeldCondition is a condition a root's period blocked, with its
// downstream's config (nil: no longer configured) and period facts as
// read at the release.
type HeldCondition struct {
	Condition BlockedCondition
	Pipeline  *pipeline.Pipeline
	Facts     ConditionFacts
}

// Released is one held condition a release lets go: its marker goes,
// and Note, when there is one, is sent on its downstream period.
type Released struct {
	Index int // into the held conditions
	Note  *run.Note
}

// ReleaseDecision is what the release timer of a succeeded root does
// (ReleaseHeld): the conditions it lets go, and when it fires again for
// those whose release waits (zero: none waits).
type ReleaseDecision struct {
	Released []Released
	Again    time.Time
}

// ReleaseHeld decides the release of the conditions root's period
// blocked, now that it succeeded: each whose release waits (ReleaseWaits)
// is judged again at the earliest ReleaseAgainAt of them; every other is
// let go (Release: alerted again, resolved, or nothing when it was told).
func ReleaseHeld(root run.Key, held []HeldCondition, now time.Time) ReleaseDecision {
	var d ReleaseDecision
	for i, h := range held {
		if ReleaseWaits(h.Facts) {
			if at := ReleaseAgainAt(h.Condition, now); d.Again.IsZero() || at.Before(d.Again) {
				d.Again = at
			}
			continue
		}
		r := Released{Index: i}
		if note, ok := Release(h.Pipeline, h.Condition, root, h.Facts, now); ok {
			r.Note = &note
		}
		d.Released = append(d.Released, r)
	}
	return d
}

// SeeksRoot reports whether an event being committed is looked up for a
// root cause (RootCause): a problem that opens a condition, about a
// period, and not blocked already (a released alert explained by another
// root is blocked again: it no longer carries blockedBy).
func SeeksRoot(e event.Event) bool {
	if !OpensCondition(e.Type) || e.Date == "" {
		return false
	}
	_, blocked := BlockedByOf(e)
	return !blocked
}
