package run

import (
	"errors"
	"fmt"
	"strings"
)

// Timer keys. A durable timer is stored under a string key, unique per
// timer: the store's identity of the timer, and on AWS the source of its
// EventBridge Scheduler schedule's name. TimerKey is that key as a record
// — what the timer is for and what it is about — and this file is the one
// place a key is built (String) and read back (ParseTimerKey); no other
// code cuts or joins key strings. The format is the one stored since the
// first release, byte for byte: "<family>/<pipeline>/<schedule>/<period>"
// for a period's timers, "<family>/<pipeline>" for a pipeline's and
// "<family>/<name>" for a silence's or a maintenance window's.

// TimerFamily is what a timer is for: the first segment of its key. It
// is not the stored kind (store.Timer.Kind): a run's step timer keeps one
// key whichever step is due, and the relative SLA timers share the
// absolute ones' kinds.
type TimerFamily string

// Timer families, by what the rest of the key names.
const (
	// A period's timers: the rest is the run key.
	TimerStep          TimerFamily = "step"                 // a run's next step (kind: the Step)
	TimerSLAWarning    TimerFamily = "sla-warning"          // the absolute SLA's warning
	TimerSLABreach     TimerFamily = "sla-breach"           // the absolute SLA's breach (the watchdog checks it is set)
	TimerRelSLAWarning TimerFamily = "relative-sla-warning" // the relative SLA's warning (kind: sla-warning)
	TimerRelSLABreach  TimerFamily = "relative-sla-breach"  // the relative SLA's breach (kind: sla-breach)
	TimerDownstreams   TimerFamily = "downstreams"          // an upstream period succeeded: find the downstream periods it feeds
	TimerUpstream      TimerFamily = "upstream"             // re-evaluate (or open) one downstream period
	TimerRelease       TimerFamily = "root-release"         // a root's period succeeded: release the conditions it blocked
	// A pipeline's timers: the rest is the pipeline id.
	TimerCron     TimerFamily = "cron"     // the next cron tick
	TimerPeriod   TimerFamily = "period"   // a new period starts: arm its SLA timers
	TimerResume   TimerFamily = "resume"   // a timed pause ends
	TimerBackfill TimerFamily = "backfill" // the pipeline's backfill starts its next periods
	// Named timers: the rest is a name, verbatim.
	TimerSilenceEnd     TimerFamily = "silence-end"     // a silence ends (Name: its id)
	TimerMaintenanceEnd TimerFamily = "maintenance-end" // a maintenance window's occurrence ends (Name: the window's name)
)

// timerShape is what the rest of a family's key names.
type timerShape int

const (
	shapePeriod timerShape = iota + 1
	shapePipeline
	shapeName
)

var timerShapes = map[TimerFamily]timerShape{
	TimerStep: shapePeriod, TimerSLAWarning: shapePeriod, TimerSLABreach: shapePeriod,
	TimerRelSLAWarning: shapePeriod, TimerRelSLABreach: shapePeriod,
	TimerDownstreams: shapePeriod, TimerUpstream: shapePeriod, TimerRelease: shapePeriod,
	TimerCron: shapePipeline, TimerPeriod: shapePipeline, TimerResume: shapePipeline, TimerBackfill: shapePipeline,
	TimerSilenceEnd: shapeName, TimerMaintenanceEnd: shapeName,
}

// TimerFamilies lists every timer family.
func TimerFamilies() []TimerFamily {
	return []TimerFamily{TimerStep, TimerSLAWarning, TimerSLABreach, TimerRelSLAWarning, TimerRelSLABreach,
		TimerDownstreams, TimerUpstream, TimerRelease, TimerCron, TimerPeriod, TimerResume, TimerBackfill,
		TimerSilenceEnd, TimerMaintenanceEnd}
}

// TimerKey is a timer's key as a record.
type TimerKey struct {
	Family TimerFamily
	// Run is the period a period's timer concerns; a pipeline's timer
	// sets PipelineID alone; a named timer leaves it zero.
	Run Key
	// Name is a named timer's silence id or window name.
	Name string
}

// PeriodTimer is the key of a period's timer of family f (TimerStep,
// the SLA families, TimerDownstreams, TimerUpstream, TimerRelease).
func PeriodTimer(f TimerFamily, k Key) TimerKey { return TimerKey{Family: f, Run: k} }

// PipelineTimer is the key of a pipeline's timer of family f (TimerCron,
// TimerPeriod, TimerResume, TimerBackfill).
func PipelineTimer(f TimerFamily, pipelineID string) TimerKey {
	return TimerKey{Family: f, Run: Key{PipelineID: pipelineID}}
}

// SilenceEndTimer is the key of silence id's end timer.
func SilenceEndTimer(id string) TimerKey { return TimerKey{Family: TimerSilenceEnd, Name: id} }

// MaintenanceEndTimer is the key of the end timer of window name's
// occurrences.
func MaintenanceEndTimer(name string) TimerKey {
	return TimerKey{Family: TimerMaintenanceEnd, Name: name}
}

// String is the key as stored.
func (k TimerKey) String() string {
	switch timerShapes[k.Family] {
	case shapePeriod:
		return string(k.Family) + "/" + k.Run.PipelineID + "/" + k.Run.ScheduleID + "/" + k.Run.Period
	case shapePipeline:
		return string(k.Family) + "/" + k.Run.PipelineID
	}
	return string(k.Family) + "/" + k.Name
}

// ErrTimerKey is wrapped by ParseTimerKey's errors.
var ErrTimerKey = errors.New("not a timer key")

// ParseTimerKey reads a stored key back. A key it returns without error
// is one String gives back byte for byte. Pipeline ids and periods hold no
// '/' (pipeline.checkID, schedule.Period), so a period's key splits at its
// first and last '/': a schedule id keeps any it has; a name is taken
// verbatim.
func ParseTimerKey(s string) (TimerKey, error) {
	fam, rest, ok := strings.Cut(s, "/")
	shape := timerShapes[TimerFamily(fam)]
	if !ok || shape == 0 {
		return TimerKey{}, fmt.Errorf("%w: %q has no known family", ErrTimerKey, s)
	}
	k := TimerKey{Family: TimerFamily(fam)}
	switch shape {
	case shapePeriod:
		pid, tail, ok1 := strings.Cut(rest, "/")
		i := strings.LastIndexByte(tail, '/')
		if !ok1 || i < 0 || pid == "" || i == len(tail)-1 {
			return TimerKey{}, fmt.Errorf("%w: %q: want %s/<pipeline>/<schedule>/<period>", ErrTimerKey, s, fam)
		}
		k.Run = Key{PipelineID: pid, ScheduleID: tail[:i], Period: tail[i+1:]}
	case shapePipeline:
		if rest == "" || strings.Contains(rest, "/") {
			return TimerKey{}, fmt.Errorf("%w: %q: want %s/<pipeline>", ErrTimerKey, s, fam)
		}
		k.Run = Key{PipelineID: rest}
	case shapeName:
		if rest == "" {
			return TimerKey{}, fmt.Errorf("%w: %q: want %s/<name>", ErrTimerKey, s, fam)
		}
		k.Name = rest
	}
	return k, nil
}
