package watchdog

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store/record"
)

// missedSchedules finds cron periods whose tick produced no run
// (SCHEDULE_MISSED, once per period) and reports the late run when it
// shows up (SCHEDULE_RECOVERED, once).
//
// Each period is judged on its first tick after max(now − Lookback,
// FirstLoadedAt) (a tick at or before the first load was never fired by
// the engine). Its expected start is the later of that tick and
// schedule.time on the period's date in the schedule's zone: a run cannot
// be expected before its tick. It is missed once now ≥ expected + Grace,
// unless the period is excluded, the tick fell in a pause window, or the
// period has a run.
func missedSchedules(s *Snapshot) ([]Finding, error) {
	c := cronMissed
	ix := newRunIndex(s)
	missed := s.markersOf(c.marker)
	var out []Finding
	for _, wp := range s.watchedList() {
		p := wp.P
		cr := p.Schedule.Cron
		if cr.IsZero() || wp.Paused {
			continue
		}
		loc := p.Schedule.Location
		from := s.Now.Add(-Lookback)
		if wp.FirstLoadedAt.After(from) {
			from = wp.FirstLoadedAt
		}
		for tick := cr.Next(from, loc); !tick.IsZero() && !tick.After(s.Now); {
			per := cr.PeriodOf(tick, loc)
			// Later ticks of the same period find its run: go to the
			// first tick of the next period.
			skipTo := per.End(loc).Add(-time.Nanosecond)
			if skipTo.Before(tick) {
				skipTo = tick
			}
			first := tick
			tick = cr.Next(skipTo, loc)

			expected := first
			if t := p.Schedule.Time; t != nil {
				if at := t.On(per.Date, loc); at.After(expected) {
					expected = at
				}
			}
			key := keyOf(p, per)
			if s.Now.Before(expected.Add(Grace)) || run.Excluded(p, per) || wp.pausedAt(first) ||
				ix.handled(key, per) || s.hasMarker(key, c.marker) {
				continue
			}
			hint := fmt.Sprintf("cron %s expected to start %s — no run found; check that Interlock is running, then request a rerun of the period", cr, per)
			out = append(out, c.finding(key, per.String(), expected, loc, hint, "cron", cr.String(), "tick", first))
		}
		out = append(out, c.recoveries(s, ix, missed[p.ID])...)
	}
	sortFindings(out)
	return out, nil
}

// missedInclusionDates finds inclusion dates that passed with no run
// (IRREGULAR_SCHEDULE_MISSED, once per date) and reports the late run
// (SCHEDULE_RECOVERED, kind inclusion).
//
// A date's expected time is schedule.time on it, else its end (the next
// midnight), in the schedule's zone; dates whose expected time is within
// Lookback, not before FirstLoadedAt, and at least Grace ago are judged.
// A date is not missed when it is excluded, has a run (any run of that
// date), or has trigger data waiting that trigger-reconciliation starts.
func missedInclusionDates(s *Snapshot) ([]Finding, error) {
	c := inclusionMissed
	ix := newRunIndex(s)
	sensors := s.sensorsByPipeline()
	missed := s.markersOf(c.marker)
	var out []Finding
	for _, wp := range s.watchedList() {
		p := wp.P
		inc := p.Schedule.Include
		if inc == nil || wp.Paused {
			continue
		}
		loc := p.Schedule.Location
		pend := s.pendingTriggers(wp, sensors[p.ID])
		oldest := s.Now.Add(-Lookback)
		today := schedule.DateOf(s.Now, loc)
		for d := schedule.DateOf(oldest, loc).AddDays(-1); !d.After(today); d = d.AddDays(1) {
			if !inc.Days.Contains(d) {
				continue
			}
			per := schedule.Daily(d)
			expected := d.AddDays(1).Midnight(loc)
			if t := p.Schedule.Time; t != nil {
				expected = t.On(d, loc)
			}
			key := keyOf(p, per)
			if expected.Before(oldest) || expected.Before(wp.FirstLoadedAt) || s.Now.Before(expected.Add(Grace)) ||
				run.Excluded(p, per) || ix.handled(key, per) || pendingOn(pend, per) ||
				s.hasMarker(key, c.marker) {
				continue
			}
			hint := fmt.Sprintf("inclusion date %s expected to have a run — none found; check upstream data", d)
			if t := p.Schedule.Trigger; t != nil {
				hint = fmt.Sprintf("inclusion date %s expected to have a run — none found; check that the trigger sensor %s arrived", d, t.Rule.Key)
			}
			out = append(out, c.finding(key, d.String(), expected, loc, hint, "date", d.String()))
		}
		out = append(out, c.recoveries(s, ix, missed[p.ID])...)
	}
	sortFindings(out)
	return out, nil
}

// missedCheck is one of the two missed-period checks: cron periods
// (missedSchedules) and inclusion dates (missedInclusionDates) each judge
// a pipeline's periods against an expected time, report a missed one
// once (its marker) and then its late run (recoveries).
type missedCheck struct {
	check  string // CheckMissedSchedules, CheckMissedInclusionDates
	what   string // what was missed, in the message
	kind   string // the recovery's detail "kind"
	event  event.Type
	marker string
}

var (
	cronMissed      = missedCheck{check: CheckMissedSchedules, what: "schedule", kind: "cron", event: event.ScheduleMissed, marker: run.MarkerScheduleMissed}
	inclusionMissed = missedCheck{check: CheckMissedInclusionDates, what: "inclusion date", kind: "inclusion", event: event.IrregularScheduleMissed, marker: run.MarkerIrregularMissed}
)

// finding reports the period key (per, as the message names it) missed:
// no run by expected, in the schedule's zone loc. kv are the check's own
// detail fields.
func (c missedCheck) finding(key run.Key, per string, expected time.Time, loc *time.Location, hint string, kv ...any) Finding {
	return Finding{
		Check:   c.check,
		Key:     key,
		Event:   c.event,
		Message: fmt.Sprintf("missed %s for %s: no run for %s by %s", c.what, key.PipelineID, per, local(expected, loc)),
		Detail:  detail(append(kv, "timezone", loc.String(), "expectedTime", expected, "actionHint", hint)...),
		Marker:  c.marker,
	}
}

// recoveries reports SCHEDULE_RECOVERED, once, for each missed-period
// marker whose period now has a run. A run that only closed the period
// at its trigger deadline is no recovery.
func (c missedCheck) recoveries(s *Snapshot, ix runIndex, missed []record.Marker) []Finding {
	var out []Finding
	for _, m := range missed {
		if s.hasMarker(m.Key, run.MarkerRecovered) {
			continue
		}
		per, err := schedule.ParsePeriod(m.Key.Period)
		if err != nil {
			continue
		}
		r, ok := ix.find(m.Key, per)
		if !ok || (r.State == run.FailedFinal && r.Outcome == run.OutcomeDeadlineExpired) {
			continue
		}
		out = append(out, Finding{
			Check:   c.check,
			Key:     m.Key,
			Event:   event.ScheduleRecovered,
			Message: fmt.Sprintf("the run for %s showed up after it was reported missed (%s)", per, r.State),
			Detail: detail(
				"kind", c.kind,
				"missedAt", m.At,
				"runPeriod", r.Period,
				"runState", string(r.State),
				"runCause", string(r.Cause),
				"runCreatedAt", r.CreatedAt,
				"actionHint", "no action needed: the period has its run",
			),
			Marker: run.MarkerRecovered,
		})
	}
	return out
}
