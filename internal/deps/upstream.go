package deps

import (
	"fmt"
	"slices"
	"strings"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
)

// Pipelines that depend on pipelines (docs/dependencies.md). A downstream's
// period waits for the upstream's runs of the periods mapped to it.
//
// Periods map by name, not by instant: the downstream's 2026-03-10 maps to
// the upstream's 2026-03-10, each as its own schedule's zone names it,
// whatever the two zones. Data partitions are named that way (dt=2026-03-10
// is one partition for both jobs), and a name is what both pipelines' runs
// are keyed by; an instant-based mapping would make a Paris daily wait for
// two UTC days. The same holds for hours: T07 maps to T07.
//
// The mapping, for a downstream period P shifted by Offset periods of P's
// own kind:
//   - hours: all, or a daily P on an hourly upstream: every hour of P's
//     date that exists in the upstream's zone (23 on the day clocks spring
//     forward; 24 on the day they fall back, where T01 lasts two hours);
//   - an hourly P on a daily-only upstream: the upstream's day of P's date;
//   - otherwise the period of the same name.

// UpstreamPeriods are the upstream's periods whose runs must have succeeded
// before down's run for per may pass rule u.
func UpstreamPeriods(down, up *pipeline.Pipeline, u pipeline.Upstream, per schedule.Period) []schedule.Period {
	_ = down // the mapping is by name: only the downstream period's kind matters
	shifted := shiftPeriod(per, u.Offset)
	switch {
	case u.AllHours || !shifted.Hourly && up.Hourly():
		return hoursOf(up, shifted.Date)
	case shifted.Hourly && up.DailyOnly():
		return []schedule.Period{schedule.Daily(shifted.Date)}
	}
	return []schedule.Period{shifted}
}

