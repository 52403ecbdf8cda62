package run

import (
	"testing"
	"time"
)

func TestRerunNeedsFreshData(t *testing.T) {
	cases := []struct {
		name     string
		existing *Run
		want     bool
	}{
		{"never ran", nil, false},
		{"succeeded: the circuit breaker asks", &Run{State: Completed}, true},
		{"failed: no success to guard", &Run{State: FailedFinal}, false},
		{"running", &Run{State: Running}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := (RerunInput{Existing: c.existing}).NeedsFreshData(); got != c.want {
				t.Fatalf("NeedsFreshData = %v, want %v", got, c.want)
			}
		})
	}
}

func TestFreshSince(t *testing.T) {
	r := Run{State: Completed, EndedAt: hm(9, 0)}
	cases := []struct {
		name string
		r    Run
		at   time.Time
		want bool
	}{
		{"written after the success", r, hm(9, 1), true},
		{"written at the success's instant", r, hm(9, 0), false},
		{"written before it", r, hm(8, 59), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FreshSince(c.r, c.at); got != c.want {
				t.Fatalf("FreshSince = %v, want %v", got, c.want)
			}
		})
	}
}

func TestEffectDropsSLATimers(t *testing.T) {
	cases := []struct {
		name string
		eff  Effect
		want bool
	}{
		{"succeeded", Effect{Succeeded: true}, true},
		{"ended without success", Effect{Ended: true}, true},
		{"goes on", Effect{Next: StepPoll}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.eff.DropsSLATimers(); got != c.want {
				t.Fatalf("DropsSLATimers = %v, want %v", got, c.want)
			}
		})
	}
}
