package watchdog

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// Check names. They are stable: they appear in WATCHDOG_DEGRADED.
const (
	CheckStaleRuns             = "stale-runs"
	CheckStuckRuns             = "stuck-runs"
	CheckMissedSchedules       = "missed-schedules"
	CheckMissedInclusionDates  = "missed-inclusion-dates"
	CheckTriggerReconciliation = "trigger-reconciliation"
	CheckSLAScheduling         = "sla-scheduling"
	CheckTriggerDeadlines      = "trigger-deadlines"
	CheckPostRunSensors        = "post-run-sensors"
	CheckRelativeSLA           = "relative-sla"
)

// Names of the snapshot data a check may need (Check.Needs). A runtime
// that cannot load one lists its name in Snapshot.Unavailable.
const (
	DataActiveRuns = "active runs" // Snapshot.ActiveRuns
	DataRuns       = "runs"        // Snapshot.Runs
	DataMarkers    = "markers"     // Snapshot.Markers
	DataTimers     = "timers"      // Snapshot.BreachTimers
	DataSensors    = "sensors"     // Snapshot.Sensors
	// DataPipelines (Snapshot.Pipelines) is needed by every check: a
	// check over no pipelines would find nothing and look healthy.
	DataPipelines = "pipelines"
)

// Checks returns every check in the order Pass runs them.
func Checks() []Check {
	return []Check{
		newCheck(CheckStaleRuns, staleRuns, DataActiveRuns),
		newCheck(CheckStuckRuns, stuckRuns, DataActiveRuns, DataMarkers),
		newCheck(CheckMissedSchedules, missedSchedules, DataRuns, DataMarkers),
		newCheck(CheckMissedInclusionDates, missedInclusionDates, DataRuns, DataMarkers, DataSensors),
		newCheck(CheckTriggerReconciliation, triggerReconciliation, DataRuns, DataMarkers, DataSensors),
		newCheck(CheckSLAScheduling, slaScheduling, DataRuns, DataMarkers, DataTimers),
		newCheck(CheckTriggerDeadlines, triggerDeadlines, DataRuns, DataMarkers, DataSensors),
		newCheck(CheckPostRunSensors, postRunSensors, DataRuns, DataMarkers, DataSensors),
		newCheck(CheckRelativeSLA, relativeSLA, DataRuns, DataMarkers),
	}
}

// newCheck wraps fn so that it fails when data it needs, or the
// pipelines, is unavailable.
func newCheck(name string, fn func(*Snapshot) ([]Finding, error), needs ...string) Check {
	needs = append([]string{DataPipelines}, needs...)
	return Check{Name: name, Needs: needs, Run: func(s *Snapshot) ([]Finding, error) {
		if err := s.need(needs...); err != nil {
			return nil, err
		}
		return fn(s)
	}}
}

// need fails when one of the named data is unavailable.
func (s *Snapshot) need(names ...string) error {
	var missing []string
	for _, n := range names {
		for _, u := range s.Unavailable {
			if u == n || strings.HasPrefix(u, n+":") {
				missing = append(missing, u)
				break
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("data unavailable: %s", strings.Join(missing, "; "))
	}
	return nil
}

// Pass runs every check in order. A check that returns an error or
// panics is listed in Result.Failed and its findings are dropped (they
// would describe a partial picture); the others still run.
func Pass(s *Snapshot) Result {
	return runChecks(s, Checks())
}

func runChecks(s *Snapshot, checks []Check) Result {
	var res Result
	var errs []error
	if s != nil {
		// The checks read a copy that carries the pass's index: the
		// caller's snapshot is not written to, and the next pass derives
		// its own.
		cp := *s
		cp.idx = &passIndex{}
		if x := s.kept; x != nil {
			// What Kept keeps grouped between passes. The kinds' map is
			// the pass's own: a kind no check groups is added to it only.
			cp.idx.grouped = maps.Clone(x.grouped)
			cp.idx.sensors = x.sensors
		}
		s = &cp
	}
	type outcome struct {
		fs  []Finding
		err error
	}
	out := make([]outcome, len(checks))
	// The checks only read the snapshot (what they derive from it is in
	// the index, under its lock), so they run at once on the machine's
	// cores, each taking the next check in order; the result is merged in
	// check order, as one-by-one runs would give it.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(checkWorkers(), len(checks)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(checks); i = int(next.Add(1) - 1) {
				out[i].fs, out[i].err = runOne(checks[i], s)
			}
		})
	}
	wg.Wait()
	for i, c := range checks {
		fs, err := out[i].fs, out[i].err
		if err != nil {
			res.Failed = append(res.Failed, c.Name)
			errs = append(errs, fmt.Errorf("%s: %w", c.Name, err))
			continue
		}
		for i := range fs {
			if fs[i].Check == "" {
				fs[i].Check = c.Name
			}
		}
		res.Findings = append(res.Findings, fs...)
	}
	res.Err = errors.Join(errs...)
	return res
}

// checkWorkers is how many checks of a pass run at once: one per core,
// and at least two.
func checkWorkers() int { return max(2, runtime.GOMAXPROCS(0)) }

// runOne runs a check, turning a panic into an error.
func runOne(c Check, s *Snapshot) (fs []Finding, err error) {
	defer func() {
		if r := recover(); r != nil {
			fs, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	if s == nil {
		return nil, errors.New("no snapshot")
	}
	return c.Run(s)
}

// DegradedMessage is the WATCHDOG_DEGRADED message for a pass ("watchdog
// checks failed: stale-runs, sla-scheduling"), or "" when no check
// failed.
func DegradedMessage(r Result) string {
	if len(r.Failed) == 0 {
		return ""
	}
	return "watchdog checks failed: " + strings.Join(r.Failed, ", ")
}
