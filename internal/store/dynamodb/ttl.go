package dynamodb

import (
	"time"

	"github.com/interlockhq/interlock/internal/schedule"
)

// Retention is the table's TTL (docs/architecture.md, "Reads scoped to the
// decision, and retention"): an item that may expire carries `ttl`, the
// Unix second from which DynamoDB may delete it, computed so that it
// expires exactly when Store.Expire of a deleting store would delete it
// at that instant (run.RetentionCutoff), to the second:
//
//   - a record of a period (a terminal run, its ledger entries, baseline
//     and markers, a per-period sensor, a job report, a rerun request):
//     the day after the period's date at 12:00 UTC — when the date has
//     ended in every zone — plus the retention;
//   - an event, a dead letter, a Slack thread, a sent or alerted record:
//     its time plus the retention, rounded up to the next whole second.
//
// What must stay carries none: pipelines, calendars, timers, plain sensor
// keys, pipeline-level markers, delivery cursors, the event shard
// counters, and a run while it is active (the write that ends it sets
// its ttl; a rerun's write removes it). The other records of a period
// with an active run or an armed timer do carry theirs: the retention is
// longer than any run lives and than every pipeline's history window
// (the settings refuse a shorter one), so they outlive the work that
// reads them.

// DefaultRetention is the retention when Config.Retention is 0.
const DefaultRetention = 90 * 24 * time.Hour

// periodExpiry is when the records of period expire, and false for a
// period that names no date (it never expires).
func periodExpiry(period string, retention time.Duration) (int64, bool) {
	if len(period) < len("2006-01-02") {
		return 0, false
	}
	p, err := schedule.ParsePeriod(period)
	if err != nil {
		return 0, false
	}
	d := p.Date.AddDays(1)
	end := time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC).Add(retention)
	return ceilSecond(end), true
}

// timeExpiry is when a record of time t expires: the first whole second
// after t + retention (Expire deletes what is strictly before its cutoff).
func timeExpiry(t time.Time, retention time.Duration) int64 {
	return t.Add(retention).Unix() + 1
}

func ceilSecond(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

func (s *Store) setPeriodTTL(w *itemWriter, period string) {
	if at, ok := periodExpiry(period, s.retention); ok {
		w.num(attrTTL, at)
	}
}

func (s *Store) setTimeTTL(w *itemWriter, t time.Time) {
	if !t.IsZero() {
		w.num(attrTTL, timeExpiry(t, s.retention))
	}
}
