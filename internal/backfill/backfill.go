package backfill

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
)

// A backfill runs a range of a pipeline's past periods (product spec §9):
// the decisions here plan the range (which periods, in which order, and
// for each whether it would run and why), pick the next period to start
// under maxActive, judge a started period's outcome from its run, and say
// which SLA alerts a backfilled period is spared. The engine stores the
// backfill (store.Backfill) and sequences it with a durable timer.

// Only selects the periods of a range a backfill runs.
type Only string

// The selections.
const (
	OnlyMissing Only = "missing" // periods with no run
	OnlyFailed  Only = "failed"  // periods whose run ended without success
	OnlyAll     Only = "all"     // every period not in progress (reruns the others)
)

// Onlys lists the selections.
func Onlys() []Only { return []Only{OnlyMissing, OnlyFailed, OnlyAll} }

// Backfill limits: a range holds at most MaxPeriods periods (41
// days of hours, 2.7 years of days: a longer backfill is several
// requests), and runs at most MaxActive periods at once.
const (
	MaxPeriods = 1000
	MaxActive  = 20
)

// State is where a backfill is.
type State string

// Backfill states. The request stores Running; the backfill timer moves it
// to Completed once no period is pending or active; a cancel moves it to
// Cancelled (its active runs finish on their own).
const (
	Running   State = "running"
	Completed State = "completed"
	Cancelled State = "cancelled"
)

// States lists the backfill states.
func States() []State {
	return []State{Running, Completed, Cancelled}
}

// PeriodState is where one period of a backfill is.
type PeriodState string

// Period states. Pending until the backfill timer reaches it; then
// Skipped (with a reason) or Active (its run started); an active period
// becomes Succeeded or Failed when its run ends.
const (
	PeriodPending   PeriodState = "pending"
	PeriodSkipped   PeriodState = "skipped"
	PeriodActive    PeriodState = "active"
	PeriodSucceeded PeriodState = "succeeded"
	PeriodFailed    PeriodState = "failed"
)

// PeriodStates lists the period states.
func PeriodStates() []PeriodState {
	return []PeriodState{PeriodPending, PeriodSkipped, PeriodActive, PeriodSucceeded, PeriodFailed}
}

// Period is one period of a backfill and its progress.
type Period struct {
	Period string // schedule.Period.String()
	State  PeriodState
	Reason string // why it was skipped, or how its run ended
}

// Request is what an operator asks for.
type Request struct {
	From, To  string // periods, as schedule.ParsePeriod reads them
	Only      Only
	MaxActive int
	Reverse   bool
}

