package board

import (
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sla"
)

// The dashboard's decisions: what state a period is in for a person
// looking at it (StateOf), which pipelines come first (Urgency,
// Compare), which instant to count down to (NextDeadline), and what
// a cell of the history grid says (CellOf). They read the config,
// the stored facts and now, like every decision here; the dashboard only
// renders them.

// State is a period's state as the dashboard shows it.
type State string

// The board states, most urgent first (States).
const (
	Breached   State = "breached"   // the SLA deadline passed without success
	Failed     State = "failed"     // the run ended without success
	AtRisk     State = "at-risk"    // the SLA warning time passed without success
	Triggering State = "triggering" // the job's trigger call is due, or waits to retry an infrastructure error
	Evaluating State = "evaluating" // the rules are evaluated until they pass
	Running    State = "running"    // the job runs: polled, or inside its trigger call (a synchronous job)
	Waiting    State = "waiting"    // no run yet: waiting for data or the cron
	Paused     State = "paused"     // an operator paused the pipeline
	Succeeded  State = "succeeded"  // the job succeeded
	DryRun     State = "dry-run"    // observes and projects, never triggers
	Excluded   State = "excluded"   // schedule.exclude rules the period out
)

// States lists every board state, most urgent first: the order of
// the overview's counts and of its rows.
func States() []State {
	return []State{Breached, Failed, AtRisk, Triggering, Evaluating, Running,
		Waiting, Paused, Succeeded, DryRun, Excluded}
}

// Urgency ranks s: lower comes first. An unknown state comes last.
func Urgency(s State) int {
	for i, x := range States() {
		if x == s {
			return i
		}
	}
	return len(States())
}

// Facts are the stored facts about one period of a pipeline that the
// board decisions read.
type Facts struct {
	Paused      bool      // the pipeline's row is paused
	FirstLoaded time.Time // the pipeline's first load (SLA alerts are forward-only)
	Run         *run.Run  // the period's run; nil: none
	// Marks are the period's SLA markers; only FirstArrival (a relative
	// SLA's start) and the breach markers are read, and a reader with no
	// relative SLA to judge may leave them zero.
	Marks sla.Marks
}

// slaStanding says whether the period's SLA is breached or at risk now: a
// period whose job succeeded is neither (its verdict is CellOf's),
// nor is one whose SLA does not apply or resolve, or whose instant came
// before the pipeline was first loaded (forward-only, sla.BeforeLoad) —
// unless the breach was reported (its marker).
func slaStanding(p *pipeline.Pipeline, per schedule.Period, f Facts, now time.Time) (breached, atRisk bool) {
	if f.Run != nil && f.Run.State == run.Completed {
		return false, false
	}
	if !sla.Applies(p, per) {
		return false, false
	}
	t, ok, err := sla.Resolve(p, per, f.Marks.FirstArrival)
	if err != nil || !ok {
		return false, false
	}
	if (t.Relative && f.Marks.RelBreach) || (!t.Relative && f.Marks.Breach) {
		return true, false
	}
	warnBefore, breachBefore := sla.BeforeLoad(t, f.FirstLoaded)
	if !breachBefore && !now.Before(t.Breach) {
		return true, false
	}
	return false, !warnBefore && !t.Warning.IsZero() && !now.Before(t.Warning) && now.Before(t.Breach)
}

// StateOf classifies a period. A dry-run pipeline is dry-run and an
// excluded period without a run is excluded, whatever else holds (neither
// has SLA alerts); then a breached SLA, a failed run and an SLA at risk
// come first, because they need someone; then a pause; then the run's
// state, or waiting when there is no run.
func StateOf(p *pipeline.Pipeline, per schedule.Period, f Facts, now time.Time) State {
	own := runState(p, per, f.Run)
	if own == DryRun || own == Excluded {
		return own
	}
	breached, atRisk := slaStanding(p, per, f, now)
	switch {
	case breached:
		return Breached
	case f.Run != nil && f.Run.State == run.FailedFinal:
		return Failed
	case atRisk:
		return AtRisk
	case f.Paused:
		return Paused
	}
	return own
}

// runState is the state a period's run alone says: dry-run, excluded
// (no run in an excluded period), waiting (no run), or the run's state.
func runState(p *pipeline.Pipeline, per schedule.Period, r *run.Run) State {
	switch {
	case p.DryRun:
		return DryRun
	case r == nil && run.Excluded(p, per):
		return Excluded
	case r == nil:
		return Waiting
	}
	switch r.State {
	case run.FailedFinal:
		return Failed
	case run.Evaluating:
		return Evaluating
	case run.Triggering:
		// A call in flight is the job running: a synchronous job (a
		// command, a Lambda invocation) runs for its whole length inside
		// the call, and an asynchronous one is starting. Only a call due,
		// or waiting to retry, is "triggering".
		if r.TriggerInFlight {
			return Running
		}
		return Triggering
	case run.Running:
		return Running
	case run.Completed:
		return Succeeded
	}
	return Waiting
}

// Rank is what the overview's order reads of a pipeline.
type Rank struct {
	State    State
	Deadline time.Time // the next deadline (NextDeadline); zero: none
	ID       string
}

