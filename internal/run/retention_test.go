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
