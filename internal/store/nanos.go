package store

import (
	"fmt"
	"math"
	"time"
)

// Every backend stores a time as int64 nanoseconds since the epoch, about
// the years 1678 to 2262: outside them UnixNano is undefined.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// StoredNanos is t as a stored time. A time outside the range is an error
// naming field: the write is refused rather than silently wrapped around.
func StoredNanos(field string, t time.Time) (int64, error) {
	if t.Before(minTime) || t.After(maxTime) {
		return 0, fmt.Errorf("%s %s is outside the storable range (years 1678 to 2262)", field, t.Format(time.RFC3339Nano))
	}
	return t.UnixNano(), nil
}

// QueryNanos is t as a query bound. Unlike a stored time it is clamped,
// not refused: "due before the year 3000" is a fair question whose answer
// is every timer.
func QueryNanos(t time.Time) int64 {
	switch {
	case t.Before(minTime):
		return math.MinInt64
	case t.After(maxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}
