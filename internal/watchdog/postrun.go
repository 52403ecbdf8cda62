package watchdog

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store/record"
)

// defaultSensorTimeout is postRun.sensorTimeout's default, for hand-built
// configs that leave it zero.
const defaultSensorTimeout = 2 * time.Hour

// postRunSensors finds succeeded runs of pipelines with post-run rules
// whose post-run sensors never came: once now ≥ EndedAt +
// postRun.sensorTimeout, if the engine has not recorded a post-run sensor
// for the run's period after the run ended (run.MarkerPostRunArrived) →
// POST_RUN_SENSOR_MISSING, once per period (a rerun's later success is not
// re-reported). Daily and hourly periods alike. Paused pipelines are
// included: alerts continue during a pause.
func postRunSensors(s *Snapshot) ([]Finding, error) {
	idx := s.watched()
	// The runs to report, found before they are sorted: most succeeded
	// runs had their post-run sensor, and sorting every key of the
	// snapshot each pass cost more than the check.
	candidates := maps.Keys(s.Runs)
	if s.kept != nil {
		// Kept holds the runs whose own record and markers leave them
		// open (postRunOpen): the rest cannot be reported.
		candidates = maps.Keys(s.kept.postRunOpen)
	}
	var keys []run.Key
	for k := range candidates {
		if postRunMissing(s, idx[k.PipelineID], k, s.Runs[k]) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareKeys)
	var out []Finding
	for _, k := range keys {
		r := s.Runs[k]
		p := idx[k.PipelineID].P
		timeout := postRunTimeout(p)
		due := r.EndedAt.Add(timeout)
		ruleKeys := make([]string, 0, len(p.PostRun.Rules))
		for _, rl := range p.PostRun.Rules {
			if !slices.Contains(ruleKeys, rl.Key) {
				ruleKeys = append(ruleKeys, rl.Key)
			}
		}
		out = append(out, Finding{
			Check:   CheckPostRunSensors,
			Key:     k,
			Event:   event.PostRunSensorMissing,
			Message: fmt.Sprintf("post-run sensor for %s not received within %s of the job's success (%s)", k.Period, timeout, strings.Join(ruleKeys, ", ")),
			Detail: detail(
				"sensorTimeout", timeout,
				"ruleKeys", strings.Join(ruleKeys, ", "),
				"completedAt", r.EndedAt,
				"expectedBy", due,
				"actionHint", "the job succeeded but its post-run checks never reported — check the process that writes "+strings.Join(ruleKeys, ", "),
			),
			Marker: run.MarkerPostRunMissing,
		})
	}
	return out, nil
}

// postRunMissing reports whether the run r of key k, of the watched
// pipeline wp (nil: not watched), is a succeeded run whose post-run
// sensor is overdue and not reported yet.
func postRunMissing(s *Snapshot, wp *Pipeline, k run.Key, r run.Run) bool {
	if wp == nil || wp.P.PostRun == nil || len(wp.P.PostRun.Rules) == 0 {
		return false
	}
	due := r.EndedAt.Add(postRunTimeout(wp.P))
	if s.Now.Before(due) || due.Before(wp.FirstLoadedAt) {
		return false
	}
	return postRunOpen(s.Markers, k, r)
}

// postRunOpen is what postRunMissing asks of the run r of key k and its
// markers alone: r succeeded, and neither a post-run sensor's arrival
// after it ended nor the finding is recorded. (Kept keeps the runs it
// holds for which it is true, as they and their markers are merged.)
func postRunOpen(markers map[MarkerKey]record.Marker, k run.Key, r run.Run) bool {
	if r.State != run.Completed || r.Outcome != run.OutcomeSucceeded || r.EndedAt.IsZero() {
		return false
	}
	// The engine records, when it judges a post-run sensor of a
	// completed period, that one arrived. The record outlives the
	// sensor (which may be rewritten for the next period or age out
	// of the snapshot), so arrival is judged once, durably. It is looked
	// up first: most runs have one, and then one lookup answers.
	if m, ok := markers[MarkerKey{Key: k, Kind: run.MarkerPostRunArrived}]; ok && m.At.After(r.EndedAt) {
		return false
	}
	_, reported := markers[MarkerKey{Key: k, Kind: run.MarkerPostRunMissing}]
	return !reported
}

// postRunTimeout is how long after a success p's post-run sensor may
// take.
func postRunTimeout(p *pipeline.Pipeline) time.Duration {
	if t := p.PostRun.SensorTimeout; t > 0 {
		return t
	}
	return defaultSensorTimeout
}
