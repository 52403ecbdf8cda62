package run

import (
	"time"

	"github.com/interlockhq/interlock/internal/schedule"
)

// RetentionCutoff is what retention expires at now (store.ExpireParams):
// events older than retention (before), and the records of periods whose
// date sorts before periodBefore and whose last activity is before
// before (PeriodExpired). A period is named in its pipeline's zone and the
// date D ends at the latest at D+1 12:00 UTC (UTC-12), so periodBefore is
// the UTC date of before less 12 hours: every period it expires ended at
// least retention ago, in any zone, and none is kept more than two days
// longer than retention.
func RetentionCutoff(now time.Time, retention time.Duration) (periodBefore string, before time.Time) {
	before = now.Add(-retention)
	return schedule.DateOf(before.Add(-12*time.Hour), time.UTC).String(), before
}

// PeriodExpired is retention's rule for the records of a period (its runs,
// ledger, baseline, markers and per-period sensors), given the cutoffs of
// RetentionCutoff: they expire when both the period's date and its last
// activity — the latest write of any of them: a sensor written for the
// period, a run triggered, moved, rerun or backfilled — are older than
// retention. The date alone is not enough: a write for a period older than
// retention (a replay, a backfill, a rerun) is acknowledged and acted on,
// and deleting its records at the next sweep would lose that write and
// the run that locks the period, so new data would trigger it a second
// time as if it never ran. A zero cutoff expires nothing.
func PeriodExpired(period string, lastActivity time.Time, periodBefore string, before time.Time) bool {
	return period != "" && periodBefore != "" && !before.IsZero() &&
		period < periodBefore && lastActivity.Before(before)
}

// PeriodExpiry is the first whole second at which PeriodExpired holds, for
// every later instant too, of the cutoffs of RetentionCutoff(now,
// retention): a backend that expires records by a time-to-live (DynamoDB)
// stamps it on each record it writes, from the record's own write as its
// last activity. It is false for a period that names no date (it never
// expires).
func PeriodExpiry(period string, lastActivity time.Time, retention time.Duration) (time.Time, bool) {
	p, err := schedule.ParsePeriod(period)
	if err != nil {
		return time.Time{}, false
	}
	// The date D sorts before periodBefore from the instant the UTC date
	// of now-retention-12h is D+1: D+1 12:00 UTC plus retention.
	d := p.Date.AddDays(1)
	at := ceilSecond(time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC).Add(retention))
	if !lastActivity.IsZero() {
		// lastActivity < now-retention: strictly after lastActivity+retention.
		if a := time.Unix(lastActivity.Add(retention).Unix()+1, 0).UTC(); a.After(at) {
			at = a
		}
	}
	return at, true
}

// ceilSecond is t rounded up to a whole second, in UTC.
func ceilSecond(t time.Time) time.Time {
	s := t.Truncate(time.Second)
	if s.Before(t) {
		s = s.Add(time.Second)
	}
	return s.UTC()
}
