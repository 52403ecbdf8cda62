package run

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/schedule"
)

func TestRetentionCutoff(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		now          time.Time
		retention    time.Duration
		periodBefore string
	}{
		{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), 90 * day, "2026-03-02"},
		{time.Date(2026, 6, 1, 11, 59, 59, 0, time.UTC), 90 * day, "2026-03-02"},
		{time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), 90 * day, "2026-03-03"},
		{time.Date(2026, 6, 1, 12, 0, 0, 0, time.FixedZone("UTC+14", 14*3600)), 90 * day, "2026-03-02"},
	} {
		pb, before := RetentionCutoff(tc.now, tc.retention)
		if pb != tc.periodBefore || !before.Equal(tc.now.Add(-tc.retention)) {
			t.Errorf("RetentionCutoff(%v, %v) = %s, %v; want %s, %v", tc.now, tc.retention, pb, before, tc.periodBefore, tc.now.Add(-tc.retention))
		}
		// The last expired date (the day before periodBefore) ends, in
		// the zone where it ends latest, at periodBefore's midnight there:
		// not after the cutoff instant.
		first, err := schedule.ParseDate(pb)
		if err != nil {
			t.Fatal(err)
		}
		if end := first.Midnight(time.FixedZone("UTC-12", -12*3600)); end.After(before) {
			t.Errorf("period %s ends at %v in UTC-12, after the cutoff %v", first.AddDays(-1), end, before)
		}
	}
}

// TestPeriodExpiry: the time-to-live a record carries is exactly when the
// sweep's rule first expires it, and from then on for good; a period is
// kept while either its date or its last activity is within retention.
func TestPeriodExpiry(t *testing.T) {
	day := 24 * time.Hour
	ret := 90 * day
	expired := func(period string, activity, now time.Time) bool {
		pb, before := RetentionCutoff(now, ret)
		return PeriodExpired(period, activity, pb, before)
	}
	written := time.Date(2026, 6, 1, 8, 30, 0, 250_000_000, time.UTC)
	for _, tc := range []struct {
		period   string
		activity time.Time
		want     time.Time
	}{
		// Written on its day: the date decides (D+1 12:00 UTC + retention).
		{"2026-06-01", written, time.Date(2026, 8, 31, 12, 0, 0, 0, time.UTC)},
		{"2026-06-01T08", written, time.Date(2026, 8, 31, 12, 0, 0, 0, time.UTC)},
		// Replayed 120 days after its date: the write decides.
		{"2026-02-01", written, time.Date(2026, 8, 30, 8, 30, 1, 0, time.UTC)},
		{"2026-02-01T23", written.In(time.FixedZone("UTC+05:45", 5*3600+45*60)), time.Date(2026, 8, 30, 8, 30, 1, 0, time.UTC)},
		// A write on a whole second: strictly after it plus retention.
		{"2026-02-01", written.Truncate(time.Second), time.Date(2026, 8, 30, 8, 30, 1, 0, time.UTC)},
		// No activity known: the date alone.
		{"2026-02-01", time.Time{}, time.Date(2026, 5, 3, 12, 0, 0, 0, time.UTC)},
	} {
		at, ok := PeriodExpiry(tc.period, tc.activity, ret)
		if !ok || !at.Equal(tc.want) || at.Location() != time.UTC {
			t.Errorf("PeriodExpiry(%s, %v) = %v, %v; want %v", tc.period, tc.activity, at, ok, tc.want)
			continue
		}
		if !expired(tc.period, tc.activity, at) {
			t.Errorf("%s written %v: not expired at its expiry %v", tc.period, tc.activity, at)
		}
		if expired(tc.period, tc.activity, at.Add(-time.Second)) {
			t.Errorf("%s written %v: already expired a second before its expiry %v", tc.period, tc.activity, at)
		}
		for _, later := range []time.Duration{time.Nanosecond, time.Hour, 400 * day} {
			if !expired(tc.period, tc.activity, at.Add(later)) {
				t.Errorf("%s written %v: kept again %v after its expiry", tc.period, tc.activity, later)
			}
		}
	}
	for _, p := range []string{"", "k", "2026-13-01", "2026-01-01T24"} {
		if _, ok := PeriodExpiry(p, written, ret); ok {
			t.Errorf("PeriodExpiry(%q): a period naming no date expires", p)
		}
	}
	// Zero cutoffs expire nothing.
	if PeriodExpired("2026-01-01", time.Time{}, "", written) || PeriodExpired("2026-01-01", time.Time{}, "2026-06-01", time.Time{}) {
		t.Error("a zero cutoff expired a period")
	}
}
