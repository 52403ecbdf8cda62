package run

import (
	"testing"
	"time"
)

func TestIsStep(t *testing.T) {
	for kind, want := range map[string]bool{"evaluate": true, "trigger": true, "poll": true, "sla-warning": false, "cron": false, "period": false, "resume": false, "": false} {
		if got := IsStep(kind); got != want {
			t.Errorf("IsStep(%q) = %v, want %v", kind, got, want)
		}
	}
}

func TestDecideFiring(t *testing.T) {
	due := time.Date(2099, 3, 7, 8, 0, 0, 0, time.UTC)
	sla := TimerAt{Kind: "sla-warning", At: due}
	cases := []struct {
		name     string
		t        TimerAt
		found    bool
		firedFor time.Time
		now      time.Time
		want     FiringVerdict
	}{
		{"due", sla, true, due, due, FiringTake},
		{"late", sla, true, due, due.Add(time.Hour), FiringTake},
		{"gone", sla, false, due, due, FiringStale},
		{"moved", TimerAt{Kind: "sla-warning", At: due.Add(time.Minute)}, true, due, due.Add(time.Hour), FiringStale},
		{"a run step", TimerAt{Kind: "poll", At: due}, true, due, due, FiringStale},
		{"early", sla, true, due, due.Add(-time.Second), FiringEarly},
	}
	for _, c := range cases {
		if got := DecideFiring(c.t, c.found, c.firedFor, c.now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSwept(t *testing.T) {
	now := time.Date(2099, 3, 7, 8, 0, 0, 0, time.UTC)
	grace := 5 * time.Minute
	cases := []struct {
		t    TimerAt
		want bool
	}{
		{TimerAt{Kind: "cron", At: now.Add(-6 * time.Minute)}, true},
		{TimerAt{Kind: "cron", At: now.Add(-5 * time.Minute)}, true},
		{TimerAt{Kind: "cron", At: now.Add(-time.Minute)}, false},
		{TimerAt{Kind: "trigger", At: now.Add(-time.Hour)}, false},
	}
	for _, c := range cases {
		if got := Swept(c.t, now, grace); got != c.want {
			t.Errorf("Swept(%+v) = %v, want %v", c.t, got, c.want)
		}
	}
}
