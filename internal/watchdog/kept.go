package watchdog

import (
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store/record"
)

// Kept is the snapshot a runtime keeps between passes, so that a pass
// reads only the runs, markers and sensors written since the previous
// one (internal/engine's benchmarks on SQLite: a pass over 10,000
// pipelines ~170 ms against ~460 ms reading the window whole; over a
// flat history 141 records read a pass against 1,200). It
// saves reads, never answers a question on its own: every finding is
// committed on the condition that its dedup marker is still absent and
// its run unchanged (Finding.StillApplies), a full read every
// FullReloadEvery passes bounds any drift, and a pass that could not
// read everything drops it all, so the next one reads the window whole.
// How it is refreshed, merged and aged is decided here (Plan, Refresh):
// pure, given the reads and now. It is not safe for concurrent use: one
// pass at a time, and the Snapshot it fills shares its maps until the
// next Plan.
type Kept struct {
	loadedAt time.Time
	passes   int
	runs     map[run.Key]run.Run
	markers  map[MarkerKey]record.Marker
	sensors  map[[2]string]record.Sensor
	// sensorsKept: sensors holds the window's (a pass skips them when no
	// check reads them: ReadsSensors).
	sensorsKept bool
	// agedFrom is the Refresh.PeriodFrom runs and markers were last aged
	// to: nothing older is kept, so a pass whose window starts at the same
	// period (a day's passes) walks neither map to age it.
	agedFrom string
	// idx is what the checks derive of markers and sensors, kept in step
	// with them (Snapshot.kept): markers of groupedKinds grouped as they
	// are merged and aged; the sensors' sorted list and grouping rebuilt
	// only when a sensor changed or aged out (listed: sorted is valid).
	idx    keptIndex
	sorted []record.Sensor
	listed bool
}

// keptIndex is what Kept derives of the data it keeps for a pass's
// checks (passIndex's grouped and sensors). A pass's checks only read it,
// but for pending, which they fill under the pass index's lock.
type keptIndex struct {
	grouped map[string]map[string][]record.Marker
	sensors map[string][]record.Sensor
	// postRunOpen are the kept runs for which postRunOpen holds.
	postRunOpen map[run.Key]struct{}
	// sensorGen counts, by pipeline, the changes to its kept sensors
	// (written, rewritten, aged out); pending is each pipeline's pending
	// trigger data as last derived, with what it was derived from
	// (pendingTriggers reuses it while all of that is unchanged).
	sensorGen map[string]uint64
	pending   map[string]pendingMemo
}

// pendingMemo is a pipeline's pending trigger data (findPendingTriggers)
// and what it was derived from, but for now: kept only for a trigger
// condition whose verdict does not read it (rule.Rule.ReadsNow).
type pendingMemo struct {
	p           *pipeline.Pipeline
	firstLoaded time.Time
	rules       rule.Options
	gen         uint64
	pend        map[string]pendingTrigger
}

// Plan decides how the pass at now refreshes k (PlanRefresh): a full
// refresh empties k first.
func (k *Kept) Plan(now time.Time) Refresh {
	plan := PlanRefresh(k.runs != nil, k.loadedAt, k.passes, now)
	if plan.Full {
		// Sized as the window was: a full read refills about as much.
		k.runs, k.markers, k.sensors, k.passes = make(map[run.Key]run.Run, len(k.runs)), make(map[MarkerKey]record.Marker, len(k.markers)), make(map[[2]string]record.Sensor, len(k.sensors)), 0
		k.sensorsKept, k.agedFrom = false, ""
		k.idx.grouped = make(map[string]map[string][]record.Marker, len(groupedKinds))
		for _, kind := range groupedKinds {
			k.idx.grouped[kind] = map[string][]record.Marker{}
		}
		k.sorted, k.listed = nil, false
		k.idx.postRunOpen = map[run.Key]struct{}{}
		k.idx.sensorGen, k.idx.pending = map[string]uint64{}, map[string]pendingMemo{}
	} else {
		k.passes++
	}
	return plan
}

// SensorsKept reports whether k holds the window's sensors (for
// PlanSensorReads).
func (k *Kept) SensorsKept() bool { return k.sensorsKept }

// Read is what a pass read for its plan: each list with its read's error
// (the list is not used when it failed).
type Read struct {
	Runs       []run.Run
	RunsErr    error
	Markers    []record.Marker
	MarkersErr error
	// SensorsRead: the pass read sensors (PlanSensorReads); when not, k
	// forgets those it held.
	SensorsRead bool
	Sensors     []record.Sensor
	SensorsErr  error
}

