// Package watchdog finds what did not happen: runs that outlived their
// time-to-live or got stuck, cron periods and inclusion dates with no run,
// trigger data that started nothing, SLA timers that are missing, trigger
// deadlines that passed, post-run sensors that never came, relative SLAs
// that ran out.
//
// Every check is a pure function from a Snapshot (configs, runs, markers,
// recent sensors, now) to Findings, run in a fixed order; an error in one
// check never stops the others. The package reads no clock and no store:
// a runtime builds the Snapshot and applies the Findings — each with its
// dedup marker in the same commit, so an alert is raised once per
// (pipeline, schedule, period, kind) and never again after a restart.
package watchdog

import (
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store/record"
)

// DefaultStuckRunThreshold is watchdog.stuckRunThreshold's default.
const DefaultStuckRunThreshold = 30 * time.Minute

// Lookback bounds how far back the checks look for missed periods: a
// watchdog that was down for a day still reports the periods it missed,
// and the snapshot stays proportional to pipelines and recent activity.
const Lookback = 48 * time.Hour

// Pipeline is a pipeline as the watchdog sees it.
type Pipeline struct {
	P             *pipeline.Pipeline
	Paused        bool
	FirstLoadedAt time.Time // forward-only: nothing before this is reported
	// Pauses are the pipeline's pauses that ended lately (its row's
	// PauseWindows, kept by each resume). A cron tick inside one started
	// nothing on purpose, so missed-schedules does not report it. Left
	// empty, ticks that fell in an earlier pause (other than the one
	// Resume starts) are reported as missed.
	Pauses []pause.Window
	// WatchChangedAt is the row's (store.Pipeline.WatchChangedAt): when
	// a config load last changed which sensors the checks read of it.
	WatchChangedAt time.Time
}

// MarkerKey identifies a marker.
type MarkerKey struct {
	Key  run.Key
	Kind string
}

// Snapshot is everything the checks read. Runtimes fill it from their
// store (bulk reads bounded by Lookback); tests build it by hand.
type Snapshot struct {
	Now               time.Time
	StuckRunThreshold time.Duration // default for job.stuckAfter
	// Rules tunes trigger-condition evaluation (rules.maxClockSkew), as
	// the engine evaluates it.
	Rules rule.Options

	Pipelines []Pipeline // every loaded pipeline

	// ActiveRuns are all non-terminal runs.
	ActiveRuns []run.Run
	// Runs are the runs of every period that started within Lookback
	// (terminal or not), by key.
	Runs map[run.Key]run.Run
	// Markers are the markers of periods within Lookback, by key and kind
	// (dedup markers, first trigger-sensor arrivals, SLA verdicts).
	Markers map[MarkerKey]record.Marker
	// BreachTimers are the periods whose absolute SLA breach timer
	// (run.TimerSLABreach) is set.
	BreachTimers map[run.Key]bool
	// Sensors are the sensors whose content changed within Lookback.
	Sensors []record.Sensor

	// Unavailable names data the runtime could not load; checks that
	// need it fail (WATCHDOG_DEGRADED) instead of reporting on a partial
	// picture. An entry is one of the Data* names, optionally followed by
	// ": " and the cause ("runs: connection refused").
	Unavailable []string

	// idx is what a pass derives once for its checks (runChecks).
	idx *passIndex
	// kept is what Kept derived of the data it filled in (its markers of
	// groupedKinds grouped, its sensors grouped), kept between passes in
	// step with that data: a pass starts its index from it instead of
	// walking the data again. Nil in a snapshot built by hand.
	kept *keptIndex
}

// Action is what the runtime must do besides recording a finding.
type Action string

// Actions.
const (
	ActionNone        Action = ""
	ActionFailRun     Action = "fail-run"     // the run timed out: set FAILED_FINAL (SFN_TIMEOUT)
	ActionStartRun    Action = "start-run"    // start the period's run (TRIGGER_RECOVERED)
	ActionClosePeriod Action = "close-period" // close the period: a FAILED_FINAL run (SENSOR_DEADLINE_EXPIRED)
	ActionArmSLA      Action = "arm-sla"      // set the period's missing SLA timers (no event)
)

// Finding is one thing a check found.
type Finding struct {
	Check   string
	Key     run.Key
	Event   event.Type // "" for silent repairs
	Message string
	Detail  sensor.Object
	// Marker is the dedup marker written with the event, in the same
	// commit, only if absent: a finding whose marker exists is dropped.
	Marker string
	Action Action
	// Run is the run the finding is about (for ActionFailRun the runtime
	// compares its version, so a run that moved meanwhile is left alone).
	Run *run.Run
	// SensorKey names the sensor a TRIGGER_RECOVERED start is for.
	SensorKey string
}

// Check is one watchdog check.
type Check struct {
	Name string
	// Needs are the Data* names of the snapshot data the check reads; Run
	// fails when one of them is in Snapshot.Unavailable.
	Needs []string
	Run   func(s *Snapshot) ([]Finding, error)
}

// Result is the outcome of one pass.
type Result struct {
	Findings []Finding
	Failed   []string // names of the checks that failed
	// Err joins the failed checks' errors, each prefixed with the check's
	// name, for logs; nil when no check failed.
	Err error
}

// Degraded reports whether any check failed.
func (r Result) Degraded() bool { return len(r.Failed) > 0 }

// StillApplies reports whether a finding still applies to its period's run
// as the runtime reads it when it acts (cur; nil when the period has no
// run): a run is timed out only if it did not move since the snapshot (its
// version) and has not ended; a period is closed only while it has no
// run. The other actions do not depend on the run.
func (f Finding) StillApplies(cur *run.Run) bool {
	switch f.Action {
	case ActionFailRun:
		return cur != nil && f.Run != nil && cur.Version == f.Run.Version && !cur.State.Terminal()
	case ActionClosePeriod:
		return cur == nil
	}
	return true
}
