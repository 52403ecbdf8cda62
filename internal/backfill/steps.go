package backfill

import (
	"strconv"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
)

// The decisions of the engine's backfill steps, which engine/backfill.go
// obeys: whether a request may start, its id and first record; what a
// firing of the backfill timer does; what a period the timer started
// becomes; a cancel; and when something else wakes the timer early.

// Poll is how long a waiting backfill sleeps before its timer looks again
// when nothing wakes it (a pause that ends, a run reopened by someone
// else).
const Poll = 5 * time.Minute

// Stored is what a decision reads of one of a pipeline's stored backfills.
type Stored struct {
	ID    string
	State State
}

// RunningOf is the index of the pipeline's running backfill among stored,
// -1 when none runs.
func RunningOf(stored []Stored) int {
	for i, s := range stored {
		if s.State == Running {
			return i
		}
	}
	return -1
}

// Admit decides whether a new backfill of a pipeline may start beside its
// stored backfills: not while one runs (running is its index, -1 when
// none does: one backfill per pipeline at a time), and under which id:
// one past the greatest numeric id, so a pipeline's backfills are
// numbered 1, 2, 3 … whatever order they are listed in (an id that is not
// a number is passed over).
func Admit(stored []Stored) (id string, running int) {
	next := 1
	for _, s := range stored {
		if n, err := strconv.Atoi(s.ID); err == nil && n >= next {
			next = n + 1
		}
	}
	return strconv.Itoa(next), RunningOf(stored)
}

// Begun is a new backfill's record as its request planned it.
type Begun struct {
	From, To string   // the range's ends, earliest first whatever the run order
	Periods  []Period // every planned period, in run order, pending
	WouldRun int      // how many of them the plan would run
}

// Begin is the record a planned range (Plan's answer, in run order, not
// empty) starts as: every period pending, and the range named earliest
// first even when it runs newest first (reverse).
func Begin(planned []PlannedPeriod, reverse bool) Begun {
	b := Begun{Periods: make([]Period, len(planned))}
	if len(planned) == 0 {
		return b
	}
	b.From, b.To = planned[0].Period.String(), planned[len(planned)-1].Period.String()
	if reverse {
		b.From, b.To = b.To, b.From
	}
	for i, pp := range planned {
		b.Periods[i] = Period{Period: pp.Period.String(), State: PeriodPending}
		if pp.Run {
			b.WouldRun++
		}
	}
	return b
}

// Firing is what one firing of a running backfill's timer does.
type Firing struct {
	// Periods are the backfill's periods with the active ones judged from
	// their runs (a copy: the stored ones are not modified).
	Periods []Period
	// Changed: the record must be written (a period ended, one starts
	// or is skipped, or the backfill completes).
	Changed bool
	Step    Step
	Index   int // StepStart: the period to start; -1 otherwise
	// WakeAt is when the timer fires next: now on StepStart (the next
	// period at once), now+Poll on StepWait; zero on StepComplete (the
	// timer goes, and the backfill ends Completed).
	WakeAt time.Time
}

// Fire decides one firing of a running backfill's timer: each active
// period is judged from its run (runs, by period; a period without one:
// its run is gone, ActivePeriodEnded), then the next step on the periods
// as judged (NextStep under maxActive, nothing starting while paused), and
// when the timer fires again.
func Fire(periods []Period, runs map[string]*run.Run, maxActive int, paused bool, now time.Time) Firing {
	f := Firing{Periods: append([]Period(nil), periods...)}
	for i, bp := range f.Periods {
		if bp.State != PeriodActive {
			continue
		}
		if st, why, ended := ActivePeriodEnded(runs[bp.Period]); ended {
			f.Periods[i].State, f.Periods[i].Reason, f.Changed = st, why, true
		}
	}
	f.Step, f.Index = NextStep(f.Periods, maxActive, paused)
	switch f.Step {
	case StepStart:
		f.WakeAt, f.Changed = now, true
	case StepWait:
		f.WakeAt = now.Add(Poll)
	case StepComplete:
		f.Changed = true
	}
	return f
}