// Refresh merges what the pass planned at now read into k and fills s's
// Runs, Markers and Sensors with what k then holds within the window
// (plan.PeriodFrom, plan.SensorsFrom; what has aged out is dropped), the
// sensors oldest change first. A read that failed merges nothing (the
// runtime names it in s.Unavailable, so the checks that need it fail).
// A pass with a read that failed, its own or another (s.Unavailable),
// still gets everything that was read — a check whose data is missing
// fails on its own, the others judge on what is there — and k is dropped
// after, so the next pass reads the window whole.
func (k *Kept) Refresh(plan Refresh, r Read, now time.Time, s *Snapshot) {
	// What was read before the window (an old period's run updated
	// lately) is not kept; what was kept is aged below when the window
	// moved.
	if r.RunsErr == nil {
		for _, x := range r.Runs {
			if x.Key.Period >= plan.PeriodFrom {
				k.runs[x.Key] = x
			}
		}
	}
	if r.MarkersErr == nil {
		for _, m := range r.Markers {
			if m.Key.Period >= plan.PeriodFrom {
				k.markers[MarkerKey{Key: m.Key, Kind: m.Kind}] = m
				k.group(m)
			}
		}
	}
	// Then, both merged, the runs whose post-run standing a merge may
	// have changed.
	if r.RunsErr == nil {
		for _, x := range r.Runs {
			k.judgePostRun(x.Key)
		}
	}
	if r.MarkersErr == nil {
		for _, m := range r.Markers {
			if m.Kind == run.MarkerPostRunArrived || m.Kind == run.MarkerPostRunMissing {
				k.judgePostRun(m.Key)
			}
		}
	}
	switch {
	case !r.SensorsRead:
		if len(k.sensors) > 0 {
			for _, x := range k.sensors {
				k.idx.sensorGen[x.PipelineID]++
			}
			k.sensors = map[[2]string]record.Sensor{}
		}
		k.sensorsKept, k.listed = false, false
	case r.SensorsErr != nil:
	default:
		for _, x := range r.Sensors {
			key := [2]string{x.PipelineID, x.Key}
			// A sensor read again unchanged (the overlap) leaves the
			// list as it was.
			if old, ok := k.sensors[key]; !ok || old.Version != x.Version || !old.ChangedAt.Equal(x.ChangedAt) || !old.WrittenAt.Equal(x.WrittenAt) {
				k.listed = false
				k.idx.sensorGen[x.PipelineID]++
			}
			k.sensors[key] = x
		}
		k.sensorsKept = true
	}

	// Leave out what has aged out of the window, once per window start.
	if plan.PeriodFrom != k.agedFrom {
		for key := range k.runs {
			if key.Period < plan.PeriodFrom {
				delete(k.runs, key)
			}
		}
		for key := range k.markers {
			if key.Key.Period < plan.PeriodFrom {
				delete(k.markers, key)
			}
		}
		for key := range k.idx.postRunOpen {
			if key.Period < plan.PeriodFrom {
				delete(k.idx.postRunOpen, key)
			}
		}
		for _, g := range k.idx.grouped {
			for id, ms := range g {
				if ms = slices.DeleteFunc(ms, func(m record.Marker) bool { return m.Key.Period < plan.PeriodFrom }); len(ms) > 0 {
					g[id] = ms
				} else {
					delete(g, id)
				}
			}
		}
		k.agedFrom = plan.PeriodFrom
	}
	s.Runs, s.Markers = k.runs, k.markers
	// The list is oldest change first: a sensor aged out only if the
	// first one did.
	if k.listed && len(k.sorted) > 0 && k.sorted[0].ChangedAt.Before(plan.SensorsFrom) {
		k.listed = false
	}
	if !k.listed {
		k.sorted = make([]record.Sensor, 0, len(k.sensors))
		for key, x := range k.sensors {
			if x.ChangedAt.Before(plan.SensorsFrom) {
				delete(k.sensors, key)
				k.idx.sensorGen[x.PipelineID]++
				continue
			}
			k.sorted = append(k.sorted, x)
		}
		slices.SortFunc(k.sorted, func(a, b record.Sensor) int {
			if c := a.ChangedAt.Compare(b.ChangedAt); c != 0 {
				return c
			}
			if c := strings.Compare(a.PipelineID, b.PipelineID); c != 0 {
				return c
			}
			return strings.Compare(a.Key, b.Key)
		})
		k.idx.sensors, k.listed = groupSensors(k.sorted), true
	}
	s.Sensors, s.kept = k.sorted, &k.idx
	if len(s.Unavailable) > 0 || r.RunsErr != nil || r.MarkersErr != nil || r.SensorsErr != nil {
		k.runs = nil // read everything next time
	} else {
		k.loadedAt = now
	}
}

// group puts m, kept, in k's grouped markers when its kind is one of
// groupedKinds: in its pipeline's list, sorted by key, replacing the
// marker of the same key (markersOf's order).
func (k *Kept) group(m record.Marker) {
	g, ok := k.idx.grouped[m.Kind]
	if !ok {
		return
	}
	ms := g[m.Key.PipelineID]
	i, found := slices.BinarySearchFunc(ms, m.Key, func(x record.Marker, key run.Key) int { return compareKeys(x.Key, key) })
	if found {
		ms[i] = m
		return
	}
	g[m.Key.PipelineID] = slices.Insert(ms, i, m)
}

// judgePostRun keeps the run of key in k.idx.postRunOpen when it is kept
// and postRunOpen holds for it, and drops it otherwise.
func (k *Kept) judgePostRun(key run.Key) {
	if r, ok := k.runs[key]; ok && postRunOpen(k.markers, key, r) {
		k.idx.postRunOpen[key] = struct{}{}
	} else {
		delete(k.idx.postRunOpen, key)
	}
}
