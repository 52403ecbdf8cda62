package watchdog

import (
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/schedule"
)

// What a runtime keeps between passes, and what it records after one, is
// decided here too: how a pass refreshes the snapshot it keeps
// (PlanRefresh, applied by Kept), and when WATCHDOG_DEGRADED is raised
// (Degraded).

const (
	// FullReloadEvery bounds the incremental refreshes between two full
	// reads of the lookback window, so any drift (a deleted sensor, a
	// write with a skewed clock) lasts a bounded number of passes.
	FullReloadEvery = 12
	// RefreshOverlap re-reads a little before the previous pass, so a
	// write stamped at the same instant, or by a replica whose clock is a
	// bit behind, is not missed.
	RefreshOverlap = time.Minute
)

// Refresh is how a pass at Now refreshes the snapshot kept between passes.
type Refresh struct {
	// Full: drop what is kept and read the lookback window whole.
	Full bool
	// Since is, for an incremental refresh, the earliest write time read
	// again (runs updated, markers written since); zero when Full.
	Since time.Time
	// PeriodFrom is the earliest period the snapshot holds: periods are
	// dates in each pipeline's zone, so the window starts a day before
	// the lookback in UTC, and every zone's periods within it are in.
	PeriodFrom string
	// SensorsFrom is the earliest sensor change the snapshot holds
	// (Lookback before now); SensorsSince the earliest the pass reads.
	SensorsFrom, SensorsSince time.Time
}

// PlanRefresh decides how a pass at now refreshes the snapshot: whole
// when nothing is kept (the first pass, or one after a pass that could not
// load everything), every FullReloadEvery incremental passes (passes:
// those since the last full one), or when the clock went back behind the
// last load (loadedAt); else only what changed since a little before the
// last load (RefreshOverlap).
func PlanRefresh(kept bool, loadedAt time.Time, passes int, now time.Time) Refresh {
	r := Refresh{
		PeriodFrom:  schedule.DateOf(now.Add(-Lookback-24*time.Hour), time.UTC).String(),
		SensorsFrom: now.Add(-Lookback),
	}
	r.Full = !kept || passes >= FullReloadEvery || now.Before(loadedAt)
	r.SensorsSince = r.SensorsFrom
	if !r.Full {
		r.Since = loadedAt.Add(-RefreshOverlap)
		if r.Since.After(r.SensorsSince) {
			r.SensorsSince = r.Since
		}
	}
	return r
}

// DegradedChange is what a pass records about WATCHDOG_DEGRADED.
type DegradedChange struct {
	// Failed is the failing checks, ", "-joined; "" when none failed.
	Failed string
	// Raise: raise WATCHDOG_DEGRADED (Message) and remember Failed.
	Raise   bool
	Message string
	// Clear: every check passed again; forget the failing set, so the
	// next failure is news.
	Clear bool
}

// Degraded decides WATCHDOG_DEGRADED for a pass's result, given the
// failing checks it was last raised for (prevFailed; "" when it was not,
// or the checks recovered since): raised once per distinct set of failing
// checks, not on every pass.
func Degraded(res Result, prevFailed string) DegradedChange {
	d := DegradedChange{Failed: strings.Join(res.Failed, ", ")}
	switch {
	case d.Failed != "" && d.Failed != prevFailed:
		d.Raise, d.Message = true, DegradedMessage(res)
	case d.Failed == "" && prevFailed != "":
		d.Clear = true
	}
	return d
}
