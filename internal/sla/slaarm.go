package sla

import (
	"fmt"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// The SLA decisions of a period — which timers to set (TimersFor,
// LoadTimers), whether a timer that came due alerts (Alert), and
// the verdict when the job succeeds (VerdictAtSuccess) — read the
// period's SLA facts as one value, Marks, read from
// the period's markers. The engine keys and stores what they return.

// Marks are what a period's markers say about its SLA: the facts every
// SLA decision of the period reads besides the config and now. The core
// fills them from the period's markers (Set on each: decide.SLAMarks),
// including the markers its own commit is about to write; tests build
// them by hand.
type Marks struct {
	// DryRunObserved: a dry-run pipeline observed the period
	// (MarkerDryRunSeen or MarkerDryRun); it stays dry-run's after the
	// pipeline goes live, so no live SLA alert is raised for it.
	DryRunObserved bool
	// Verdict: the period had its verdict at completion (MarkerSLAVerdict),
	// also when a rerun reopened it since.
	Verdict bool
	// Sent alerts: SLA_WARNING, SLA_BREACH (alert or verdict),
	// RELATIVE_SLA_WARNING, RELATIVE_SLA_BREACH.
	Warning, Breach, RelWarning, RelBreach bool
	// FirstArrival is the period's first trigger-sensor arrival
	// (MarkerFirstArrival), the start of a relative SLA; zero: none yet.
	FirstArrival time.Time
	// BackfilledAt is when the backfill that started the period was
	// requested (MarkerBackfill); zero: no backfill did. An SLA whose
	// breach came before it raises nothing (BackfillExempt).
	BackfilledAt time.Time
}

// exempt reports whether the SLA breaching at breachAt raises nothing for
// the period because a backfill requested after it started the period.
func (m Marks) exempt(breachAt time.Time) bool {
	return BackfillExempt(breachAt, m.BackfilledAt)
}

// Set records that the period has a marker of kind, stored at at.
func (m *Marks) Set(kind string, at time.Time) {
	switch kind {
	case run.MarkerDryRunSeen, run.MarkerDryRun:
		m.DryRunObserved = true
	case run.MarkerSLAVerdict:
		m.Verdict = true
	case run.MarkerFirstArrival:
		m.FirstArrival = at
	case run.MarkerBackfill:
		m.BackfilledAt = at
	default:
		for _, a := range slaAlerts {
			if a.marker == kind {
				*m.sent(a.alert) = true
			}
		}
	}
}

// Sent reports whether the SLA alert t was sent for the period.
func (m Marks) Sent(t event.Type) bool { return *m.sent(t) }

// sent is the field of m that records the SLA alert t sent: the breach's
// for any other type, as markerOf.
func (m *Marks) sent(t event.Type) *bool {
	switch t {
	case event.SLAWarning:
		return &m.Warning
	case event.RelativeSLAWarning:
		return &m.RelWarning
	case event.RelativeSLABreach:
		return &m.RelBreach
	}
	return &m.Breach
}

// settled reports whether the period needs no SLA timers whatever its
// times: a dry-run pipeline observed it, or it had its verdict.
func (m Marks) settled() bool { return m.DryRunObserved || m.Verdict }

// slaAlerts are the SLA alerts, each with the marker kind that dedups
// it: the alert is sent once per period, and the breach marker also
// records a breach verdict at completion.
var slaAlerts = []struct {
	alert  event.Type
	marker string
}{
	{event.SLAWarning, run.MarkerSLAWarning},
	{event.SLABreach, run.MarkerSLABreach},
	{event.RelativeSLAWarning, run.MarkerRelWarning},
	{event.RelativeSLABreach, run.MarkerRelBreach},
}

// markerOf is the dedup marker kind of an SLA alert type (slaAlerts);
// the breach's for any other type.
func markerOf(t event.Type) string {
	for _, a := range slaAlerts {
		if a.alert == t {
			return a.marker
		}
	}
	return run.MarkerSLABreach
}

// BreachOf is the breach alert of the same SLA as t (absolute or
// relative).
func BreachOf(t event.Type) event.Type {
	if t == event.RelativeSLAWarning || t == event.RelativeSLABreach {
		return event.RelativeSLABreach
	}
	return event.SLABreach
}

// Track is one SLA of a period with its alerts: the absolute deadline
// (sla.deadline) and the relative one (sla.maxDuration) are tracked
// separately — timers, dedup markers — so a pipeline may have both.
type Track struct {
	Times        Times
	Warn, Breach event.Type
	maxDuration  time.Duration // sla.maxDuration, for a relative track's detail
}

// Tracks resolves the SLAs that apply to a period: the absolute
// deadline, and the relative one once the first trigger-sensor arrival is
// known (arrival zero: not yet). unresolved is the error of an absolute
// deadline that does not resolve for the period; the relative track is
// returned all the same.
func Tracks(p *pipeline.Pipeline, per schedule.Period, arrival time.Time) (tracks []Track, unresolved error) {
	if p.SLA == nil {
		return nil, nil
	}
	abs, ok, err := ResolveAbsolute(p, per)
	if err != nil {
		unresolved = err
	} else if ok {
		tracks = append(tracks, Track{Times: abs, Warn: event.SLAWarning, Breach: event.SLABreach})
	}
	if rel, ok := ResolveRelative(p, arrival); ok {
		tracks = append(tracks, Track{Times: rel, Warn: event.RelativeSLAWarning, Breach: event.RelativeSLABreach, maxDuration: p.SLA.MaxDuration})
	}
	return tracks, unresolved
}

// Timer is an SLA timer to set: alert Alert at At.
type Timer struct {
	Alert    event.Type // SLA_WARNING, SLA_BREACH, RELATIVE_SLA_WARNING or RELATIVE_SLA_BREACH
	At       time.Time
	Breach   bool // a breach timer (else a warning timer)
	Relative bool // of the relative SLA (else of the absolute deadline)
	// Detail is what the timer carries to its alert (AlertFacts):
	// the alert type, the breach time and the configured deadline.
	Detail sensor.Object
}

// TimersFor decides the SLA timers to set for a period at now (its run
// starts or reopens, the period starts, its first trigger data arrives,
// the watchdog repairs a missing timer): none when the SLA does not apply
// to the period (Applies) or the period is settled (observed by
// dry-run, or had its verdict); else, per SLA, the instants
// InstantsToArm allows from firstLoaded on (forward-only), less the
// alerts already sent — no timer once the breach was reported, no warning
// once the warning was. m.FirstArrival starts the relative SLA. Timers are
// keyed by period, so setting them twice is harmless. unresolved is as in
// Tracks.
func TimersFor(p *pipeline.Pipeline, per schedule.Period, m Marks, firstLoaded, now time.Time) (timers []Timer, unresolved error) {
	if !Applies(p, per) || m.settled() {
		return nil, nil
	}
	tracks, unresolved := Tracks(p, per, m.FirstArrival)
	for _, t := range tracks {
		if m.exempt(t.Times.Breach) {
			continue
		}
		warn, breach := InstantsToArm(t.Times, firstLoaded, now)
		timers = append(timers, t.timers(warn, breach, m)...)
	}
	return timers, unresolved
}

// LoadTimers decides the timers of one absolute SLA that
// TimersToArm selected when a config took effect: none when the
// period's run already ended (runEnded) or the period is settled, none
// for a period Interlock could not start itself that has no run (hasRun;
// Arm.NeedsRun), and none for an alert already sent.
func LoadTimers(a Arm, hasRun, runEnded bool, m Marks) []Timer {
	if runEnded || m.settled() || m.exempt(a.Times.Breach) || a.NeedsRun && !hasRun {
		return nil
	}
	t := Track{Times: a.Times, Warn: event.SLAWarning, Breach: event.SLABreach}
	return t.timers(a.Warning, a.Breach, m)
}

// timers are the track's warning and breach timers as decided, less the
// alerts already sent: nothing once the breach was reported.
func (t Track) timers(warn, breach bool, m Marks) []Timer {
	if (!warn && !breach) || m.Sent(t.Breach) {
		return nil
	}
	detail := []any{"breachAt", t.Times.Breach, "deadline", t.Times.Deadline}
	if t.Times.Relative {
		detail = append(detail, "maxDuration", t.maxDuration, "sensorArrivalAt", t.Times.Breach.Add(-t.maxDuration))
	}
	var out []Timer
	if warn && !m.Sent(t.Warn) {
		out = append(out, Timer{Alert: t.Warn, At: t.Times.Warning, Relative: t.Times.Relative, Detail: run.Detail(append([]any{"event", string(t.Warn)}, detail...)...)})
	}
	if breach {
		out = append(out, Timer{Alert: t.Breach, At: t.Times.Breach, Breach: true, Relative: t.Times.Relative, Detail: run.Detail(append([]any{"event", string(t.Breach)}, detail...)...)})
	}
	return out
}

// AlertFacts is what an SLA timer carries to its alert (Timer.Detail),
// read back by ParseTimer.
type AlertFacts struct {
	Alert    event.Type
	BreachAt time.Time
	Deadline string // as configured, for the message
	Breach   bool   // a breach timer
}

// ParseTimer reads an SLA timer's detail; a timer without a readable
// breach time is taken to be due at it.
func ParseTimer(d sensor.Object, breachTimer bool, dueAt time.Time) AlertFacts {
	typ, _ := d.Str("event")
	deadline, _ := d.Str("deadline")
	s, _ := d.Str("breachAt")
	breachAt, _ := time.Parse(time.RFC3339, s)
	if breachAt.IsZero() {
		breachAt = dueAt
	}
	return AlertFacts{Alert: event.Type(typ), BreachAt: breachAt, Deadline: deadline, Breach: breachTimer}
}

// Alert decides what an SLA timer that came due at now says: nothing
// when, under the config in force (which may have changed since the timer
// was set), the SLA no longer applies to the period or a dry-run pipeline
// observed it, or when AlertDue says no (the period is done, the alert
// was sent, a warning at or after the breach); else the alert and the
// marker kind that dedups it. existing is the period's run (for a daily
// period without one, the hourly run that stands for it: DayRun), nil
// when none.
func Alert(p *pipeline.Pipeline, per schedule.Period, f AlertFacts, m Marks, existing *run.Run, now time.Time) (note run.Note, marker string, ok bool) {
	if !Applies(p, per) || m.DryRunObserved || m.exempt(f.BreachAt) {
		return run.Note{}, "", false
	}
	if !AlertDue(f.Alert, existing, f.BreachAt, m.Sent(f.Alert), m.Sent(BreachOf(f.Alert)), now) {
		return run.Note{}, "", false
	}
	status, hint := Status(existing)
	verb := "is due"
	if f.Breach {
		verb = "passed"
	}
	return run.Note{
		Type:    f.Alert,
		Message: Message(f.Deadline, verb, f.BreachAt.In(p.SLA.Location), per.String(), status),
		Detail:  run.Detail("status", status, "breachAt", f.BreachAt, "deadline", f.Deadline, "actionHint", hint, "source", "schedule"),
	}, markerOf(f.Alert), true
}

// Message is an SLA alert's message: the deadline as configured, "is
// due" or "passed", the breach time in the SLA's zone, the period and its
// status.
func Message(deadline, verb string, breachAt time.Time, period, status string) string {
	return fmt.Sprintf("SLA deadline %s %s (%s); period %s is %s", deadline, verb, breachAt.Format(time.RFC3339), period, status)
}

// Mark is a marker a decision asks to write (if absent) at now.
type Mark struct {
	Kind   string
	Detail sensor.Object
}

// VerdictAtSuccess decides the SLA verdict when the period's job
// succeeds at now: SLA_MET or SLA_BREACH (Verdict) against the
// absolute deadline, else the relative one (Resolve from
// m.FirstArrival), with the verdict marker and, for a breach, the breach
// marker. Nothing when the SLA does not apply to the period, no SLA
// resolves, its deadline came before the pipeline was first loaded
// (forward-only), the period already had its verdict (a rerun), or its
// breach was already reported.
func VerdictAtSuccess(p *pipeline.Pipeline, per schedule.Period, m Marks, firstLoaded, now time.Time) (note run.Note, marks []Mark, ok bool, err error) {
	if !Applies(p, per) {
		return run.Note{}, nil, false, nil
	}
	times, ok, err := Resolve(p, per, m.FirstArrival)
	if err != nil || !ok {
		return run.Note{}, nil, false, err
	}
	if _, before := BeforeLoad(times, firstLoaded); before || m.Verdict || m.exempt(times.Breach) {
		return run.Note{}, nil, false, nil
	}
	breach := event.SLABreach
	if times.Relative {
		breach = event.RelativeSLABreach
	}
	verdict, ok := Verdict(times, m.Sent(breach), now)
	if !ok {
		return run.Note{}, nil, false, nil
	}
	when := "after"
	if verdict == event.SLAMet {
		when = "before"
	}
	note = run.Note{
		Type:    verdict,
		Message: fmt.Sprintf("job completed %s the SLA deadline %s", when, times.Breach.In(p.SLA.Location).Format(time.RFC3339)),
		Detail:  run.Detail("breachAt", times.Breach, "deadline", times.Deadline, "completedAt", now, "marginSeconds", int64(times.Breach.Sub(now)/time.Second)),
	}
	marks = []Mark{{Kind: run.MarkerSLAVerdict, Detail: run.Detail("verdict", string(verdict))}}
	if verdict == event.SLABreach {
		marks = append(marks, Mark{Kind: markerOf(breach)})
	}
	return note, marks, true, nil
}

// DayRun is the run of a period as SLA alerts see it: own, the period's
// run under its own key, when there is one; for a daily period without
// one, a run of one of its hours stands for it (a trigger-only pipeline
// whose sensors name hours runs hourly periods) — a running one if any,
// else the latest hour's. sameDay may hold any runs; only those of the
// period's hours count. nil when no run stands for the period.
func DayRun(per schedule.Period, own *run.Run, sameDay []run.Run) *run.Run {
	if own != nil || per.Hourly {
		return own
	}
	prefix := per.Date.String() + "T"
	var pick *run.Run
	for i := range sameDay {
		x := &sameDay[i]
		if !strings.HasPrefix(x.Period, prefix) {
			continue
		}
		if pick == nil || (!x.State.Terminal() && pick.State.Terminal()) || (x.State.Terminal() == pick.State.Terminal() && x.Period > pick.Period) {
			pick = x
		}
	}
	return pick
}

// MarksNeeded reports whether any SLA decision about the period can
// come out other than "nothing" (Applies), so the engine skips reading
// Marks for the periods of pipelines without an SLA, dry-run ones and
// excluded dates. Every decision above checks Applies itself.
func MarksNeeded(p *pipeline.Pipeline, per schedule.Period) bool { return Applies(p, per) }

// PeriodStartTimers decides the SLA timers of a period when it starts
// (the period timer): as TimersFor, and none when the period's run
// already ended (runEnded: a run may come before its period starts, from
// data that names a future date).
func PeriodStartTimers(p *pipeline.Pipeline, per schedule.Period, runEnded bool, m Marks, firstLoaded, now time.Time) (timers []Timer, unresolved error) {
	if runEnded {
		return nil, nil
	}
	return TimersFor(p, per, m, firstLoaded, now)
}

// TimersOnArrival decides the SLA timers to set when the period's first
// trigger-sensor arrival is recorded (m.FirstArrival): those of
// TimersFor, which now include the relative SLA's, for a pipeline with
// a relative SLA (sla.maxDuration); none for the others, whose timers do
// not depend on the arrival.
func TimersOnArrival(p *pipeline.Pipeline, per schedule.Period, m Marks, firstLoaded, now time.Time) (timers []Timer, unresolved error) {
	if p.SLA == nil || p.SLA.MaxDuration <= 0 {
		return nil, nil
	}
	return TimersFor(p, per, m, firstLoaded, now)
}

// BackfillExempt reports whether a backfilled period is spared an SLA
// whose breach time is breachAt: a backfill requested at requestedAt
// (zero: the period was not backfilled) raises no SLA alert — no
// warning, no breach, no verdict — for a deadline already past when it
// was requested; a deadline still ahead then is the period's to meet.
func BackfillExempt(breachAt, requestedAt time.Time) bool {
	return !requestedAt.IsZero() && !breachAt.After(requestedAt)
}
