package pipeline

import (
	"testing"
	"time"
)

func TestRunningAndRunningVersion(t *testing.T) {
	removed := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name        string
		exists      bool
		removedAt   time.Time
		wantRunning bool
		wantVersion int64
	}{
		{"a live row runs its version", true, time.Time{}, true, 7},
		{"a removed row runs none", true, removed, false, 0},
		{"no row: none runs", false, time.Time{}, true, 0},
	}
	for _, c := range cases {
		if got := Running(c.removedAt); got != c.wantRunning {
			t.Errorf("%s: Running = %v, want %v", c.name, got, c.wantRunning)
		}
		if got := RunningVersion(c.exists, c.removedAt, 7); got != c.wantVersion {
			t.Errorf("%s: RunningVersion = %d, want %d", c.name, got, c.wantVersion)
		}
	}
}

func TestCalendarResolves(t *testing.T) {
	removed := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		removedAt time.Time
		loading   bool
		want      bool
	}{
		{"a live calendar resolves a stored config", time.Time{}, false, true},
		{"a live calendar resolves a document being loaded", time.Time{}, true, true},
		{"a removed calendar still resolves a stored config", removed, false, true},
		{"a removed calendar does not resolve a document being loaded", removed, true, false},
	}
	for _, c := range cases {
		if got := CalendarResolves(c.removedAt, c.loading); got != c.want {
			t.Errorf("%s: CalendarResolves = %v, want %v", c.name, got, c.want)
		}
	}
}
