package store

import (
	"math"
	"strings"
	"testing"
	"time"
)

// A query bound past the storable range is clamped to its ends, so "due
// before the year 3000" finds every timer; a stored time there is refused.
func TestNanosAtTheEdgesOfTheRange(t *testing.T) {
	early, late := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	inside := time.Date(2026, 3, 14, 0, 0, 0, 1, time.UTC)
	for _, tc := range []struct {
		t    time.Time
		want int64
	}{{early, math.MinInt64}, {late, math.MaxInt64}, {inside, inside.UnixNano()}} {
		if got := QueryNanos(tc.t); got != tc.want {
			t.Errorf("QueryNanos(%s) = %d, want %d", tc.t, got, tc.want)
		}
	}
	for _, bad := range []time.Time{early, late} {
		if _, err := StoredNanos("run created at", bad); err == nil || !strings.Contains(err.Error(), "run created at") {
			t.Errorf("StoredNanos(%s): %v, want an error naming the field", bad, err)
		}
	}
	if n, err := StoredNanos("at", inside); err != nil || n != inside.UnixNano() {
		t.Errorf("StoredNanos(%s) = %d, %v", inside, n, err)
	}
}
