package watchdog

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/run"
)

func TestPlanRefresh(t *testing.T) {
	now := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	lookback := now.Add(-Lookback)
	cases := []struct {
		name     string
		kept     bool
		loadedAt time.Time
		passes   int
		full     bool
		since    time.Time
		sensors  time.Time
	}{
		{"nothing kept: full", false, time.Time{}, 0, true, time.Time{}, lookback},
		{"incremental", true, now.Add(-5 * time.Minute), 3, false, now.Add(-6 * time.Minute), now.Add(-6 * time.Minute)},
		{"the last incremental pass before a full one", true, now.Add(-5 * time.Minute), FullReloadEvery - 1, false, now.Add(-6 * time.Minute), now.Add(-6 * time.Minute)},
		{"every FullReloadEvery passes: full", true, now.Add(-5 * time.Minute), FullReloadEvery, true, time.Time{}, lookback},
		{"the clock went back: full", true, now.Add(time.Second), 1, true, time.Time{}, lookback},
		{"a pass long ago: sensors from the lookback", true, now.Add(-72 * time.Hour), 1, false, now.Add(-72*time.Hour - RefreshOverlap), lookback},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := PlanRefresh(c.kept, c.loadedAt, c.passes, now)
			if r.Full != c.full || !r.Since.Equal(c.since) || !r.SensorsSince.Equal(c.sensors) || !r.SensorsFrom.Equal(lookback) || r.PeriodFrom != "2026-03-07" {
				t.Fatalf("PlanRefresh = %+v", r)
			}
		})
	}
}

func TestDegraded(t *testing.T) {
	failing := Result{Failed: []string{CheckStaleRuns, CheckSLAScheduling}}
	cases := []struct {
		name   string
		res    Result
		prev   string
		raise  bool
		clear  bool
		failed string
	}{
		{"healthy, was healthy", Result{}, "", false, false, ""},
		{"first failure: raised", failing, "", true, false, "stale-runs, sla-scheduling"},
		{"the same failure again: not raised", failing, "stale-runs, sla-scheduling", false, false, "stale-runs, sla-scheduling"},
		{"another set of failures: raised", failing, "stale-runs", true, false, "stale-runs, sla-scheduling"},
		{"recovered: cleared", Result{}, "stale-runs", false, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Degraded(c.res, c.prev)
			if d.Raise != c.raise || d.Clear != c.clear || d.Failed != c.failed {
				t.Fatalf("Degraded = %+v", d)
			}
			if d.Raise && d.Message != "watchdog checks failed: stale-runs, sla-scheduling" {
				t.Fatalf("message %q", d.Message)
			}
		})
	}
}

func TestStillApplies(t *testing.T) {
	seen := run.Run{Version: 3, State: run.Running}
	moved := run.Run{Version: 4, State: run.Running}
	ended := run.Run{Version: 3, State: run.FailedFinal}
	cases := []struct {
		name string
		f    Finding
		cur  *run.Run
		want bool
	}{
		{"time out the run seen", Finding{Action: ActionFailRun, Run: &seen}, &seen, true},
		{"the run moved since", Finding{Action: ActionFailRun, Run: &seen}, &moved, false},
		{"the run ended (same version)", Finding{Action: ActionFailRun, Run: &seen}, &ended, false},
		{"the run is gone", Finding{Action: ActionFailRun, Run: &seen}, nil, false},
		{"no run in the finding", Finding{Action: ActionFailRun}, &seen, false},
		{"close a period without a run", Finding{Action: ActionClosePeriod}, nil, true},
		{"a run showed up", Finding{Action: ActionClosePeriod}, &seen, false},
		{"an alert only", Finding{}, &seen, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.f.StillApplies(c.cur); got != c.want {
				t.Fatalf("StillApplies = %v, want %v", got, c.want)
			}
		})
	}
}

// A pipeline keeps its pause windows for pause.WindowRetention: every
// window a pass can need (ticks within Lookback) must still be kept.
func TestPauseWindowsOutliveTheLookback(t *testing.T) {
	if Lookback+24*time.Hour > pause.WindowRetention {
		t.Fatalf("pause windows are kept %s, less than the lookback %s and a day", pause.WindowRetention, Lookback)
	}
}
