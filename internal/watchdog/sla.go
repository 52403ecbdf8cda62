package watchdog

import (
	"fmt"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sla"
)

// maxSLAWalk bounds the walk back over periods in sla-scheduling
// (Lookback holds 48 hourly periods).
const maxSLAWalk = 64

// slaScheduling finds periods whose absolute SLA breach timer is missing
// and asks the runtime to arm it (ActionArmSLA, a silent finding: no
// event, no marker; arming is idempotent). Paused pipelines are included:
// SLA alerts continue during a pause.
//
// It looks at the current period and walks back over earlier ones while
// their breach is still ahead (an ":MM" deadline of the previous hour, a
// "+1d HH:MM" deadline of yesterday), within Lookback — also periods
// that started before the pipeline was first loaded, whose breach is
// still ahead: the engine arms those at load too (sla.TimersToArm),
// and a breach time after the load is the pipeline's to report — unless
// Interlock could not start the period (sla.CouldStartAfter) and it has
// no run. A period is skipped when the SLA does not apply to it
// (excluded, off the inclusion calendar), its run is terminal, or it had
// its verdict or breach already.
func slaScheduling(s *Snapshot) ([]Finding, error) {
	oldest := s.Now.Add(-Lookback)
	var out []Finding
	for _, wp := range s.watchedList() {
		p := wp.P
		if p.SLA == nil || p.SLA.Deadline.IsZero() {
			continue
		}
		loc := p.Schedule.Location
		cur := run.CurrentPeriod(p, s.Now)
		for per, i := cur, 0; i < maxSLAWalk; per, i = prevPeriod(per), i+1 {
			start := per.Start(loc)
			if i > 0 && start.Before(oldest) {
				break
			}
			t, ok, err := sla.ResolveAbsolute(p, per)
			if err != nil || !ok || !s.Now.Before(t.Breach) {
				break // earlier periods' breaches are earlier still
			}
			if !sla.Applies(p, per) {
				continue
			}
			key := keyOf(p, per)
			r, hasRun := s.Runs[key]
			if hasRun && r.State.Terminal() {
				continue
			}
			// A period Interlock could not start itself (a cron tick
			// before the first load) is held only once it has a run.
			if !hasRun && !sla.CouldStartAfter(p, per, wp.FirstLoadedAt) {
				continue
			}
			if s.hasMarker(key, run.MarkerSLAVerdict) || s.hasMarker(key, run.MarkerSLABreach) || s.BreachTimers[key] {
				continue
			}
			out = append(out, Finding{
				Check:   CheckSLAScheduling,
				Key:     key,
				Message: fmt.Sprintf("SLA timers of %s were missing (breach %s); arming them", per, local(t.Breach, p.SLA.Location)),
				Detail: detail(
					"deadline", t.Deadline,
					"breachAt", t.Breach,
					"timer", SLABreachTimerKey(key),
				),
				Action: ActionArmSLA,
			})
		}
	}
	sortFindings(out)
	return out, nil
}

// relativeSLA is the defense in depth behind the engine's relative SLA
// timers: for each first trigger-sensor arrival of a pipeline with
// sla.maxDuration, once arrival + maxDuration has passed and the period
// is not done → RELATIVE_SLA_BREACH, once per period (shared marker with
// the engine's own alert). A terminal run suppresses it (a completed run
// had its verdict; a failed one's failure event carries the news), as
// does an SLA verdict given before a rerun reopened the period. Paused
// pipelines are included.
func relativeSLA(s *Snapshot) ([]Finding, error) {
	firsts := s.markersOf(run.MarkerFirstArrival)
	var out []Finding
	for _, wp := range s.watchedList() {
		p := wp.P
		if p.SLA == nil || p.SLA.MaxDuration <= 0 {
			continue
		}
		for _, m := range firsts[p.ID] {
			key := m.Key
			per, err := schedule.ParsePeriod(key.Period)
			if err != nil || !sla.Applies(p, per) {
				continue
			}
			t, ok := sla.ResolveRelative(p, m.At)
			if !ok || s.Now.Before(t.Breach) || t.Breach.Before(wp.FirstLoadedAt) {
				continue
			}
			if bf, ok := s.Markers[MarkerKey{Key: key, Kind: run.MarkerBackfill}]; ok && sla.BackfillExempt(t.Breach, bf.At) {
				continue // a backfill requested after this breach started the period
			}
			var existing *run.Run
			if r, ok := s.Runs[key]; ok {
				if r.State.Terminal() {
					continue
				}
				existing = &r
			}
			if s.hasMarker(key, run.MarkerRelBreach) || s.hasMarker(key, run.MarkerSLAVerdict) {
				continue
			}
			status, hint := sla.Status(existing)
			out = append(out, Finding{
				Check: CheckRelativeSLA,
				Key:   key,
				Event: event.RelativeSLABreach,
				Message: fmt.Sprintf("relative SLA of %s passed for %s: first trigger data at %s, not done by %s; period is %s",
					p.SLA.MaxDuration, per, local(m.At, p.Schedule.Location), local(t.Breach, p.Schedule.Location), status),
				Detail: detail(
					"maxDuration", p.SLA.MaxDuration,
					"sensorArrivalAt", m.At,
					"breachAt", t.Breach,
					"status", status,
					"actionHint", hint,
				),
				Marker: run.MarkerRelBreach,
			})
		}
	}
	sortFindings(out)
	return out, nil
}