// Started is the state a period the timer started takes, and why, on the
// commit that starts it (why: PlanPeriod's reason): on a dry-run pipeline
// skipped, having recorded what it would do; skipped when the commit did
// not start its run (a rerun refused on that commit's facts says why);
// else active.
func Started(dryRun, started bool, why string) (PeriodState, string) {
	switch {
	case dryRun:
		return PeriodSkipped, "the pipeline is in dry-run: it recorded what it would do (" + why + ")"
	case !started:
		return PeriodSkipped, "not started: " + why
	}
	return PeriodActive, why
}

// Cancel decides a cancel request on a backfill in state s: a running one
// becomes Cancelled (ok: no period starts any more, the active ones
// finish); one that already ended is left as it is.
func Cancel(s State) (State, bool) {
	if s != Running {
		return s, false
	}
	return Cancelled, true
}

// WakesOnEnd reports whether a run's commit wakes its pipeline's backfill
// timer at once: a backfilled run (Cause backfill) that ends with this
// commit (prev: its stored version, nil for a new run; a run that had
// ended already wakes nothing again).
func WakesOnEnd(prev *run.Run, r run.Run) bool {
	return r.Cause == run.CauseBackfill && r.State.Terminal() && (prev == nil || !prev.State.Terminal())
}

// WakeAt is the due time a run's end (WakesOnEnd) gives the backfill
// timer that was read due at *read (nil: none stored): now, or just
// before what was read when that is not later than now. Always earlier
// than what was read, so the wake is a change a concurrent firing that
// read the older due time cannot commit over (its write is conditioned on
// that due time): it decides again and sees the run ended, instead of
// sleeping a whole Poll on the run it read still active.
func WakeAt(read *time.Time, now time.Time) time.Time {
	if read == nil || read.After(now) {
		return now
	}
	return read.Add(-time.Nanosecond)
}

// WakesOnResume reports whether a resume moves the backfill timer, due at
// due, to now: a backfill that waited while the pipeline was paused goes
// on at once, unless its timer is due already (it fires on its own).
func WakesOnResume(due, now time.Time) bool {
	return due.After(now)
}

// RangeStart is the earliest period of a range (periods in run order, not
// empty): the runs a request plans on are read from it on, in one list.
func RangeStart(periods []schedule.Period) string {
	first := periods[0].String()
	for _, per := range periods {
		first = min(first, per.String())
	}
	return first
}

// RunsOf picks, from a pipeline's runs, the run that stands for each
// period of the range, by period: the run of the pipeline's schedule id
// (scheduleID), else a run under the other schedule id (a trigger
// pipeline's cron run, or the reverse); runs outside the range are left
// out. The runs returned point into runs.
func RunsOf(periods []schedule.Period, runs []run.Run, scheduleID string) map[string]*run.Run {
	in := make(map[string]bool, len(periods))
	for _, per := range periods {
		in[per.String()] = true
	}
	out := map[string]*run.Run{}
	for i := range runs {
		r := &runs[i]
		if !in[r.Period] {
			continue
		}
		if cur, ok := out[r.Period]; ok && cur.ScheduleID == scheduleID {
			continue
		}
		out[r.Period] = r
	}
	return out
}

// Start is how the timer takes the pending period it reached.
type Start int

// The ways.
const (
	StartSkip  Start = iota // PlanPeriod skips it on the facts of now
	StartNew                // a new run (Cause backfill)
	StartRerun              // a rerun of its ended run (ledger reason and source run.ReasonBackfill)
)

// StartOf decides how the timer takes a pending period whose run is
// existing (nil: none) now: PlanPeriod's verdict and why, then a new run
// or a rerun of the ended one; marked says whether the period carries the
// backfill marker (the request's time, which spares it the SLA alerts of
// deadlines already past then, sla.BackfillExempt): a live pipeline's
// period that runs, never a dry-run pipeline's (it starts nothing).
func StartOf(p *pipeline.Pipeline, per schedule.Period, only Only, existing *run.Run) (s Start, marked bool, why string) {
	runs, why := PlanPeriod(p, per, only, existing)
	switch {
	case !runs:
		return StartSkip, false, why
	case existing == nil:
		return StartNew, !p.DryRun, why
	}
	return StartRerun, !p.DryRun, why
}
