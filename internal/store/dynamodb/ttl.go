package dynamodb

import (
	"time"

	"github.com/interlockhq/interlock/internal/run"
)

// Retention is the table's TTL (docs/architecture.md, "Reads scoped to the
// decision, and retention"): an item that may expire carries `ttl`, the
// Unix second from which DynamoDB may delete it, computed when the item is
// written:
//
//   - a record of a period (a terminal run, its ledger entries, baseline
//     and markers, a per-period sensor, a job report):
//     run.PeriodExpiry of its period and its own write (the run's
//     UpdatedAt, the sensor's WrittenAt, the entry's At, …) — the later of
//     the day after the period's date at 12:00 UTC (when the date has
//     ended in every zone) plus the retention, and the write plus the
//     retention. A write for a period older than retention (a replay, a
//     rerun, a backfill) so stays for retention after it, as Expire of a
//     deleting store keeps it;
//   - an event, a dead letter, a Slack thread, a sent or alerted record:
//     its time plus the retention, rounded up to the next whole second.
//
// Unlike Expire, which judges a period's date by its latest activity, a
// TTL is stamped per item: a write refreshes the ttl of the items it
// writes, not of the period's other items. A sensor written long after
// its period's run ended keeps the sensor, not the run (docs/aws.md,
// "Retention").
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

// timeExpiry is when a record of time t expires: the first whole second
// after t + retention (Expire deletes what is strictly before its cutoff).
func timeExpiry(t time.Time, retention time.Duration) int64 {
	return t.Add(retention).Unix() + 1
}

// setPeriodTTL stamps the ttl of a record of period written at
// written (zero when the write's instant is unknown: the period's date
// alone).
func (s *Store) setPeriodTTL(w *itemWriter, period string, written time.Time) {
	if at, ok := run.PeriodExpiry(period, written, s.retention); ok {
		w.num(attrTTL, at.Unix())
	}
}

func (s *Store) setTimeTTL(w *itemWriter, t time.Time) {
	if !t.IsZero() {
		w.num(attrTTL, timeExpiry(t, s.retention))
	}
}
