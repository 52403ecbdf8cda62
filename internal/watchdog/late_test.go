package watchdog

import (
	"testing"
	"time"
)

func TestLate(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		last     time.Time
		interval time.Duration
		want     bool
	}{
		{"never passed", time.Time{}, 5 * time.Minute, true},
		{"disabled, never passed", time.Time{}, 0, false},
		{"passed a minute ago", now.Add(-time.Minute), 5 * time.Minute, false},
		{"exactly three intervals ago", now.Add(-15 * time.Minute), 5 * time.Minute, false},
		{"just over three intervals ago", now.Add(-15*time.Minute - time.Second), 5 * time.Minute, true},
		{"disabled, passed long ago", now.Add(-24 * time.Hour), 0, false},
	}
	for _, c := range cases {
		if got := Late(c.last, c.interval, now); got != c.want {
			t.Errorf("%s: Late = %v, want %v", c.name, got, c.want)
		}
	}
}