// Compare orders the overview: by urgency (Urgency), then the
// nearest deadline first (none last), then by id.
func Compare(a, b Rank) int {
	if c := Urgency(a.State) - Urgency(b.State); c != 0 {
		return c
	}
	switch {
	case !a.Deadline.IsZero() && !b.Deadline.IsZero():
		if c := a.Deadline.Compare(b.Deadline); c != 0 {
			return c
		}
	case !a.Deadline.IsZero():
		return -1
	case !b.Deadline.IsZero():
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}

// Deadline is an instant a period counts down to, and what it is.
type Deadline struct {
	At   time.Time
	What string // "SLA warning", "SLA breach", "trigger deadline", "evaluation window", "poll window", "next tick"
}

// NextDeadline is the first instant after now that matters for the
// period: for a period still to succeed, its SLA warning or breach, its
// trigger deadline (while it has no run), or the window its run is in,
// whichever comes first; else, or when none is ahead, the next cron tick.
// ok is false when no instant is ahead.
func NextDeadline(p *pipeline.Pipeline, per schedule.Period, f Facts, now time.Time) (Deadline, bool) {
	var best Deadline
	consider := func(at time.Time, what string) {
		if !at.IsZero() && at.After(now) && (best.At.IsZero() || at.Before(best.At)) {
			best = Deadline{At: at, What: what}
		}
	}
	open := !p.DryRun && (f.Run == nil || !f.Run.State.Terminal())
	if open {
		if sla.Applies(p, per) {
			if t, ok, err := sla.Resolve(p, per, f.Marks.FirstArrival); err == nil && ok {
				warnBefore, breachBefore := sla.BeforeLoad(t, f.FirstLoaded)
				if !warnBefore {
					consider(t.Warning, "SLA warning")
				}
				if !breachBefore {
					consider(t.Breach, "SLA breach")
				}
			}
		}
		if tr := p.Schedule.Trigger; tr != nil && !tr.Deadline.IsZero() && f.Run == nil {
			if at, err := tr.Deadline.Resolve(per, p.Schedule.Location); err == nil {
				consider(at, "trigger deadline")
			}
		}
		if r := f.Run; r != nil {
			switch r.State {
			case run.Evaluating:
				consider(r.EvalDeadline, "evaluation window")
			case run.Running:
				consider(r.PollDeadline, "poll window")
			}
		}
	}
	if best.At.IsZero() {
		if c := p.Schedule.Cron; !c.IsZero() {
			consider(c.Next(now, p.Schedule.Location), "next tick")
		}
	}
	return best, !best.At.IsZero()
}

// SLAVerdictKind is what a cell of the history grid says about a period's
// SLA.
type SLAVerdictKind string

// The grid's SLA verdicts.
const (
	SLANone     SLAVerdictKind = ""         // no SLA applies, or it came before the first load
	SLAPending  SLAVerdictKind = "pending"  // the deadline is ahead and the job has not succeeded
	SLAMet      SLAVerdictKind = "met"      // the job succeeded before the deadline
	SLABreached SLAVerdictKind = "breached" // the deadline passed without success (or success came after it)
)

// Cell is a cell of the history grid: one period's outcome, its SLA
// verdict and how many reruns it had.
type Cell struct {
	State  State
	SLA    SLAVerdictKind
	Reruns int // accepted reruns of the period (the run's generation)
}

// CellOf judges one period of the grid. Its state is the run's
// outcome alone — the SLA is the cell's own verdict, and a pause is the
// pipeline's, not a past period's. The SLA verdict is judged against the
// run's end: a run that succeeded before the deadline met it; the verdict
// of a period rerun after its deadline is the latest run's (the period
// page shows the SLA events themselves).
func CellOf(p *pipeline.Pipeline, per schedule.Period, f Facts, now time.Time) Cell {
	c := Cell{State: runState(p, per, f.Run)}
	if f.Run != nil {
		c.Reruns = f.Run.Generation
	}
	if p.DryRun || !sla.Applies(p, per) {
		return c
	}
	t, ok, err := sla.Resolve(p, per, f.Marks.FirstArrival)
	if err != nil || !ok {
		return c
	}
	if _, before := sla.BeforeLoad(t, f.FirstLoaded); before {
		return c
	}
	switch {
	case f.Run != nil && f.Run.State == run.Completed && f.Run.EndedAt.Before(t.Breach):
		c.SLA = SLAMet
	case f.Run != nil && f.Run.State == run.Completed:
		c.SLA = SLABreached
	case now.Before(t.Breach):
		c.SLA = SLAPending
	default:
		c.SLA = SLABreached
	}
	return c
}

// GridPeriods returns the n periods of the history grid, oldest first,
// ending with the current one: days, or hours for an hourly pipeline.
func GridPeriods(p *pipeline.Pipeline, now time.Time, n int) []schedule.Period {
	if n <= 0 {
		return nil
	}
	out := make([]schedule.Period, n)
	per := run.CurrentPeriod(p, now)
	for i := n - 1; i >= 0; i-- {
		out[i] = per
		per = per.Prev()
	}
	return out
}