// DownstreamPeriods is UpstreamPeriods turned around: the periods of down
// that upstream period upPer is mapped to by rule u (none, one, or the
// hours of a day for an hourly downstream on a daily upstream). The engine
// re-evaluates them when upPer succeeds. The first is the period of the
// kind the upstream names (the day for hours: all): the one an upstream
// success opens on a downstream that only upstreams start (OpensOnUpstream);
// a downstream whose trigger sensors pick its kinds may also run the day
// of an hour, which comes second.
func DownstreamPeriods(down, up *pipeline.Pipeline, u pipeline.Upstream, upPer schedule.Period) []schedule.Period {
	day := schedule.Daily(upPer.Date.AddDays(-u.Offset))
	var cands []schedule.Period
	switch {
	case u.AllHours || upPer.Hourly && down.DailyOnly():
		cands = []schedule.Period{day}
	case !upPer.Hourly && down.Hourly():
		for _, h := range hoursOf(down, upPer.Date) {
			cands = append(cands, shiftPeriod(h, -u.Offset))
		}
	case upPer.Hourly && !down.Hourly():
		cands = []schedule.Period{shiftPeriod(upPer, -u.Offset), day}
	default:
		cands = []schedule.Period{shiftPeriod(upPer, -u.Offset)}
	}
	// Keep what maps back: the candidates are a guess, the mapping decides.
	var out []schedule.Period
	for _, c := range cands {
		if slices.Contains(UpstreamPeriods(down, up, u, c), upPer) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Downstreams are the pipelines with an upstream rule on pipeline id (its
// direct downstreams), sorted by id.
func Downstreams(all []*pipeline.Pipeline, id string) []*pipeline.Pipeline {
	var out []*pipeline.Pipeline
	for _, p := range all {
		if slices.Contains(p.UpstreamIDs(), id) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *pipeline.Pipeline) int { return strings.Compare(a.ID, b.ID) })
	return slices.CompactFunc(out, func(a, b *pipeline.Pipeline) bool { return a.ID == b.ID })
}

// shiftPeriod moves per by n periods of its own kind.
func shiftPeriod(per schedule.Period, n int) schedule.Period {
	if per.Hourly {
		return schedule.HourlyPeriod(per.Date, per.Hour+n)
	}
	return schedule.Daily(per.Date.AddDays(n))
}

// hoursOf lists the hours of date d that exist on p's clock.
func hoursOf(p *pipeline.Pipeline, d schedule.Date) []schedule.Period {
	out := make([]schedule.Period, 0, 24)
	for h := range 24 {
		if per := schedule.HourlyPeriod(d, h); run.PeriodExists(p, per) {
			out = append(out, per)
		}
	}
	return out
}

// UpstreamRule is how an upstream rule's result reads in rule outcomes
// (explain, VALIDATION_* events): check "upstream", key the upstream's id.
func UpstreamRule(u pipeline.Upstream) rule.Rule {
	return rule.Rule{Key: u.Pipeline, Op: rule.Op(pipeline.CheckUpstream)}
}

// JudgeUpstream decides an upstream rule for one downstream period: up is
// the upstream's config (nil when no pipeline of that id is loaded), pers
// the mapped periods (UpstreamPeriods), runs the upstream's stored runs of
// those periods (any order; others are ignored). It passes when every
// mapped period's run is COMPLETED with outcome succeeded.
func JudgeUpstream(u pipeline.Upstream, up *pipeline.Pipeline, pers []schedule.Period, runs []run.Run) rule.Result {
	res := rule.Result{Rule: UpstreamRule(u)}
	if up == nil {
		res.Reason = fmt.Sprintf("upstream %s is not loaded (no pipeline file defines it, or its config does not load)", u.Pipeline)
		return res
	}
	byPeriod := make(map[string]*run.Run, len(runs))
	for i := range runs {
		if runs[i].PipelineID == up.ID {
			byPeriod[runs[i].Period] = &runs[i]
		}
	}
	var waiting []string // "2026-03-10T07 (no run yet)"
	var last string      // the words of the last waiting period
	for _, per := range pers {
		r := byPeriod[per.String()]
		switch {
		case r == nil:
			last = "no run yet"
		case r.State != run.Completed || r.Outcome != run.OutcomeSucceeded:
			last = runWords(*r)
		default:
			continue
		}
		waiting = append(waiting, per.String()+" ("+last+")")
	}
	what := periodsWords(pers)
	res.Passed = len(waiting) == 0 && len(pers) > 0
	switch {
	case len(pers) == 0:
		res.Reason = fmt.Sprintf("upstream %s has no period for this one", u.Pipeline)
	case res.Passed:
		res.Reason = fmt.Sprintf("upstream %s for %s: succeeded", u.Pipeline, what)
	case len(pers) == 1:
		res.Reason = fmt.Sprintf("upstream %s for %s: not yet (%s)", u.Pipeline, what, last)
	default:
		n := len(waiting)
		const shown = 3
		more := ""
		if n > shown {
			more = fmt.Sprintf(" and %d more", n-shown)
			waiting = waiting[:shown]
		}
		res.Reason = fmt.Sprintf("upstream %s for %s: not yet, %d of %d succeeded; waiting for %s%s",
			u.Pipeline, what, len(pers)-n, len(pers), strings.Join(waiting, ", "), more)
	}
	return res
}

// periodsWords names mapped periods: "period 2026-03-10", or "the 24
// hours of 2026-03-10".
func periodsWords(pers []schedule.Period) string {
	if len(pers) == 1 {
		return "period " + pers[0].String()
	}
	if len(pers) > 1 && pers[0].Hourly && pers[0].Date == pers[len(pers)-1].Date {
		return fmt.Sprintf("the %d hours of %s", len(pers), pers[0].Date)
	}
	names := make([]string, len(pers))
	for i, p := range pers {
		names[i] = p.String()
	}
	return "periods " + strings.Join(names, ", ")
}

// runWords says where a run that has not succeeded stands: "RUNNING",
// "failed: retries-exhausted".
func runWords(r run.Run) string {
	if r.State == run.FailedFinal {
		return "failed: " + string(r.Outcome)
	}
	return string(r.State)
}

// WithUpstreams adds the upstream rules' results to the sensor rules'
// outcome: every upstream rule must pass whatever the mode, which
// combines the sensor rules only (no sensor rules: that part passes).
func WithUpstreams(out rule.Outcome, sensorRules int, ups []rule.Result) rule.Outcome {
	if len(ups) == 0 {
		return out
	}
	passed := out.Passed || sensorRules == 0
	for _, u := range ups {
		passed = passed && u.Passed
	}
	out.Results = append(slices.Clone(out.Results), ups...)
	out.Passed = passed
	return out
}

// OpensOnUpstream reports whether an upstream's success opens the
// pipeline's periods: it has upstream rules and neither a cron nor a
// trigger, so its upstreams are what start it (docs/dependencies.md). A
// pipeline with a cron or a trigger opens its periods as it always does;
// its upstreams' success only re-evaluates a run that waits.
func OpensOnUpstream(p *pipeline.Pipeline) bool {
	return len(p.Upstreams) > 0 && p.Schedule.Cron.IsZero() && p.Schedule.Trigger == nil
}

// UpstreamAction is what an upstream's success does to one downstream
// period (OnUpstreamSuccess).
type UpstreamAction int

// The actions.
const (
	UpstreamNothing  UpstreamAction = iota // no run waits, and the period is not opened here
	UpstreamEvaluate                       // the period's run waits for its rules: evaluate it now
	UpstreamStart                          // open the period (run.PeriodStart decides the rest)
)

// OnUpstreamSuccess decides what an upstream period's success does to a
// downstream period mapped to it (DownstreamPeriods): existing is the
// downstream's run of the period (nil when none), first whether the
// period is the first DownstreamPeriods named (the one it opens),
// upstreamsPass whether every upstream rule of the period passes now.
// A downstream that only upstreams start opens a period once all its
// upstream rules pass, not at the first one: its evaluation window then
// waits for its sensor rules only, never for a slow sibling upstream (a
// daily downstream of 24 hours opens at the last hour's success).
func OnUpstreamSuccess(down *pipeline.Pipeline, existing *run.Run, paused, first, upstreamsPass bool) UpstreamAction {
	switch {
	case existing != nil && run.EvaluatesOnData(*existing, paused):
		return UpstreamEvaluate
	case existing == nil && first && upstreamsPass && OpensOnUpstream(down):
		return UpstreamStart
	}
	return UpstreamNothing
}
