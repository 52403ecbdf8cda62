package watchdog

import (
	"fmt"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
)

// triggerReconciliation finds stored trigger data that started nothing
// (the engine was down, a write's commit was lost): a sensor that matches
// the trigger key and satisfies the trigger condition now, whose period
// is within Lookback, not excluded and has no run → TRIGGER_RECOVERED and
// ActionStartRun, once per period (the earliest such sensor names it).
// A sensor is left alone for Grace after it arrived: the engine starts
// the run in the same commit as the write.
func triggerReconciliation(s *Snapshot) ([]Finding, error) {
	ix := newRunIndex(s)
	sensors := s.sensorsByPipeline()
	oldest := s.Now.Add(-Lookback)
	var out []Finding
	for _, wp := range s.watchedList() {
		p := wp.P
		if p.Schedule.Trigger == nil || wp.Paused {
			continue
		}
		loc := p.Schedule.Location
		pend := s.pendingTriggers(wp, sensors[p.ID])
		periods := make([]string, 0, len(pend))
		for ps := range pend {
			periods = append(periods, ps)
		}
		slices.Sort(periods)
		for _, ps := range periods {
			pt := pend[ps]
			per := pt.period
			key := keyOf(p, per)
			if !per.End(loc).After(oldest) || per.Start(loc).After(s.Now) ||
				s.Now.Before(pt.sensor.ChangedAt.Add(Grace)) || run.Excluded(p, per) ||
				ix.handled(key, per) || s.hasMarker(key, run.MarkerTriggerRecovered) {
				continue
			}
			out = append(out, Finding{
				Check:   CheckTriggerReconciliation,
				Key:     key,
				Event:   event.TriggerRecovered,
				Message: fmt.Sprintf("trigger data for %s (sensor %s, received %s) started no run; starting it", per, pt.sensor.Key, local(pt.sensor.ChangedAt, loc)),
				Detail: detail(
					"sensorKey", pt.sensor.Key,
					"sensorChangedAt", pt.sensor.ChangedAt,
					"actionHint", "the watchdog started the run that this trigger data should have started — check Interlock's logs for why it did not",
				),
				Marker:    run.MarkerTriggerRecovered,
				Action:    ActionStartRun,
				SensorKey: pt.sensor.Key,
			})
		}
	}
	sortFindings(out)
	return out, nil
}

// triggerDeadlines closes recent periods whose schedule.trigger.deadline
// passed with no run (SENSOR_DEADLINE_EXPIRED, ActionClosePeriod: the
// runtime creates a FAILED_FINAL run, which is the dedup). The recent
// periods are the last 3 hours for ":MM" deadlines, else the periods
// whose deadline fell since the start of yesterday in the schedule's zone
// (today and yesterday for a same-day "HH:MM"). Not closed: a period that
// is excluded, off the inclusion calendar, whose deadline is before
// FirstLoadedAt, or that has trigger data waiting (trigger-reconciliation
// starts it).
func triggerDeadlines(s *Snapshot) ([]Finding, error) {
	ix := newRunIndex(s)
	sensors := s.sensorsByPipeline()
	var out []Finding
	for _, wp := range s.watchedList() {
		p := wp.P
		t := p.Schedule.Trigger
		if t == nil || t.Deadline.IsZero() || wp.Paused {
			continue
		}
		loc := p.Schedule.Location
		var pend map[string]pendingTrigger
		for _, per := range deadlinePeriods(p, s.Now) {
			start := per.Start(loc)
			dl, err := t.Deadline.Resolve(per, loc)
			if err != nil || start.After(s.Now) || s.Now.Before(dl) || dl.Before(start) || dl.Before(wp.FirstLoadedAt) ||
				run.Excluded(p, per) {
				continue
			}
			if inc := p.Schedule.Include; inc != nil && !inc.Days.Contains(per.Date) {
				continue
			}
			key := keyOf(p, per)
			if ix.handled(key, per) {
				continue
			}
			if pend == nil {
				pend = s.pendingTriggers(wp, sensors[p.ID])
			}
			if pendingOn(pend, per) {
				continue
			}
			out = append(out, Finding{
				Check:   CheckTriggerDeadlines,
				Key:     key,
				Event:   event.SensorDeadlineExpired,
				Message: fmt.Sprintf("trigger deadline %s for %s passed (%s) with no run; the period is closed", t.Deadline, per, local(dl, loc)),
				Detail: detail(
					"triggerDeadline", t.Deadline.String(),
					"deadlineAt", dl,
					"timezone", loc.String(),
					"sensorKey", t.Rule.Key,
					"actionHint", "auto-trigger window closed — request a rerun of the period to restart it",
				),
				Action: ActionClosePeriod,
			})
		}
	}
	sortFindings(out)
	return out, nil
}

// maxDeadlineWalk bounds the walk back over periods (a "+366d" deadline
// on hourly periods needs about 366×24 of them).
const maxDeadlineWalk = 24 * 370

// deadlinePeriods lists the recent periods trigger-deadlines judges,
// newest first (see triggerDeadlines).
func deadlinePeriods(p *pipeline.Pipeline, now time.Time) []schedule.Period {
	d := p.Schedule.Trigger.Deadline
	loc := p.Schedule.Location
	cur := run.CurrentPeriod(p, now)
	if d.HourlyOnly() {
		var out []schedule.Period
		for _, per := range []schedule.Period{cur, prevPeriod(cur), prevPeriod(prevPeriod(cur))} {
			if run.PeriodExists(p, per) { // the hour DST skipped has no deadline
				out = append(out, per)
			}
		}
		return out
	}
	since := schedule.DateOf(now, loc).AddDays(-1).Midnight(loc)
	var out []schedule.Period
	for per, i := cur, 0; i < maxDeadlineWalk; per, i = prevPeriod(per), i+1 {
		dl, err := d.Resolve(per, loc)
		if err != nil || dl.Before(since) {
			break // deadlines only get earlier going back
		}
		out = append(out, per)
	}
	return out
}
