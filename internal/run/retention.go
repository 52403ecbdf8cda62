package run

import (
	"time"

	"github.com/interlockhq/interlock/internal/schedule"
)

// RetentionCutoff is what retention expires at now (store.ExpireParams):
// events older than retention (before), and the records of periods whose
// date sorts before periodBefore. A period is named in its pipeline's zone
// and the date D ends at the latest at D+1 12:00 UTC (UTC-12), so
// periodBefore is the UTC date of before less 12 hours: every period it
// expires ended at least retention ago, in any zone, and none is kept
// more than two days longer than retention.
func RetentionCutoff(now time.Time, retention time.Duration) (periodBefore string, before time.Time) {
	before = now.Add(-retention)
	return schedule.DateOf(before.Add(-12*time.Hour), time.UTC).String(), before
}
