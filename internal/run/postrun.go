package run

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
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

// PostRunKeys are the post-run rule keys a baseline is captured for (none:
// the pipeline has no post-run rules, and no baseline).
func PostRunKeys(p *pipeline.Pipeline) []string {
	if p.PostRun == nil {
		return nil
	}
	keys := make([]string, 0, len(p.PostRun.Rules))
	for _, r := range p.PostRun.Rules {
		keys = append(keys, r.Key)
	}
	return keys
}

// Baseline is what a success (or a dry-run's would-be trigger) does with
// the post-run baseline.
type Baseline struct {
	// Sensors is the data of each post-run rule key that has a sensor
	// now; the drift check compares later writes with it. nil when none
	// has: the baseline of an earlier success is dropped rather than
	// compared with stale data (Drop).
	Sensors map[string]sensor.Object
	Drop    bool
	Note    Note // POST_RUN_BASELINE_CAPTURED, when Sensors is set
}

// CaptureBaseline decides the baseline of a period from its sensors as
// rules see them (keys: PostRunKeys). The baseline of a success stays
// until the next success replaces it, so drift during a rerun is still
// reported (POST_RUN_DRIFT_INFLIGHT). ok is false when there are no keys:
// nothing to capture or drop.
func CaptureBaseline(keys []string, sensors map[string]sensor.Record) (b Baseline, ok bool) {
	if len(keys) == 0 {
		return Baseline{}, false
	}
	base := map[string]sensor.Object{}
	for _, k := range keys {
		if rec, ok := sensors[k]; ok {
			base[k] = rec.Data
		}
	}
	if len(base) == 0 {
		return Baseline{Drop: true}, true
	}
	captured := slices.Sorted(maps.Keys(base)) // a stable detail, not map order
	return Baseline{Sensors: base, Note: Note{Type: event.PostRunBaselineCaptured, Message: "post-run baseline captured", Detail: Detail("sensorKeys", strings.Join(captured, ", "))}}, true
}