// FieldError is a refused request, naming the field at fault.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Range checks a request against the pipeline at now and returns
// its periods in the order they run (oldest first, newest first with
// Reverse). It refuses, naming the field: an unknown `only`, a maxActive
// outside 1..MaxActive, a period that does not parse or is of a
// kind the pipeline does not run (kinds: KindsOfPeriod), from after to, a
// range reaching into the future (to has not started at now), one before
// EarliestPeriod, and one of more than MaxPeriods periods. Hours
// are hours of the schedule's zone: the hour skipped when clocks spring
// forward is listed (PlanPeriod skips it), the repeated hour once.
func Range(p *pipeline.Pipeline, req Request, kinds run.PeriodKinds, now time.Time) ([]schedule.Period, error) {
	switch req.Only {
	case OnlyMissing, OnlyFailed, OnlyAll:
	default:
		return nil, fieldErr("only", "%q is not one of missing, failed, all", req.Only)
	}
	if req.MaxActive < 1 || req.MaxActive > MaxActive {
		return nil, fieldErr("maxActive", "%d is not between 1 and %d", req.MaxActive, MaxActive)
	}
	from, err := bound("from", req.From, p, kinds)
	if err != nil {
		return nil, err
	}
	to, err := bound("to", req.To, p, kinds)
	if err != nil {
		return nil, err
	}
	loc := p.Schedule.Location
	switch {
	case from.Hourly != to.Hourly:
		return nil, fieldErr("to", "%s and from %s are not the same kind of period", to, from)
	case to.Start(loc).After(now):
		return nil, fieldErr("to", "period %s has not started yet (a backfill runs past periods)", to)
	case from.String() > to.String(): // canonical periods of one kind sort in time order
		return nil, fieldErr("from", "%s is after to %s", from, to)
	}
	var out []schedule.Period
	for per := from; ; per = per.Next() {
		if len(out) == MaxPeriods {
			return nil, fieldErr("to", "the range %s..%s holds more than %d periods (backfill it in parts)", from, to, MaxPeriods)
		}
		out = append(out, per)
		if per == to {
			break
		}
	}
	if req.Reverse {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// bound parses one end of the range.
func bound(field, s string, p *pipeline.Pipeline, k run.PeriodKinds) (schedule.Period, error) {
	if s == "" {
		return schedule.Period{}, fieldErr(field, "a period is required (YYYY-MM-DD or YYYY-MM-DDTHH)")
	}
	per, err := schedule.ParsePeriod(s)
	if err != nil {
		return schedule.Period{}, fieldErr(field, "%v", err)
	}
	switch {
	case per.Date.Before(run.EarliestPeriod):
		return per, fieldErr(field, "period %s is before %s, the earliest period Interlock runs", per, run.EarliestPeriod)
	case per.Hourly && !k.Hours:
		return per, fieldErr(field, "%s is an hour, but pipeline %s runs daily periods (YYYY-MM-DD): %s", per, p.ID, k.Why)
	case !per.Hourly && !k.Days:
		return per, fieldErr(field, "%s is a date, but pipeline %s runs hourly periods (YYYY-MM-DDTHH): %s", per, p.ID, k.Why)
	}
	return per, nil
}

// PlanPeriod decides whether a backfill with selection only runs a
// period whose run is existing (nil: none), and why — the verdict a
// dry-run lists and the one the backfill timer applies when it reaches
// the period (on the facts of that moment). Skipped, in order: a date the
// calendar excludes, an hour the clock skips, a period a cron-only
// pipeline's cron never fires in, a run in progress; then by selection.
func PlanPeriod(p *pipeline.Pipeline, per schedule.Period, only Only, existing *run.Run) (runs bool, reason string) {
	switch {
	case run.Excluded(p, per):
		return false, run.ExclusionReason(p, per)
	case !run.PeriodExists(p, per):
		return false, fmt.Sprintf("the hour %s does not exist in %s (clocks spring forward)", per, p.Schedule.Location)
	case !cronFires(p, per):
		return false, "the cron never fires in this period"
	case existing != nil && !existing.State.Terminal():
		return false, fmt.Sprintf("a run is in progress (%s)", existing.State)
	}
	switch only {
	case OnlyMissing:
		if existing != nil {
			return false, fmt.Sprintf("it has a run (%s); --only failed or all reruns it", describeEnd(existing))
		}
		return true, "no run yet"
	case OnlyFailed:
		switch {
		case existing == nil:
			return false, "it never ran; --only missing or all runs it"
		case existing.State == run.Completed:
			return false, "its run succeeded"
		}
		return true, fmt.Sprintf("rerun: its run failed (%s)", describeEnd(existing))
	}
	if existing == nil {
		return true, "no run yet"
	}
	return true, fmt.Sprintf("rerun: its run ended %s", describeEnd(existing))
}

// describeEnd names how a terminal run ended: "COMPLETED" or
// "FAILED_FINAL, retries-exhausted".
func describeEnd(r *run.Run) string {
	if r.Outcome == run.OutcomeNone || r.State == run.Completed {
		return string(r.State)
	}
	return string(r.State) + ", " + string(r.Outcome)
}

// cronFires reports whether a period can have a run of a cron-only
// pipeline: its cron fires in it ("0 6 * * 1-5" never does on weekends).
// A pipeline with a trigger (or without a cron) runs any period.
func cronFires(p *pipeline.Pipeline, per schedule.Period) bool {
	if p.Schedule.Trigger != nil || p.Schedule.Cron.IsZero() {
		return true
	}
	loc := p.Schedule.Location
	return len(p.Schedule.Cron.Ticks(per.Start(loc).Add(-time.Nanosecond), per.End(loc).Add(-time.Nanosecond), loc, 1)) > 0
}

// PlannedPeriod is one period of a backfill's plan with its verdict.
type PlannedPeriod struct {
	Period schedule.Period
	Run    bool
	Reason string
}

// Plan is the verdict on each period of a range (Range's
// order); runOf returns a period's run (nil: none).
func Plan(p *pipeline.Pipeline, periods []schedule.Period, only Only, runOf func(schedule.Period) *run.Run) []PlannedPeriod {
	out := make([]PlannedPeriod, len(periods))
	for i, per := range periods {
		ok, why := PlanPeriod(p, per, only, runOf(per))
		out[i] = PlannedPeriod{Period: per, Run: ok, Reason: why}
	}
	return out
}

// Counts are a backfill's periods by state.
type Counts struct {
	Pending, Active, Skipped, Succeeded, Failed int
}

// CountPeriods counts periods by state.
func CountPeriods(ps []Period) Counts {
	var c Counts
	for _, p := range ps {
		switch p.State {
		case PeriodPending:
			c.Pending++
		case PeriodActive:
			c.Active++
		case PeriodSkipped:
			c.Skipped++
		case PeriodSucceeded:
			c.Succeeded++
		case PeriodFailed:
			c.Failed++
		}
	}
	return c
}

// Step is what the backfill timer does next.
type Step int

// Backfill steps.
const (
	StepWait     Step = iota // maxActive periods are active (or the pipeline is paused): wait for one to end
	StepStart                // start (or skip) the period at Index
	StepComplete             // nothing pending, nothing active: the backfill is done
)

// NextStep decides what a running backfill does next from its
// periods' states: while fewer than maxActive are active, the first
// pending period in order (the list is in run order); when none is
// pending and none is active, completion. paused holds every start (a
// paused pipeline's backfill waits; its active runs go on).
func NextStep(ps []Period, maxActive int, paused bool) (step Step, index int) {
	c := CountPeriods(ps)
	switch {
	case c.Pending == 0 && c.Active == 0:
		return StepComplete, -1
	case c.Pending == 0 || c.Active >= maxActive || paused:
		return StepWait, -1
	}
	for i, p := range ps {
		if p.State == PeriodPending {
			return StepStart, i
		}
	}
	return StepWait, -1 // unreachable: Pending > 0
}

// ActivePeriodEnded judges an active period from its run (nil: the run is
// gone): ended is false while the run goes on (or was reopened); else the
// period's state — Succeeded for a completed run, Failed otherwise — and
// how it ended.
func ActivePeriodEnded(r *run.Run) (state PeriodState, reason string, ended bool) {
	switch {
	case r == nil:
		return PeriodFailed, "its run is gone", true
	case !r.State.Terminal():
		return "", "", false
	case r.State == run.Completed:
		return PeriodSucceeded, "", true
	}
	return PeriodFailed, describeEnd(r), true
}
