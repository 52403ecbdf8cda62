package run

import (
	"math"

	"github.com/interlockhq/interlock/internal/sensor"
)

// DriftResult compares a post-run sensor with its baseline.
type DriftResult struct {
	Previous, Current, Delta float64
	Drifted                  bool
	Comparable               bool // both values present and numeric
}

// Drift compares field of current against baseline: drifted iff
// |current − baseline| > threshold. Zero is a real value (5000 → 0 is a
// drift); a missing or non-numeric value on either side is no drift.
func Drift(baseline, current sensor.Object, field string, threshold float64) DriftResult {
	bv, ok1 := baseline.Get(field)
	cv, ok2 := current.Get(field)
	if !ok1 || !ok2 {
		return DriftResult{}
	}
	b, ok1 := bv.Numeric()
	c, ok2 := cv.Numeric()
	if !ok1 || !ok2 {
		return DriftResult{}
	}
	d := c - b
	return DriftResult{Previous: b, Current: c, Delta: d, Drifted: math.Abs(d) > threshold, Comparable: true}
}
