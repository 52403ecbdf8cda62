package alert

import (
	"testing"
	"time"
)

// The wait after the n-th failure doubles from MinBackoff, is capped at
// MaxBackoff, and is jittered to between half and all of the step.
func TestBackoff(t *testing.T) {
	w := &worker{d: &Deliverer{o: Options{MinBackoff: time.Second, MaxBackoff: 5 * time.Minute}}}
	steps := []time.Duration{1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300}
	for i, step := range steps {
		n := i + 1
		step *= time.Second
		lo, hi := step, time.Duration(0)
		for range 2000 {
			d := w.backoff(n)
			if d < step/2 || d > step {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, step/2, step)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		if hi-lo < step/4 {
			t.Errorf("backoff(%d) ranged over [%v, %v]: no jitter", n, lo, hi)
		}
	}
	if d := w.backoff(1000); d > 5*time.Minute {
		t.Errorf("backoff(1000) = %v: the cap does not hold (overflow?)", d)
	}
}
